"""Answer a question through the router: record, both, live; ``document`` and ``none`` go on to
the document answerer.

:func:`route_and_answer` returns ``None`` for ``document`` and ``none`` routes, so the caller
falls through to the document answerer (which answers with citations or abstains). Otherwise:

* ``record`` with a named query: the tool's rows, cited as ``[tool:NAME]``;
* ``record`` with ``sql_query``: with a :class:`~citewise.tools.text_to_sql.SqlWriter` (an LLM
  is configured) the written SQL runs through the guarded ``sql_query`` and the answer shows the
  SQL and its rows (``[tool:sql_query]``); without one, or when no query could be written, the
  outcome is ``no_tool`` with reason ``no_tool`` ("this is a question about records; no
  configured query answers it; configure ...") - never an answer from the documents;
* a route whose call misses a required parameter ("Has this customer exceeded the limit?"):
  abstained, reason ``missing_argument`` naming it;
* ``live``: ``web_search`` results (untrusted, each with its URL) when a web search is
  configured, else abstained with reason ``live_value``;
* ``both`` with a tool that declares no ``policy``: the record's rows and the document
  answerer's cited answer to the question;
* ``both``: the record tool gives the value; the tool's ``policy.query`` is searched in the
  documents (with the asker's permissions) and the limit, its key (``policy.key_field``) and
  its exceptions are read from the passage (:mod:`citewise.tools.rules`); the comparison is
  computed here, and the answer shows all three: the value ``[tool:NAME]``, the rule (and the
  exception that applies) ``[doc:ID]``, the computed comparison. Missing pieces make the
  outcome ``partial`` (value without rule) or ``abstained`` (no record).

Which records database: the caller says (:class:`citewise.api.Citewise` builds the router, the
tools and the SQL writer once per database); without one nothing is routed.
"""

from __future__ import annotations

import datetime as _dt

from citewise.core import Answer, Citation, Principal, Reason, ReasonCode, source_span
from citewise.telemetry import traced_route
from citewise.tools.base import is_error
from citewise.tools.rules import Comparison, RuleValue, compare, find_exception, find_general_value, find_rule_value

__all__ = ["route_and_answer", "Comparison", "find_rule_value"]

MAX_ROWS_SHOWN = 20


def _money(x: float, unit: str = "USD") -> str:
    x = x + 0.0  # no "-0"
    return f"{x:,.2f} {unit}" if unit.upper() in ("USD", "EUR") else f"{x:g} {unit}"


