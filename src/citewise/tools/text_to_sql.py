"""Text-to-SQL over the configured records schema, run through the guarded ``sql_query``.

:class:`SqlWriter` asks a chat model for one SQLite ``SELECT`` given a compact schema: each
allowlisted table with its allowed columns and their declared types, and up to
:data:`SAMPLE_VALUES` values of each low-cardinality text column (so "pending" can be written
as the stored ``'pending'``). The reply's SQL is the content of its first fenced ```` ```sql ```` block,
else the text from its first ``SELECT`` / ``WITH``, and run by the ``sql_query`` tool: one
statement, read-only, allowlisted tables and columns, timeout, row cap
(:mod:`citewise.tools.sql`). A refused or failing query is sent back to the model once with the
error (one repair), then given up: the caller answers with a ``no_tool`` outcome.
"""

from __future__ import annotations

import datetime as _dt
import re
import sqlite3
import urllib.parse
from dataclasses import dataclass, field

from citewise.tools.base import is_error

#: Values shown per low-cardinality text column in the prompt.
SAMPLE_VALUES = 6
#: Output tokens a SQL reply may use.
MAX_SQL_TOKENS = 300

SQL_SYSTEM_PROMPT = (
    "Write one SQLite SELECT statement that answers the question from these tables "
    "(only these tables and columns):\n{schema}\n"
    "Reply with the SQL only, in a ```sql block. Today is {today}."
)

_FENCE = re.compile(r"```(?:sql|sqlite)?\s*(.+?)```", re.S | re.I)
_START = re.compile(r"\b(SELECT|WITH)\b", re.I)


def extract_sql(text: str | None) -> str | None:
    """The SQL of a model's reply (module docstring), one statement, without a trailing ``;``."""
    if not text:
        return None
    m = _FENCE.search(text)
    if m:  # a fenced block is the model's SQL, whatever it is: the guard says what is wrong with it
        sql = m.group(1).strip()
    else:
        s = _START.search(text)
        if not s:
            return None
        sql = text[s.start() :].strip()
    sql = sql.split(";")[0].strip() if ";" in sql else sql
    return sql or None


def schema_text(db, categories: dict[str, tuple[str, str]] | None = None) -> str:
    """One line per allowlisted table: ``table(column TYPE, ...)`` with sample values of
    low-cardinality text columns (``categories``: value -> (table, column))."""
    uri = f"file:{urllib.parse.quote(str(db.path.resolve()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    samples: dict[tuple[str, str], list[str]] = {}
    for value, key in sorted((categories or {}).items()):
        samples.setdefault(key, []).append(value)
    lines = []
    try:
        for table, cols in sorted(db.columns().items()):
            types = {r[1]: r[2] for r in conn.execute("SELECT * FROM pragma_table_info(?)", (table,))}
            parts = []
            for c in cols:
                vals = samples.get((table, c), [])[:SAMPLE_VALUES]
                hint = f" e.g. {', '.join(repr(v) for v in vals)}" if vals else ""
                parts.append(f"{c} {types.get(c, '') or ''}".strip() + hint)
            lines.append(f"{table}({', '.join(parts)})")
    finally:
        conn.close()
    return "\n".join(lines)


@dataclass
class SqlResult:
    """What :meth:`SqlWriter.answer` produced: the SQL tried last, the observation, the attempts."""

    sql: str | None
    observation: dict
    attempts: int
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.sql is not None and not is_error(self.observation)


class SqlWriter:
    """Text-to-SQL through a chat model (module docstring).

    Args:
        model: a ChatModel.
        db: the :class:`~citewise.tools.sql.SqliteDatabase` (its allowlist and columns).
        categories: sample values (:attr:`citewise.tools.catalog.RecordsCatalog.categories`).
    """

    def __init__(self, model, db, categories: dict | None = None):
        self.model = model
        self.schema = schema_text(db, categories)

    def answer(self, question: str, tools, today: _dt.date | None = None) -> SqlResult:
        """Write SQL for ``question`` and run it with ``tools.call("sql_query", ...)``; never raises
        (a chat failure is an error observation)."""
        from citewise.models.chat import ChatError

        today = today or _dt.datetime.now(_dt.timezone.utc).date()
        messages = [
            {"role": "system", "content": SQL_SYSTEM_PROMPT.format(schema=self.schema, today=today.isoformat())},
            {"role": "user", "content": question},
        ]
        sql, obs, errors = None, {"error": "no SQL written", "tool": "sql_query"}, []
        for attempt in (1, 2):
            try:
                reply = self.model.chat(messages, max_tokens=MAX_SQL_TOKENS).content
            except ChatError as e:
                errors.append(f"the language model failed: {e}")
                return SqlResult(sql, {"error": str(e), "tool": "sql_query"}, attempt, errors)
            sql = extract_sql(reply)
            if sql is None:
                obs = {"error": f"the reply holds no SELECT: {(reply or '')[:120]!r}", "tool": "sql_query"}
            else:
                obs = tools.call("sql_query", {"sql": sql})
                if not is_error(obs):
                    return SqlResult(sql, obs, attempt, errors)
            errors.append(obs["error"])
            messages += [
                {"role": "assistant", "content": reply or ""},
                {"role": "user", "content": f"That failed: {obs['error']}. Write one corrected SELECT."},
            ]
        return SqlResult(sql, obs, 2, errors)
