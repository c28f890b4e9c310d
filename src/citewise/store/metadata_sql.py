"""Metadata conditions (:class:`citewise.core.MetaCondition`) as SQL, one dialect per store.

Both stores keep, on every chunk row, the document's metadata terms (``meta_terms``, a list of
``key=value`` strings) and range values (``meta_ranges``, JSON ``{"n:key": number, "d:key":
"YYYY-MM-DD"}``), both from :mod:`citewise.metadata`, and the conditions become predicates on
them inside the store's query (LanceDB: ``array_has_any`` and ``json_get_float`` /
``json_get_string``; PostgreSQL: ``&&`` on ``text[]`` and ``->>`` on ``jsonb``), so a filtered
top-k is still full. Conditions on ``updated`` / ``effective`` compare the built-in date columns
(a document without the date never matches). The semantics are the same on both stores
(tests/test_store_conformance.py):

* ``eq``: the row's terms hold one of the condition's terms (:func:`citewise.metadata.eq_terms`);
* a range: the row's numeric (``n:``) or date (``d:``) value for the key compares true; a row
  without one (no such key, text, a list) does not match.
"""

from __future__ import annotations

from typing import Sequence

from citewise.core import MetaCondition
from citewise.metadata import DATE_COLUMNS, SQL_OPS, eq_dates, eq_terms, range_key, range_value

#: The columns the metadata lives in (a table written before they existed lacks them).
COLUMNS = ("metadata", "meta_terms", "meta_ranges")


def _lit(value: str | float) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def lance_predicates(conditions: Sequence[MetaCondition]) -> list[str]:
    """LanceDB (DataFusion) predicates, one per condition.

    >>> from citewise.metadata import parse_filter as p
    >>> lance_predicates([p("tags=a"), p("year>=2020"), p("updated<2025-01-01")])
    ["array_has_any(meta_terms, ['tags=a'])", "json_get_float(meta_ranges, 'n:year') >= 2020.0", "(updated <> '' AND updated < '2025-01-01')"]
    """
    out = []
    for c in conditions:
        if c.key in DATE_COLUMNS:
            if c.op == "eq":
                out.append(f"{c.key} IN ({', '.join(_lit(d) for d in eq_dates(c))})")
            else:
                out.append(f"({c.key} <> '' AND {c.key} {SQL_OPS[c.op]} {_lit(range_value(c))})")
        elif c.op == "eq":
            out.append(f"array_has_any(meta_terms, [{', '.join(_lit(t) for t in eq_terms(c))}])")
        else:
            v = range_value(c)
            if isinstance(v, float):
                out.append(f"json_get_float(meta_ranges, {_lit(range_key(c))}) {SQL_OPS[c.op]} {v!r}")
            else:
                out.append(f"json_get_string(meta_ranges, {_lit(range_key(c))}) {SQL_OPS[c.op]} {_lit(v)}")
    return out


def pg_predicates(conditions: Sequence[MetaCondition], alias: str = "c") -> tuple[list[str], list[object]]:
    """PostgreSQL predicates (``%s`` placeholders) and their parameters.

    >>> from citewise.metadata import parse_filter as p
    >>> pg_predicates([p("tags=a,b"), p("year>=2020")])
    (['c.meta_terms && %s::text[]', '(c.meta_ranges->>%s)::float8 >= %s'], [['tags=a', 'tags=b'], 'n:year', 2020.0])
    """
    a = alias + "."
    parts: list[str] = []
    params: list[object] = []
    for c in conditions:
        if c.key in DATE_COLUMNS:
            if c.op == "eq":
                parts.append(f"{a}{c.key} = ANY(%s::text[])")
                params.append(eq_dates(c))
            else:
                parts.append(f"({a}{c.key} <> '' AND {a}{c.key} {SQL_OPS[c.op]} %s)")
                params.append(range_value(c))
        elif c.op == "eq":
            parts.append(f"{a}meta_terms && %s::text[]")
            params.append(eq_terms(c))
        else:
            v = range_value(c)
            cast = "(" + a + "meta_ranges->>%s)::float8" if isinstance(v, float) else a + "meta_ranges->>%s"
            parts.append(f"{cast} {SQL_OPS[c.op]} %s")
            params += [range_key(c), v]
    return parts, params
