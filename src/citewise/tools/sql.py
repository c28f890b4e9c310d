"""Guarded, read-only SQL: the ``sql_query`` tool and the engine under the record tools.

Two independent layers, so a bug in one is caught by the other (after incidents where an LLM
chain ran ``DROP TABLE`` through a "SQL tool", framework maintainers recommend exactly this:
least-privilege read-only connections, allowlisted tables, bound parameters, limits):

1. **Static guard** (:class:`SqlGuard`, sqlglot, SQLite dialect): the text must parse; exactly one
   statement; it must be a ``SELECT`` (or a UNION/INTERSECT/EXCEPT of SELECTs, with optional
   CTEs); no node anywhere that writes, changes schema or session state (INSERT, UPDATE, DELETE,
   DROP, CREATE, ALTER, PRAGMA, ATTACH, DETACH, VACUUM, transactions, ``SELECT ... INTO``); every
   table - including those inside CTEs, subqueries and set operations - is on the allowlist (CTE
   names are resolved, schema-qualified names other than ``main`` are refused, table-valued
   functions such as ``pragma_table_info`` are refused); every function unknown to sqlglot must
   be on :data:`ALLOWED_FUNCTIONS` (so ``load_extension``, ``writefile``, ``readfile``,
   ``randomblob``, ``zeroblob`` are refused).
2. **Engine** (:class:`SqliteDatabase`): a fresh connection per query opened as
   ``file:PATH?mode=ro`` (SQLite refuses every write), ``PRAGMA query_only = ON``, extension
   loading off, and an authorizer (``sqlite3.Connection.set_authorizer``) that allows only
   SELECT, reads of allowlisted tables and calls of :data:`ALLOWED_FUNCTIONS` - the engine's own
   view, so it also catches anything sqlglot parsed differently from SQLite. A progress handler
   aborts a statement after ``timeout_s`` seconds (recursive CTE loops, huge cross joins),
   checked every :data:`PROGRESS_OPS` virtual-machine steps; at most ``max_rows`` rows are fetched
   (``truncated`` says when there were more).
3. **Size limits**, because one VM step on a huge string can run for seconds between two progress
   checks (issue 13 reported 16.8 s and 5.8 GB RSS for big-string expressions under the 2 s
   timeout; nested ``replace`` doubling a string is such a case):
   ``SQLITE_LIMIT_LENGTH`` caps every string/blob/row at :data:`MAX_VALUE_BYTES` (SQLite then
   fails the statement with "string or blob too big" instead of building it), the SQL text at
   :data:`MAX_SQL_BYTES`, expression depth at :data:`MAX_EXPR_DEPTH`, LIKE/GLOB patterns at
   :data:`MAX_LIKE_PATTERN_BYTES`; ``printf``/``format`` need a literal format whose widths and
   precisions are at most :data:`MAX_FORMAT_WIDTH` (``printf('%.*c', 1e9, 'x')`` loops 1e9 times in
   one step even when the result is refused); and ``PRAGMA hard_heap_limit`` caps all SQLite heap
   memory of the process at :data:`HARD_HEAP_LIMIT_BYTES` (process-wide and only ever lowered;
   citewise uses SQLite only here).

Parameters are bound by SQLite (``:name`` placeholders), never interpolated into the text.

PostgreSQL (documented, not implemented here): connect with a role that has only ``SELECT`` on
the allowlisted tables (``GRANT SELECT ON customers, ... TO citewise_ro``; no other grants), run
each query in ``BEGIN READ ONLY`` with ``SET LOCAL statement_timeout = '2s'`` and fetch at most
``max_rows``; keep the same static guard in front. Only SQLite is supported by this module;
a ``postgresql://`` URL is refused with a clear error.
"""

from __future__ import annotations

import logging
import math
import os
import re
import sqlite3
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from citewise.core import CitewiseError
from citewise.tools.base import error, validate_args

if TYPE_CHECKING:
    from sqlglot import exp