def _who(args: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def _rows_text(obs: dict) -> str:
    lines = ["; ".join(f"{k}: {v}" for k, v in row.items()) for row in obs["rows"][:MAX_ROWS_SHOWN]]
    more = f" ({obs['row_count'] - MAX_ROWS_SHOWN} more rows not shown)" if obs["row_count"] > MAX_ROWS_SHOWN else ""
    return " | ".join(lines) + more


def _record_answer(name: str, obs: dict) -> Answer:
    if is_error(obs):
        return Answer(f"The records tool {name} failed: {obs['error']}", "abstained")
    if not obs["rows"]:
        return Answer(f"No record matches {name}({_who(obs.get('args', {}))}). [tool:{name}]", "answered")
    return Answer(_rows_text(obs) + f" [tool:{name}]", "answered")


def no_tool_answer(kind: str = "record", detail: str = "") -> Answer:
    """The ``no_tool`` outcome (module docstring)."""
    reason = Reason.of(ReasonCode.NO_TOOL, kind=kind)
    text = (
        f"This is a question about records; no configured query answers it{detail}. "
        "Configure a named query for it (records.templates) or an LLM (llm.base_url, llm.model) to write SQL "
        "over the records schema."
    )
    return Answer(text, "no_tool", reason=reason)


def live_answer(question: str, tools) -> Answer:
    """Web search results for a live question, or an abstention as live data."""
    if tools is None or "web_search" not in tools:
        return Answer(
            "This asks for a live value (a current price, rate or news), which the documents and records "
            "do not hold, and no live data source (web search) is configured.",
            "abstained",
            reason=Reason.of(ReasonCode.LIVE_VALUE),
        )
    obs = tools.call("web_search", {"query": question, "k": 3})
    if is_error(obs) or not obs.get("results"):
        why = obs["error"] if is_error(obs) else "no results"
        return Answer(
            f"This asks for a live value; the web search gave no usable result ({why}).",
            "abstained",
            reason=Reason.of(ReasonCode.LIVE_VALUE),
        )
    lines = [f"{r['title']}: {r['snippet']} ({r['url']})" for r in obs["results"]]
    return Answer(
        "Live results from the web (untrusted, not checked): " + " | ".join(lines) + " [tool:web_search]", "answered"
    )


def _sql_answer(result) -> Answer:
    obs = result.observation
    if not obs["rows"]:
        text = f"No record matches. SQL: {result.sql} [tool:sql_query]"
    else:
        text = f"{_rows_text(obs)} [tool:sql_query] (SQL: {result.sql})"
    ans = Answer(text, "answered")
    ans.evidence = {"sql": result.sql, "attempts": result.attempts}
    return ans


@traced_route
def route_and_answer(
    question: str,
    index,
    db: str | None = None,
    principal: Principal | None = None,
    today: _dt.date | None = None,
    *,
    router=None,
    tools=None,
    filters=None,
    sql_writer=None,
) -> Answer | None:
    """Answer through the records or live tools when the router says record / both / live; None
    for document and none routes (also when no records database is given).

    ``router`` and ``tools`` (the principal's :class:`~citewise.tools.registry.ToolSet`) are
    built from ``db`` when not given; :class:`citewise.api.Citewise` builds them once.
    ``sql_writer``: a :class:`~citewise.tools.text_to_sql.SqlWriter` (None: no text-to-SQL).
    ``filters``: unused by record tools; kept for the document search of a *both* route.

    Raises:
        CitewiseError: the configured database file does not exist.
    """
    from citewise.tools.registry import build_toolset
    from citewise.tools.router import RuleRouter

    if tools is None:
        if db is None:
            return None
        tools = build_toolset(db, index=index, principal=principal, sample_fallback=False)
    if router is None:
        router = RuleRouter(list(tools.tools.values()), index.question_embedder)
    route = router.route(question, today)
    if route.kind in ("document", "none"):
        return None
    if route.kind == "live":
        return live_answer(question, tools)
    call = route.calls[0]
    if route.missing:
        names = ", ".join(route.missing)
        return Answer(
            f"{call.name} needs {names}, which the question does not give; add it to the question.",
            "abstained",
            reason=Reason.of(ReasonCode.MISSING_ARGUMENT, tool=call.name, names=names),
        )
    if call.name == "sql_query" and not call.arguments.get("sql"):
        if sql_writer is None:
            return no_tool_answer(route.kind)
        result = sql_writer.answer(question, tools, today)
        if not result.ok:
            detail = f" (the SQL written failed: {result.errors[-1]})" if result.errors else ""
            ans = no_tool_answer(route.kind, detail)
        else:
            ans = _sql_answer(result)
        ans.tool_calls = [
            {
                "tool": "sql_query",
                "arguments": {"sql": result.sql},
                "error": None if result.ok else (result.errors[-1] if result.errors else "no SQL"),
                "rows": result.observation.get("row_count") if result.ok else None,
            }
        ]
        return ans
    if call.name not in tools:
        return no_tool_answer(route.kind, f" (the tool {call.name} is not available to you)")
    obs = tools.call(call.name, call.arguments)
    if route.kind == "both" and not getattr(tools[call.name], "policy", None):
        ans = _record_and_documents(question, call, obs, tools, index)
    else:
        ans = _answer_from_tool(route.kind, call, obs, tools, index, today)
    ans.tool_calls = [
        {
            "tool": call.name,
            "arguments": dict(call.arguments),
            "error": obs["error"] if is_error(obs) else None,
            "rows": None if is_error(obs) else obs.get("row_count", len(obs.get("rows", []))),
        }
    ]
    return ans


def _record_and_documents(question: str, call, obs: dict, tools, index) -> Answer:
    """A *both* answer without a declared rule: the record's rows, then the documents' cited
    answer to the question (asked as the same principal), or the rows alone (``partial``)."""
    record = _record_answer(call.name, obs)
    if is_error(obs):
        return record
    principal = getattr(tools["vector_search"], "principal", None) if "vector_search" in tools else None
    docs = index.ask(question, principal=principal)
    if docs.outcome != "answered":
        return Answer(record.text + " The documents do not say what applies to it.", "partial")
    ans = Answer(
        record.text + " " + docs.text,
        "answered",
        docs.citations,
        retrieved_ids=docs.retrieved_ids,
        used_ids=docs.used_ids,
        best_score=docs.best_score,
    )
    ans.generator = docs.generator
    return ans


def _table_keys(text: str) -> tuple[str, ...]:
    """First cells of the Markdown table rows in ``text`` (the keys a rule table lists)."""
    keys = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        if cells and cells[0] and not set(cells[0]) <= set("-: "):
            keys.append(cells[0])
    return tuple(keys)


def _as_of(row: dict, policy: dict, today: _dt.date | None) -> _dt.date:
    field = policy.get("as_of_field")
    if field and isinstance(row.get(field), str):
        try:
            return _dt.date.fromisoformat(row[field][:10])
        except ValueError:
            pass
    return today or _dt.datetime.now(_dt.timezone.utc).date()


def _answer_from_tool(kind: str, call, obs: dict, tools, index, today: _dt.date | None = None) -> Answer:
    """The answer of a ``record`` or ``both`` route from the tool's observation."""
    if kind == "record":
        return _record_answer(call.name, obs)
    policy = getattr(tools[call.name], "policy", None) or {}
    rule_name = policy.get("rule", "rule")
    if is_error(obs) or not obs["rows"]:
        return (
            _record_answer(call.name, obs)
            if is_error(obs)
            else Answer(
                f"No record for {_who(call.arguments)}; I cannot check the {rule_name}. [tool:{call.name}]", "abstained"
            )
        )
    row = obs["rows"][0]
    key_field, unit = policy.get("key_field"), str(policy.get("unit") or "USD")
    try:
        key = str(row[key_field]) if key_field else None
        used = float(row[policy["value_field"]])
        if key_field and row[key_field] is None:
            raise TypeError
        if used != used or used in (float("inf"), float("-inf")):
            raise ValueError(used)
    except (KeyError, TypeError, ValueError):  # NULL value, a misdeclared policy: no comparison, no crash
        fields = " and ".join(repr(f) for f in (key_field, policy.get("value_field")) if f)
        return Answer(
            f"The records tool {call.name} returned no usable {fields} for {_who(call.arguments)}; "
            f"I cannot check the {rule_name}. [tool:{call.name}]",
            "abstained",
        )
    keyed = f", {key_field} {key}" if key_field else ""
    number = (
        f"Records ({_who(call.arguments)}): {policy['value_field']} = {_money(used, unit)}{keyed} [tool:{call.name}]"
    )
    search = (
        tools["vector_search"].call({"query": policy["query"], "k": 5})
        if "vector_search" in tools
        else {"error": "no vector_search"}
    )
    found = None
    if not is_error(search):
        chunks = index.store.get_chunks([h["chunk_id"] for h in search["hits"]])
        for h in search["hits"]:
            c = chunks.get(h["chunk_id"])
            if c is None:
                continue
            value = find_rule_value(c.text, key, unit) if key else None
            normal = RuleValue(*value) if value else (None if key else find_general_value(c.text, unit))
            if normal:
                found = (normal, c)
                break
    if found is None:
        whose = f" for {key}" if key else ""
        return Answer(
            f"{number}. I found no document stating the {rule_name}{whose}, so I cannot say whether it was exceeded.",
            "partial",
        )
    normal, c = found
    as_of = _as_of(row, policy, today)
    exc = find_exception(
        c.text, key=key, keys=_table_keys(c.text), unit=unit, normal=normal.value, row=row, as_of=as_of
    )
    limit = exc.value if exc and exc.applies else normal.value
    cmp = compare(used, limit)
    where = f" on the {key} {key_field.replace('_', ' ')}" if key else ""
    text = f"{'Yes' if cmp.exceeded else 'No'}. {number}. The {rule_name}{where} is {_money(normal.value, unit)} [doc:{c.doc_id}]."
    spans = [(normal.start, normal.end)]
    if exc and exc.applies:
        since = f" ({exc.field} {row.get(exc.field)}, as of {as_of.isoformat()})" if exc.field else ""
        text += (
            f" Exception: in the first {exc.days} days after {exc.event} it is {_money(exc.value, unit)}{since} "
            f"[doc:{c.doc_id}]."
        )
        spans.append((exc.start, exc.end))
    text += " Computed: " + _relation(cmp, unit) + "."
    cits = [
        Citation(c.doc_id, c.title, c.version, c.updated, c.chunk_id, *source_span(c.text, c.start, c.end, s, e))
        for s, e in spans
    ]
    ans = Answer(
        text,
        "answered",
        cits,
        retrieved_ids=[h["chunk_id"] for h in search["hits"]],
        used_ids=[c.chunk_id],
        best_score=1.0,
    )
    ans.evidence = {
        "comparison": {
            "used": cmp.used,
            "limit": cmp.limit,
            "exceeded": cmp.exceeded,
            "difference": cmp.difference,
            "unit": unit,
            "exception": None
            if not (exc and exc.applies)
            else {"days": exc.days, "event": exc.event, "field": exc.field, "value": exc.value},
        }
    }
    return ans


def _relation(cmp: Comparison, unit: str) -> str:
    m = lambda x: _money(x, unit)  # noqa: E731
    if cmp.exceeded:
        return f"{m(cmp.used)} > {m(cmp.limit)}: exceeded by {m(cmp.difference)}"
    if cmp.limit:
        return f"{m(cmp.used)} <= {m(cmp.limit)}: {m(max(0.0, -cmp.difference))} remaining ({100 * cmp.used / cmp.limit:.1f}% used)"
    return f"{m(cmp.used)} <= {m(cmp.limit)}"
