"""A Haystack retriever component over a citewise index (extra ``haystack``).

>>> from haystack import Pipeline                                         # doctest: +SKIP
>>> from citewise.integrations.haystack import CitewiseRetriever          # doctest: +SKIP
>>> p = Pipeline()                                                        # doctest: +SKIP
>>> p.add_component("retriever", CitewiseRetriever(index="./my-index", top_k=4))  # doctest: +SKIP
>>> p.run({"retriever": {"query": "refund window", "groups": ["finance"]}})       # doctest: +SKIP

``run(query, top_k=None, filters=None, groups=None, principal=None)`` returns ``{"documents":
[Document]}``: ``content`` = chunk text, ``id`` = chunk id, ``score``, ``meta`` =
:func:`citewise.integrations.common.result_metadata`. Filters are citewise expressions or
Haystack filter dicts (``{"field": "meta.department", "operator": "==", "value": "finance"}``,
``==`` / ``in`` / ``>`` / ``>=`` / ``<`` / ``<=``, combined with ``AND``), applied inside the
store's query after the principal's permissions. The component serialises to a dict (index
folder, settings) and back, so a pipeline file names it. :func:`from_documents` turns Haystack
documents into citewise documents for :meth:`citewise.ingest.Ingestor.ingest_documents`.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

try:
    from haystack import Document as HDocument
    from haystack import component, default_from_dict, default_to_dict
except ImportError as e:  # the optional extra is not installed
    raise ImportError(
        f"citewise.integrations.haystack needs haystack-ai: pip install 'citewise[haystack]' ({e})"
    ) from None

from citewise.core import CitewiseError, Document, Filters, Principal
from citewise.integrations.common import make_filters, open_citewise, principal_of, result_metadata, to_document

_OPS = {"==": "=", "in": "=", ">": ">", ">=": ">=", "<": "<", "<=": "<="}


def haystack_filters(filters) -> Filters | None:
    """:class:`Filters` from a Haystack filter dict (see module docstring), citewise expressions,
    or None.

    Raises:
        CitewiseError: OR / NOT, another operator, or a bad value.
    """
    if not isinstance(filters, dict):
        return make_filters(filters)
    from citewise.metadata import canonical

    exprs: list[str] = []

    def walk(f: dict) -> None:
        op = f.get("operator")
        if "conditions" in f:
            if op != "AND":
                raise CitewiseError(f"filters: only AND is supported, not {op!r}")
            for c in f["conditions"]:
                walk(c)
            return
        if op not in _OPS:
            raise CitewiseError(f"filters: operator {op!r} is not supported (==, in, >, >=, <, <=)")
        field = str(f.get("field", ""))
        key = field[5:] if field.startswith("meta.") else field
        values = f.get("value") if isinstance(f.get("value"), list) else [f.get("value")]
        exprs.append(f"{key}{_OPS[op]}{','.join(canonical(v) for v in values)}")

    walk(filters)
    return make_filters(exprs)


@component
class CitewiseRetriever:
    """Haystack component: citewise search as a retriever (see module docstring).

    Args:
        index: the index folder (what the component serialises).
        top_k: documents per query; retriever: citewise retriever name (None: the setting).
        groups: the groups searched as (None: public documents only), unless ``run`` gives a
            principal or groups.
        filters: default filters (citewise expressions or a Haystack filter dict).
        citewise: an open :class:`citewise.api.Citewise` to use instead of opening ``index``.
    """

    def __init__(
        self,
        index: Optional[str] = None,
        top_k: int = 5,
        retriever: Optional[str] = None,
        groups: Optional[list[str]] = None,
        filters: Any = None,
        citewise=None,
    ):
        self.index, self.top_k, self.retriever, self.groups, self.filters = index, top_k, retriever, groups, filters
        self._cw = open_citewise(citewise, index)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self, index=self.index, top_k=self.top_k, retriever=self.retriever, groups=self.groups, filters=self.filters
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CitewiseRetriever":
        return default_from_dict(cls, data)

    @component.output_types(documents=list[HDocument])
    def run(
        self,
        query: str,
        top_k: Optional[int] = None,
        filters: Any = None,
        groups: Optional[list[str]] = None,
        principal: Optional[Principal] = None,
    ):
        """The top documents for ``query`` visible to the principal (``principal``, else
        ``groups``, else the component's groups)."""
        who = principal_of(principal, groups if groups is not None else self.groups)
        f = haystack_filters(filters if filters is not None else self.filters)
        results = self._cw.search(query, who, k=top_k or self.top_k, retriever=self.retriever, filters=f)
        return {
            "documents": [
                HDocument(id=r.chunk_id, content=r.text, score=r.score, meta=result_metadata(r)) for r in results
            ]
        }


def from_documents(docs: Iterable[HDocument]) -> list[Document]:
    """Haystack documents as citewise documents (:func:`citewise.integrations.common.to_document`;
    id from ``meta['file_path']`` / ``source``, else the Haystack id)."""
    out = []
    for d in docs:
        meta = dict(d.meta or {})
        if "source" not in meta and meta.get("file_path"):
            meta["source"] = meta.pop("file_path")
        out.append(to_document(d.content or "", meta if "source" in meta else {"id": d.id, **meta}))
    return out