#: Scalar and aggregate SQLite functions a query may call (lower case). Everything else is
#: refused, by the static guard when sqlglot does not know the function and always by the engine
#: authorizer. Source: SQLite core/date/aggregate function lists (sqlite.org/lang_corefunc.html,
#: lang_datefunc.html, lang_aggfunc.html), minus anything that reads/writes files, loads code,
#: allocates large blobs or reveals internals.
ALLOWED_FUNCTIONS = frozenset(
    {
        "count",
        "sum",
        "total",
        "avg",
        "min",
        "max",
        "group_concat",
        "string_agg",
        "abs",
        "round",
        "coalesce",
        "ifnull",
        "nullif",
        "iif",
        "lower",
        "upper",
        "length",
        "substr",
        "substring",
        "trim",
        "ltrim",
        "rtrim",
        "replace",
        "instr",
        "like",
        "glob",
        "printf",
        "format",
        "date",
        "time",
        "datetime",
        "julianday",
        "strftime",
        "unixepoch",
        "typeof",
        "cast",
    }
)

#: Limits of the engine (module docstring, layer 3). Sources: SQLite's run-time limits
#: (sqlite.org/c3ref/c_limit_attached.html, Python ``Connection.setlimit``) and hard_heap_limit
#: (sqlite.org/pragma.html#pragma_hard_heap_limit); the values are ours: far above anything a
#: records question needs (the sample database's longest value is 31 bytes), far below
#: what hurts a 2-core machine.
MAX_VALUE_BYTES = 1_000_000
MAX_SQL_BYTES = 100_000
MAX_EXPR_DEPTH = 200
MAX_LIKE_PATTERN_BYTES = 1_000
MAX_FORMAT_WIDTH = 1_000
HARD_HEAP_LIMIT_BYTES = 512 * 1024 * 1024
#: Progress-handler period in SQLite VM steps (each step is short once values are capped).
PROGRESS_OPS = 100
#: Bound integers must fit SQLite's 64-bit INTEGER.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_FORMAT_SPEC = re.compile(r"%%|%[-+ 0#,!]*(\*|\d+)?(?:\.(\*|\d+))?")

_FORBIDDEN_NAMES = (
    "Insert",
    "Update",
    "Delete",
    "Drop",
    "Create",
    "Alter",
    "Command",
    "Pragma",
    "Attach",
    "Detach",
    "Transaction",
    "Commit",
    "Rollback",
    "Merge",
    "Into",
    "Set",
    "Use",
    "LoadData",
    "Copy",
    "Analyze",
)
_SET_OP_NAMES = ("Union", "Intersect", "Except", "SetOperation")


def _sqlglot():
    """``(sqlglot, sqlglot.exp, forbidden node types, set-operation node types)``, imported on the
    first check: sqlglot's import was ~1 s of a cold ``citewise ask`` whose router only listed
    the SQL tool (bench/cold_ask.py)."""
    global _SQLGLOT
    if _SQLGLOT is None:
        import sqlglot
        from sqlglot import exp

        logging.getLogger("sqlglot").setLevel(logging.ERROR)
        _SQLGLOT = (
            sqlglot,
            exp,
            tuple(getattr(exp, n) for n in _FORBIDDEN_NAMES if hasattr(exp, n)),
            tuple(getattr(exp, n) for n in _SET_OP_NAMES if hasattr(exp, n)),
        )
    return _SQLGLOT


_SQLGLOT = None


class SqlGuardError(CitewiseError):
    """A query the guard refuses; the message says which rule it broke."""


