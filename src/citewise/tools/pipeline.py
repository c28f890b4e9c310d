"""Answer a question through the router: record -> tool, both -> rule + number + comparison in code.

:func:`route_and_answer` is what ``citewise ask`` calls first. It returns ``None`` for
``document`` and ``none`` routes, so the caller falls through to the document answerer (which
answers with citations or abstains on its own evidence threshold).

* ``record``: the record tool's rows, cited as ``[tool:NAME]``.
* ``both``: the record tool gives the number (e.g. ``outgoing_usd`` and ``plan``); the tool's
  ``policy.query`` is searched in the documents (with the asker's permissions) and the rule value
  for the record's key (the row's ``policy.key_field``, e.g. ``Starter``) is read from the first
  passage line naming the key and an amount in USD (the plan table row
  ``| Starter | 5,000 USD | ...``); the comparison ``used > limit`` is computed here, in code, and
  the answer cites both ``[tool:NAME]`` and ``[doc:ID]``. Missing pieces make the outcome
  ``partial`` (number without rule) or ``abstained`` (no record).

Which records database: the caller says (``citewise.api.Citewise`` passes ``records.database``
from the settings, ``CITEWISE_DB`` or ``--db``); without one nothing is routed.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from citewise.core import Answer, Citation, Principal
from citewise.telemetry import traced_route
from citewise.tools.base import is_error

_USD = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*USD")


@dataclass(frozen=True)
class Comparison:
    """The check computed in code for a *both* route (amounts in USD)."""

    used: float
    limit: float
    exceeded: bool
    difference: float  # used - limit


def find_rule_value(text: str, key: str) -> tuple[float, int, int] | None:
    """The first USD amount after ``key`` on a line of ``text`` that names ``key`` as a word.

    Returns ``(value, start, end)`` with the line's character offsets in ``text``, or None.
    """
    pos = 0
    for line in text.splitlines(keepends=True):
        m = re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", line, re.IGNORECASE)
        if m:
            amount = _USD.search(line, m.end())
            if amount:
                return float(amount.group(1).replace(",", "")), pos, pos + len(line.rstrip("\n"))
        pos += len(line)
    return None


def _money(x: float) -> str:
    return f"{x:,.2f} USD"


def _record_answer(name: str, obs: dict) -> Answer:
    if is_error(obs):
        return Answer(f"The records tool {name} failed: {obs['error']}", "abstained")
    if not obs["rows"]:
        args = ", ".join(f"{k}={v}" for k, v in obs.get("args", {}).items())
        return Answer(f"No record matches {name}({args}). [tool:{name}]", "answered")
    lines = ["; ".join(f"{k}: {v}" for k, v in row.items()) for row in obs["rows"][:20]]
    more = f" ({obs['row_count'] - 20} more rows not shown)" if obs["row_count"] > 20 else ""
    return Answer(" | ".join(lines) + more + f" [tool:{name}]", "answered")


@traced_route
def route_and_answer(question: str, index, db: str | None = None, principal: Principal | None = None,
                     today: _dt.date | None = None, *, router=None, tools=None, filters=None) -> Answer | None:
    """Answer through a record tool when the router says record/both; None otherwise (also
    when no records database is given).

    ``router`` and ``tools`` (the principal's :class:`~citewise.tools.registry.ToolSet`) are
    built from ``db`` when not given; :class:`citewise.api.Citewise` builds them once.
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
    call = route.calls[0]
    obs = tools.call(call.name, call.arguments)
    ans = _answer_from_tool(route.kind, call, obs, tools, index)
    ans.tool_calls = [{"tool": call.name, "arguments": dict(call.arguments),
                       "error": obs["error"] if is_error(obs) else None,
                       "rows": None if is_error(obs) else obs.get("row_count", len(obs.get("rows", [])))}]
    return ans


def _answer_from_tool(kind: str, call, obs: dict, tools, index) -> Answer:
    """The answer of a ``record`` or ``both`` route from the tool's observation."""
    if kind == "record":
        return _record_answer(call.name, obs)
    policy = tools[call.name].policy or {}
    if is_error(obs) or not obs["rows"]:
        return _record_answer(call.name, obs) if is_error(obs) else Answer(
            f"No record for {', '.join(f'{k}={v}' for k, v in call.arguments.items())}; I cannot check the "
            f"{policy.get('rule', 'rule')}. [tool:{call.name}]", "abstained")
    row = obs["rows"][0]
    try:
        key, used = str(row[policy["key_field"]]), float(row[policy["value_field"]])
        if used != used or used in (float("inf"), float("-inf")):
            raise ValueError(used)
    except (KeyError, TypeError, ValueError):  # NULL total, a misdeclared policy: no comparison, no crash
        fields = f"{policy.get('key_field')!r} and {policy.get('value_field')!r}"
        return Answer(f"The records tool {call.name} returned no usable {fields} for "
                      f"{', '.join(f'{k}={v}' for k, v in call.arguments.items())}; I cannot check the "
                      f"{policy.get('rule', 'rule')}. [tool:{call.name}]", "abstained")
    who = ", ".join(f"{k}={v}" for k, v in call.arguments.items())
    number = f"Records ({who}): {policy['value_field']} = {_money(used)}, plan {key} [tool:{call.name}]"
    search = tools["vector_search"].call({"query": policy["query"], "k": 5})
    rule = None
    if not is_error(search):
        chunks = index.store.get_chunks([h["chunk_id"] for h in search["hits"]])
        for h in search["hits"]:
            c = chunks.get(h["chunk_id"])
            found = find_rule_value(c.text, key) if c else None
            if found:
                rule = (found, c)
                break
    if rule is None:
        return Answer(f"{number}. I found no document stating the {policy.get('rule', 'rule')} for {key}, "
                      "so I cannot say whether it was exceeded.", "partial")
    (limit, s, e), c = rule
    cmp = Comparison(used, limit, used > limit, round(used - limit, 2))
    rule_name = policy.get("rule", "limit")
    verdict = "Yes" if cmp.exceeded else "No"
    relation = (f"{_money(used)} > {_money(limit)}: exceeded by {_money(cmp.difference)}" if cmp.exceeded else
                f"{_money(used)} <= {_money(limit)}: {_money(-cmp.difference)} remaining "
                f"({100 * used / limit:.1f}% used)" if limit else f"{_money(used)} <= {_money(limit)}")
    text = (f"{verdict}. {number}. The {rule_name} on the {key} plan is {_money(limit)} "
            f"[doc:{c.doc_id}]. Computed: {relation}.")
    cit = Citation(c.doc_id, c.title, c.version, c.updated, c.chunk_id, c.start + s, c.start + e)
    return Answer(text, "answered", [cit], retrieved_ids=[h["chunk_id"] for h in search["hits"]],
                  used_ids=[c.chunk_id], best_score=1.0)
