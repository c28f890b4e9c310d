"""Request options shared by the HTTP API and the MCP tools: the same retrievers, filters, scope
and evidence-gap options as ``citewise ask`` / ``citewise search``, parsed into
:class:`citewise.core.Filters` and :class:`citewise.api.AskOptions` for the one ask pipeline.

Options that name a file or an outside service on the server (``--requirements``,
``--reranker``, ``--db``) are the server operator's (its settings), not a caller's.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal, Sequence

from citewise.core import CitewiseError, Filters

#: Every retriever of :data:`citewise.retrieval.retrievers.RETRIEVERS`, as a JSON Schema enum.
RetrieverName = Literal[
    "shipped", "hybrid", "bm25", "dense", "hybrid-prf", "hierarchical", "tuned", "raptor-collapsed", "raptor-tree"
]
RETRIEVER_HELP = (
    "shipped (hybrid + identifier pinning, the default) | hybrid (RRF of BM25 and dense) | bm25 | "
    "dense | hybrid-prf | hierarchical | tuned | raptor-collapsed | raptor-tree (the last four need "
    "their model or tree built on the server: citewise tune / summarize)"
)
FILTERS_HELP = (
    "Metadata conditions, all of which must hold: key=value, key=a,b (any of), key>=value, key>value, "
    "key<=value, key<value with a number or a YYYY-MM-DD date (e.g. department=finance, "
    "date>=2025-01-01); 'updated' and 'effective' name the built-in dates."
)


def request_filters(
    as_of: str | dt.date | None, version: str | None, filters: Sequence[str] | None, where: str = "filters"
) -> Filters | None:
    """:class:`Filters` of a request (None when it has none).

    Raises:
        CitewiseError: a date that is not YYYY-MM-DD, an empty version, or a bad filter
            expression (the message names the field).
    """
    from citewise.metadata import parse_filters

    day = as_of
    if isinstance(as_of, str):
        try:
            day = dt.date.fromisoformat(as_of)
        except ValueError:
            raise CitewiseError(f"as_of: not a date: {as_of!r} (use YYYY-MM-DD)") from None
    if version is not None and not version.strip():
        raise CitewiseError("version: empty; give the version to find, or leave it out")
    metadata = parse_filters(filters, where)
    if day is None and version is None and not metadata:
        return None
    return Filters(as_of=day, version=version, metadata=metadata)


def ask_options(
    *,
    k: int | None,
    retriever: str | None,
    filters: Filters | None,
    scope: Sequence[str] | None = None,
    max_rounds: int | None = None,
    deadline_ms: float | None = None,
    budget_tokens: int | None = None,
    generator: str | None = None,
    database: str | None = None,
    agent: bool | None = None,
):
    """The :class:`citewise.api.AskOptions` of a request (None values: the server's settings)."""
    from citewise.api import AskOptions

    return AskOptions(
        k=k,
        retriever=retriever,
        filters=filters,
        generator=generator,
        scope=tuple(scope or ()),
        max_rounds=max_rounds,
        deadline_ms=deadline_ms,
        budget_tokens=budget_tokens,
        database=database,
        agent=agent,
    )


_OPENAI_OPS = {"eq": "=", "in": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def openai_condition(kind, key, value):
    """A :class:`~citewise.core.MetaCondition` from an OpenAI comparison filter on a metadata key
    (``{"type": "eq" | "in" | "gt" | "gte" | "lt" | "lte", "key", "value"}``).

    Raises:
        CitewiseError: another type, a key that cannot be filtered on, or a bad value.
    """
    from citewise.metadata import canonical, parse_filter

    if kind not in _OPENAI_OPS or not isinstance(key, str):
        raise CitewiseError(f"type {kind!r} on key {key!r} is not a metadata comparison")
    values = value if kind == "in" and isinstance(value, list) else [value]
    if not values or any(isinstance(v, (dict, list)) or v is None for v in values):
        raise CitewiseError("a value must be text, a number, a boolean or (for 'in') a list of those")
    return parse_filter(f"{key}{_OPENAI_OPS[kind]}{','.join(canonical(v) for v in values)}", "filters")