@dataclass(frozen=True)
class SqlGuard:
    """Static checks on one SQL text (see module docstring, layer 1).

    Args:
        allowlist: table names (case-insensitive) a query may read.
    """

    allowlist: frozenset[str]

    @classmethod
    def of(cls, tables: Iterable[str]) -> "SqlGuard":
        return cls(frozenset(t.lower() for t in tables))

    def check(self, sql: str) -> exp.Expression:
        """Parse and check ``sql``; return the parsed statement.

        Raises:
            SqlGuardError: unparseable, nested too deeply for the parser (sqlglot recurses; about
                45 levels of parentheses exhaust Python's stack), not exactly one statement, not a
                SELECT, a forbidden construct, a table off the allowlist, a function that is not
                allowed, or a printf/format without a literal format or with a width or
                precision above :data:`MAX_FORMAT_WIDTH`.
        """
        if not isinstance(sql, str) or not sql.strip():
            raise SqlGuardError("empty SQL")
        try:
            return self._check(sql)
        except RecursionError:
            raise SqlGuardError("query is nested too deeply") from None

    def _check(self, sql: str) -> exp.Expression:
        sqlglot, exp, _FORBIDDEN_NODES, _SET_OPS = _sqlglot()
        try:
            parsed = [s for s in sqlglot.parse(sql, read="sqlite") if s is not None]
        except sqlglot.errors.SqlglotError as e:
            raise SqlGuardError(f"cannot parse SQL: {(str(e).splitlines() or [''])[0][:160]}") from None
        except RecursionError:
            raise
        except Exception as e:  # sqlglot on input it does not expect: a refusal, not a crash
            raise SqlGuardError(f"cannot parse SQL: {type(e).__name__}: {str(e)[:160]}") from None
        if len(parsed) != 1:
            raise SqlGuardError(f"exactly one statement is allowed, got {len(parsed)}")
        root = parsed[0]
        if not isinstance(root, (exp.Select, *_SET_OPS)):
            kind = root.key.upper() if isinstance(root, exp.Expression) else type(root).__name__
            if isinstance(root, exp.Command):
                kind = str(root.this).upper()
            raise SqlGuardError(f"only SELECT statements are allowed, got {kind}")
        for node in root.walk():
            if isinstance(node, _FORBIDDEN_NODES):
                raise SqlGuardError(f"{node.key.upper()} is not allowed inside a query")
        ctes = {c.alias_or_name.lower() for c in root.find_all(exp.CTE)}
        for table in root.find_all(exp.Table):
            name = (table.name or "").lower()
            if not name:
                raise SqlGuardError("table-valued functions are not allowed")
            if table.args.get("catalog") is not None or (table.db and table.db.lower() != "main"):
                raise SqlGuardError(f"schema-qualified table '{table.sql(dialect='sqlite')}' is not allowed")
            if name in ctes and not table.db:
                continue
            if name not in self.allowlist:
                raise SqlGuardError(f"table '{name}' is not on the allowlist ({', '.join(sorted(self.allowlist))})")
        for fn in root.find_all(exp.Anonymous):
            fname = str(fn.name).lower()
            if fname not in ALLOWED_FUNCTIONS:
                raise SqlGuardError(f"function '{fname}' is not allowed")
            if fname in ("printf", "format"):
                _check_format(fname, fn.expressions[0] if fn.expressions else None)
        for fn in root.find_all(exp.Format):
            _check_format("format", fn.this)
        return root


def _check_format(fname: str, fmt: exp.Expression | None) -> None:
    """Refuse a printf/format whose format is not a literal or asks for a huge width/precision."""
    exp = _sqlglot()[1]
    if not isinstance(fmt, exp.Literal) or not fmt.is_string:
        raise SqlGuardError(f"{fname}: the format must be a string literal")
    for m in _FORMAT_SPEC.finditer(fmt.this):
        for n in m.groups():
            if n == "*":
                raise SqlGuardError(f"{fname}: '*' width or precision is not allowed")
            if n is not None and int(n) > MAX_FORMAT_WIDTH:
                raise SqlGuardError(f"{fname}: width or precision {n} is above {MAX_FORMAT_WIDTH}")


def parse_db_url(url: str | os.PathLike) -> Path:
    """A SQLite database path from a URL or a plain path.

    ``sqlite:///rel/path.db`` (relative) and ``sqlite:////abs/path.db`` (absolute) follow the
    SQLAlchemy convention; ``file:path`` and plain paths are taken as they are.

    Raises:
        CitewiseError: another scheme (e.g. ``postgresql://``; see the module docstring).
    """
    text = str(url)
    if "://" in text:
        scheme, rest = text.split("://", 1)
        if scheme != "sqlite":
            raise CitewiseError(f"{text}: only sqlite:/// databases are supported (PostgreSQL: see citewise.tools.sql)")
        return Path(urllib.parse.unquote(rest[1:] if rest.startswith("/") else rest))
    if text.startswith("file:"):
        return Path(urllib.parse.unquote(text[5:].split("?", 1)[0]))
    return Path(text)


