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
   aborts a statement after ``timeout_s`` seconds (recursive CTE loops, huge cross joins); at
   most ``max_rows`` rows are fetched (``truncated`` says when there were more).

Parameters are bound by SQLite (``:name`` placeholders), never interpolated into the text.

PostgreSQL (documented, not implemented here): connect with a role that has only ``SELECT`` on
the allowlisted tables (``GRANT SELECT ON customers, ... TO citewise_ro``; no other grants), run
each query in ``BEGIN READ ONLY`` with ``SET LOCAL statement_timeout = '2s'`` and fetch at most
``max_rows``; keep the same static guard in front. Only SQLite is supported by this module;
a ``postgresql://`` URL is refused with a clear error.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import sqlglot
from sqlglot import exp

from citewise.core import CitewiseError
from citewise.tools.base import error, validate_args

logging.getLogger("sqlglot").setLevel(logging.ERROR)

#: Scalar and aggregate SQLite functions a query may call (lower case). Everything else is
#: refused, by the static guard when sqlglot does not know the function and always by the engine
#: authorizer. Source: SQLite core/date/aggregate function lists (sqlite.org/lang_corefunc.html,
#: lang_datefunc.html, lang_aggfunc.html), minus anything that reads/writes files, loads code,
#: allocates large blobs or reveals internals.
ALLOWED_FUNCTIONS = frozenset({
    "count", "sum", "total", "avg", "min", "max", "group_concat", "string_agg",
    "abs", "round", "coalesce", "ifnull", "nullif", "iif", "lower", "upper", "length", "substr",
    "substring", "trim", "ltrim", "rtrim", "replace", "instr", "like", "glob", "printf", "format",
    "date", "time", "datetime", "julianday", "strftime", "unixepoch", "typeof", "cast",
})

_FORBIDDEN_NODES: tuple[type, ...] = tuple(getattr(exp, n) for n in (
    "Insert", "Update", "Delete", "Drop", "Create", "Alter", "Command", "Pragma", "Attach",
    "Detach", "Transaction", "Commit", "Rollback", "Merge", "Into", "Set", "Use", "LoadData",
    "Copy", "Analyze",
) if hasattr(exp, n))

_SET_OPS = tuple(getattr(exp, n) for n in ("Union", "Intersect", "Except", "SetOperation") if hasattr(exp, n))


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
            SqlGuardError: unparseable, not exactly one statement, not a SELECT, a forbidden
                construct, a table off the allowlist, or a function that is not allowed.
        """
        if not isinstance(sql, str) or not sql.strip():
            raise SqlGuardError("empty SQL")
        try:
            parsed = [s for s in sqlglot.parse(sql, read="sqlite") if s is not None]
        except sqlglot.errors.SqlglotError as e:
            raise SqlGuardError(f"cannot parse SQL: {str(e).splitlines()[0][:160]}") from None
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
        return root


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

    Raises:
        CitewiseError: the file does not exist.
    """

    def __init__(self, path: str | os.PathLike, allowlist: Iterable[str], timeout_s: float = 2.0, max_rows: int = 200):
        self.path = Path(path)
        if not self.path.is_file():
            raise CitewiseError(f"{self.path}: no such database file")
        self.allowlist = frozenset(t.lower() for t in allowlist)
        self.guard = SqlGuard(self.allowlist)
        self.timeout_s = timeout_s
        self.max_rows = max_rows

    def _authorize(self, action, arg1, arg2, dbname, source):
        if action in (sqlite3.SQLITE_SELECT, getattr(sqlite3, "SQLITE_RECURSIVE", -1)):
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ:
            if (arg1 or "").lower() in self.allowlist and dbname in ("main", None):
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
        conn.set_authorizer(self._authorize)
        return conn

    def columns(self) -> dict[str, list[str]]:
        """Column names of each allowlisted table that exists (read without the authorizer)."""
        uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
        conn = sqlite3.connect(uri, uri=True)
        try:
            out = {}
            for table in sorted(self.allowlist):
                cols = [r[1] for r in conn.execute("SELECT * FROM pragma_table_info(?)", (table,))]
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
            SqlGuardError: the guard or the engine refused the query, it timed out, or failed.
        """
        self.guard.check(sql)
        params = dict(params or {})
        for k, v in params.items():
            if not isinstance(v, (str, int, float, type(None))) or isinstance(v, bool):
                raise SqlGuardError(f"parameter '{k}' must be a string, number or null")
        conn = self.connect()
        deadline = time.monotonic() + self.timeout_s
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 1000)
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
            raise SqlGuardError(f"SQL error: {msg}") from None
        except sqlite3.ProgrammingError as e:
            raise SqlGuardError(f"parameter error: {e}") from None
        finally:
            conn.close()
        truncated = len(rows) > self.max_rows
        rows = rows[: self.max_rows]
        return {"columns": cols, "rows": [dict(zip(cols, map(_json_value, r))) for r in rows],
                "row_count": len(rows), "truncated": truncated}


def _json_value(v: Any) -> Any:
    return v.hex() if isinstance(v, bytes) else v


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
            "NOT for policies, how-to or help-centre questions (use vector_search); "
            "NOT for writing: INSERT/UPDATE/DELETE/DDL/PRAGMA/ATTACH are refused."
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "sql": {"type": "string", "maxLength": 4000, "description": "One SELECT statement."},
                "params": {"type": "object", "description": "Named parameters, e.g. {\"id\": 2041} for :id."},
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
