"""What a records database and its tools can answer, read once per process.

A :class:`RecordsCatalog` holds, for one database and tool set:

* the record tools (named query templates) with each one's *declared output*: the stems of its
  name, the part of its description before ``NOT for``, its parameters and its result columns,
  and which aggregates it returns (``count`` / ``sum`` / ``average`` / ``extreme``) of what,
  read from its SQL (``COUNT(...) AS orders``) and its description ("Number of orders");
* the values a question may name: each ``x-values`` parameter's values (queried once), the
  short text values of low-cardinality columns (a record state, a country: at most
  :data:`MAX_CATEGORIES` distinct values of 4 to 40 characters), the configured entity
  patterns (``[records.entities]``) and the tools' enum synonyms;
* the record nouns (stems of table and column names and of the tools' declared outputs), which
  make "this customer" a reference to a record.
"""

from __future__ import annotations

import re
import sqlite3
import urllib.parse
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from citewise.core import InputError
from citewise.tools.question import Cues, stem, stems_of, words
from citewise.tools.sql import SqlGuardError

#: A text column with at most this many distinct values is a category whose values a question
#: may name as a filter.
MAX_CATEGORIES = 30
#: ``x-values`` read at most this many values per parameter.
MAX_VALUES = 5000

_TOOL_NAMES_NOT_RECORDS = ("vector_search", "sql_query", "web_search")


@dataclass
class ToolProfile:
    """One record tool's declared output (module docstring)."""

    name: str
    vocabulary: set[str]
    aggregates: dict[str, set[str]]  # aggregate kind -> stems of what it counts / sums
    columns: list[str]
    identifiers: set[str]  # parameters that name one record
    values: dict[str, list[str]] = field(default_factory=dict)  # x-values parameter -> values


def positive_text(description: str) -> str:
    """A description up to its first ``NOT for`` (what the tool is for)."""
    return description.split("NOT for")[0].strip()


def _sql_outputs(sql: str) -> tuple[list[str], dict[str, set[str]]]:
    """Result column names of a template and the aggregates among them."""
    try:
        root = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.SqlglotError:
        return [], {}
    select = root if isinstance(root, exp.Select) else root.find(exp.Select)
    if select is None:
        return [], {}
    cols, aggs = [], {}
    kinds = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "average", exp.Max: "extreme", exp.Min: "extreme"}
    for e in select.expressions:
        name = e.alias_or_name
        cols.append(name)
        for cls, kind in kinds.items():
            if e.find(cls) is not None:
                aggs.setdefault(kind, set()).update(stems_of(name))
    return cols, aggs


def _declared(text: str, cues: Cues) -> dict[str, set[str]]:
    """Aggregates a description declares: the content word(s) after each ``declares`` phrase."""
    out: dict[str, set[str]] = {}
    low = text.lower()
    toks = words(low)
    for kind, phrases in cues.declares.items():
        for p in phrases:
            for m in re.finditer(r"(?<![\w-])" + re.escape(p) + r"(?![\w-])", low):
                after = [w for w, (s, _) in toks if s >= m.end() and w not in cues.stopwords][:2]
                if after:
                    out.setdefault(kind, set()).update(stem(w) for w in after)
    return out