class SqliteDatabase:
    """Read-only access to one SQLite file with an engine-level allowlist (module docstring, layer 2).

    Args:
        path: the database file (must exist; it is never created or modified).
        allowlist: tables a query may read.
        timeout_s: seconds before a statement is aborted.
        max_rows: rows returned at most.
        columns: column allowlist per table (lower-case names; a table not listed: every column),
            enforced by the engine's authorizer (a read of another column is refused).

    Raises:
        CitewiseError: the file does not exist.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        allowlist: Iterable[str],
        timeout_s: float = 2.0,
        max_rows: int = 200,
        columns: dict[str, Iterable[str]] | None = None,
    ):
        self.path = Path(path)
        if not self.path.is_file():
            raise CitewiseError(f"{self.path}: no such database file")
        self.allowlist = frozenset(t.lower() for t in allowlist)
        self.column_allowlist = {t.lower(): frozenset(c.lower() for c in cols) for t, cols in (columns or {}).items()}
        self.guard = SqlGuard(self.allowlist)
        self.timeout_s = timeout_s
        self.max_rows = max_rows

    def _authorize(self, action, arg1, arg2, dbname, source):
        if action in (sqlite3.SQLITE_SELECT, getattr(sqlite3, "SQLITE_RECURSIVE", -1)):
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ:
            table = (arg1 or "").lower()
            if table in self.allowlist and dbname in ("main", None):
                allowed = self.column_allowlist.get(table)
                if allowed is not None and arg2 and arg2.lower() not in allowed:
                    return sqlite3.SQLITE_DENY
                return sqlite3.SQLITE_OK
            # a CTE or subquery alias is not a table read; SQLite only reports real tables here
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION:
            return sqlite3.SQLITE_OK if (arg2 or "").lower() in ALLOWED_FUNCTIONS else sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_DENY

    def connect(self) -> sqlite3.Connection:
        """A new read-only connection with the authorizer installed (caller closes it)."""
        uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        conn.execute(f"PRAGMA hard_heap_limit = {HARD_HEAP_LIMIT_BYTES}")  # lowers only; process-wide
        for limit, value in (
            (sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES),
            (sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES),
            (sqlite3.SQLITE_LIMIT_EXPR_DEPTH, MAX_EXPR_DEPTH),
            (sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_LIKE_PATTERN_BYTES),
            (sqlite3.SQLITE_LIMIT_ATTACHED, 0),
        ):
            conn.setlimit(limit, value)
        conn.set_authorizer(self._authorize)
        return conn

    def columns(self) -> dict[str, list[str]]:
        """Allowed column names of each allowlisted table that exists (read without the authorizer)."""
        uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
        conn = sqlite3.connect(uri, uri=True)
        try:
            out = {}
            for table in sorted(self.allowlist):
                cols = [r[1] for r in conn.execute("SELECT * FROM pragma_table_info(?)", (table,))]
                allowed = self.column_allowlist.get(table)
                if allowed is not None:
                    cols = [c for c in cols if c.lower() in allowed]
                if cols:
                    out[table] = cols
            return out
        finally:
            conn.close()

    def query(self, sql: str, params: dict | None = None) -> dict:
        """Check and run one SELECT with bound named parameters.

        Returns:
            ``{"columns": [...], "rows": [{column: value}], "row_count": n, "truncated": bool}``.

        Raises:
            SqlGuardError: the guard or the engine refused the query; a parameter is not a string,
                a finite number within 64-bit integers, or null; the statement timed out, hit a
                size limit (module docstring, layer 3) or failed.
        """
        self.guard.check(sql)
        if params is not None and not isinstance(params, dict):
            raise SqlGuardError(f"parameters must be an object of name -> value, got {type(params).__name__}")
        params = dict(params or {})
        for k, v in params.items():
            if not isinstance(k, str):
                raise SqlGuardError(f"parameter names must be strings, got {type(k).__name__}")
            if not isinstance(v, (str, int, float, type(None))) or isinstance(v, bool):
                raise SqlGuardError(f"parameter '{k}' must be a string, number or null")
            if isinstance(v, int) and not INT64_MIN <= v <= INT64_MAX:
                raise SqlGuardError(f"parameter '{k}' is outside the 64-bit integer range")
            if isinstance(v, float) and not math.isfinite(v):
                raise SqlGuardError(f"parameter '{k}' must be a finite number")
        conn = self.connect()
        deadline = time.monotonic() + self.timeout_s
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, PROGRESS_OPS)
        try:
            cur = conn.execute(sql, params)
            rows = cur.fetchmany(self.max_rows + 1)
            cols = [d[0] for d in cur.description or ()]
        except sqlite3.DatabaseError as e:
            msg = str(e)
            if "interrupted" in msg:
                raise SqlGuardError(f"statement timed out after {self.timeout_s:g}s") from None
            if "not authorized" in msg or "prohibited" in msg:
                raise SqlGuardError(f"refused by the read-only engine: {msg}") from None
            if "too big" in msg or "too large" in msg:
                raise SqlGuardError(f"a value is larger than the {MAX_VALUE_BYTES:,}-byte limit ({msg})") from None
            if "out of memory" in msg:
                raise SqlGuardError(f"statement needs more memory than the limit ({msg})") from None
            raise SqlGuardError(f"SQL error: {msg}") from None
        except (sqlite3.Error, OverflowError, ValueError, MemoryError) as e:
            raise SqlGuardError(f"parameter or engine error: {type(e).__name__}: {e}") from None
        finally:
            conn.close()
        truncated = len(rows) > self.max_rows
        rows = rows[: self.max_rows]
        return {
            "columns": cols,
            "rows": [dict(zip(cols, map(_json_value, r))) for r in rows],
            "row_count": len(rows),
            "truncated": truncated,
        }


def _json_value(v: Any) -> Any:
    """A SQLite value as JSON: blobs as hex, +/-infinity (``SELECT 1e999``) as the strings
    ``"Infinity"`` / ``"-Infinity"`` (JSON has no such number; SQLite stores no NaN)."""
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, float) and not math.isfinite(v):
        return "Infinity" if v > 0 else ("-Infinity" if v < 0 else None)
    return v


class SqlQueryTool:
    """``sql_query``: one guarded, read-only SELECT over the allowlisted tables (see module docstring)."""

    name = "sql_query"

    def __init__(self, db: SqliteDatabase):
        self.db = db
        schema = "; ".join(f"{t}({', '.join(c)})" for t, c in db.columns().items())
        self.description = (
            "Run ONE read-only SQLite SELECT over the records database and get rows back "
            f"(at most {db.max_rows}). Tables: {schema}. Use for ad-hoc counts, totals and lookups "
            "that no record tool covers; pass values as named parameters (:name) in 'params'. "
            "NOT for policies, rules or how-to questions (use vector_search); "
            "NOT for writing: INSERT/UPDATE/DELETE/DDL/PRAGMA/ATTACH are refused."
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "sql": {"type": "string", "maxLength": 4000, "description": "One SELECT statement."},
                "params": {"type": "object", "description": 'Named parameters, e.g. {"id": 2041} for :id.'},
            },
            "required": ["sql"],
        }

    def call(self, args: dict) -> dict:
        problem = validate_args(args, self.parameters)
        if problem:
            return error(self.name, problem)
        try:
            return {"tool": self.name, **self.db.query(args["sql"], args.get("params"))}
        except SqlGuardError as e:
            return error(self.name, str(e))
        except Exception as e:  # anything else is still an observation (DESIGN.md: Tool seam)
            return error(self.name, f"{type(e).__name__}: {e}")