class RecordsCatalog:
    """See the module docstring.

    Args:
        tools: the record tools (objects with ``name``, ``description``, ``parameters``, and
            optionally ``sql``, ``db``, ``policy``, ``synonyms``); ``vector_search``,
            ``sql_query`` and ``web_search`` are skipped.
        cues: the question cues (for declared aggregates and stop words).
        db: the :class:`~citewise.tools.sql.SqliteDatabase` (None: no values, no schema words).
        entities: parameter name -> regular expression (``[records.entities]``).

    Raises:
        InputError: an entity pattern is not a valid regular expression, or an ``x-values``
            query is refused by the SQL guard (the tool and parameter named).
    """

    def __init__(self, tools, cues: Cues, db=None, entities: dict[str, str] | None = None):
        self.tools = [t for t in tools if t.name not in _TOOL_NAMES_NOT_RECORDS]
        self.db = db
        self.entities: dict[str, re.Pattern] = {}
        for name, pattern in (entities or {}).items():
            try:
                self.entities[name] = re.compile(pattern)
            except re.error as e:
                raise InputError("records.entities", f"'{name}': not a regular expression ({e})") from None
        self.synonyms: dict[str, str] = {}
        for t in self.tools:
            self.synonyms.update(getattr(t, "synonyms", None) or {})
        self.tables: dict[str, list[str]] = db.columns() if db is not None else {}
        self.categories: dict[str, tuple[str, str]] = self._categories() if db is not None else {}
        self.profiles: dict[str, ToolProfile] = {t.name: self._profile(t, cues) for t in self.tools}
        nouns: set[str] = set()
        for table, cols in self.tables.items():
            nouns |= stems_of(table)
            for c in cols:
                nouns |= stems_of(c)
        for p in self.profiles.values():
            nouns |= set(p.columns and stems_of(" ".join(p.columns)))
            for agg in p.aggregates.values():
                nouns |= agg
        self.record_nouns = frozenset(nouns - {stem(w) for w in cues.stopwords} - {"id"})
        self.rule_cues = tuple(
            sorted({str(c).lower() for t in self.tools for c in ((getattr(t, "policy", None) or {}).get("cues") or ())})
        )

    # -- values ------------------------------------------------------------------------------
    def _read(self, sql: str, params=()) -> list:
        uri = f"file:{urllib.parse.quote(str(self.db.path.resolve()))}?mode=ro"
        conn = sqlite3.connect(uri, uri=True)
        try:
            return conn.execute(sql, params).fetchmany(MAX_VALUES)
        finally:
            conn.close()

    def _categories(self) -> dict[str, tuple[str, str]]:
        out: dict[str, tuple[str, str]] = {}
        for table, cols in sorted(self.tables.items()):
            for col in cols:
                q = f'SELECT DISTINCT "{col}" FROM "{table}" WHERE typeof("{col}") = \'text\' LIMIT {MAX_CATEGORIES + 1}'
                try:
                    vals = [r[0] for r in self._read(q)]
                except sqlite3.Error:
                    continue
                if len(vals) > MAX_CATEGORIES:
                    continue
                for v in vals:
                    if 4 <= len(v) <= 40 and not re.fullmatch(r"[\d\W_]+", v) and not re.match(r"\d{4}-\d\d", v):
                        out.setdefault(v.replace("_", " "), (table, col))
        return out

    def _values(self, tool, param: str, spec) -> list[str]:
        spec = str(spec).strip()
        if re.fullmatch(r"[A-Za-z_]\w*\.[A-Za-z_]\w*", spec):
            table, col = spec.split(".")
            sql = f'SELECT DISTINCT "{col}" FROM "{table}"'
        else:
            sql = spec
        try:
            result = self.db.query(sql)
        except SqlGuardError as e:
            raise InputError(f"tool '{tool.name}'", f"x-values of '{param}': {e}") from None
        return sorted({str(next(iter(r.values()))) for r in result["rows"] if r and next(iter(r.values())) is not None})

    def _profile(self, tool, cues: Cues) -> ToolProfile:
        props = tool.parameters.get("properties") or {}
        text = positive_text(tool.description)
        cols, aggs = _sql_outputs(getattr(tool, "sql", "") or "")
        for kind, stems in _declared(text, cues).items():
            aggs.setdefault(kind, set()).update(stems)
        vocab = stems_of(tool.name) | stems_of(text) | stems_of(" ".join(cols)) | stems_of(" ".join(props))
        vocab -= {stem(w) for w in cues.stopwords}
        idents = {
            n for n, s in props.items() if n.endswith("_id") or "pattern" in s or "x-values" in s or n in self.entities
        }
        values = {}
        if self.db is not None:
            for n, s in props.items():
                if "x-values" in s:
                    values[n] = self._values(tool, n, s["x-values"])
        return ToolProfile(tool.name, vocab, aggs, cols, idents, values)
