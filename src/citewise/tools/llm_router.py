"""Routing with a chat model: one request, a small prompt, a JSON route back.

The prompt lists each tool on one line (``name(param: type, ...): what it is for``, its
description up to ``NOT for``, cut at :data:`MAX_DESCRIPTION_CHARS`) and asks for one JSON object::

    {"route": "record" | "both" | "live" | "document" | "none",
     "calls": [{"name": TOOL, "arguments": {...}}, ...]}

The route is read from native ``tool_calls`` when the server returns them, else from the first
JSON object in the reply's text (small local models answer in text more reliably than through a
tool-call template). Calls to tools not offered are dropped; a route without a kind takes it
from its calls (``web_search`` -> live, ``vector_search`` alone -> document, a record tool with
``vector_search`` -> both, else record; no call -> none), and so does one whose stated kind the
calls contradict (:func:`settle_kind`); a ``both`` route without ``vector_search`` gets one for
the question. A :class:`~citewise.models.chat.ChatError`
or a reply without a route becomes a ``none`` route whose reason says so (fail closed).
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Sequence

from citewise.tools.base import coerce_args, spec
from citewise.tools.route import KINDS, PlannedCall, Route

#: Longest tool description put in the prompt (characters).
MAX_DESCRIPTION_CHARS = 240
#: Output tokens a routing reply may use.
MAX_ROUTE_TOKENS = 256

ROUTER_SYSTEM_PROMPT = (
    "You decide which tools answer a question. Tools:\n{tools}\n"
    'Reply with one JSON object only: {{"route": R, "calls": [{{"name": TOOL, "arguments": {{...}}}}]}}. '
    "R is record (a tool looks up or computes the exact answer; sql_query when no other tool fits), "
    "both (a record value checked against a documented rule: the record tool and vector_search), "
    "live (a current public value such as a price, a rate or news: web_search), "
    "document (rules, how-to, definitions: vector_search) or none (no tool answers it; no calls). "
    "Take arguments from the question only (dates YYYY-MM-DD; today is {today})."
)

_LIVE_SPEC = {
    "name": "web_search",
    "description": "Current public information: prices, exchange rates, news, weather.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}


def _line(fn: dict) -> str:
    props = (fn.get("parameters") or {}).get("properties") or {}
    params = ", ".join(f"{n}: {s.get('type', 'any') if isinstance(s, dict) else 'any'}" for n, s in props.items())
    desc = " ".join(str(fn.get("description") or "").split("NOT for")[0].split())
    if len(desc) > MAX_DESCRIPTION_CHARS:
        desc = desc[: MAX_DESCRIPTION_CHARS - 1] + "…"
    return f"- {fn['name']}({params}): {desc}"


def first_json_object(text: str):
    """The first JSON object in ``text`` (inside a code fence or prose), or None."""
    dec = json.JSONDecoder()
    i = text.find("{")
    while i != -1:
        try:
            obj, _ = dec.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            return obj
        i = text.find("{", i + 1)
    return None


def parse_calls(content: str | None, names: set[str]) -> tuple[str | None, list[PlannedCall]]:
    """``(route kind or None, calls)`` from a reply's text (module docstring); calls to names
    outside ``names`` and non-object arguments are dropped."""
    obj = first_json_object(content or "")
    if obj is None:
        return None, []
    calls = obj.get("calls")
    if calls is None and "name" in obj:
        calls = [obj]
    out = []
    for c in calls if isinstance(calls, list) else []:
        if isinstance(c, dict) and c.get("name") in names:
            args = c.get("arguments", c.get("parameters", {}))
            if isinstance(args, str):
                args = first_json_object(args) or {}
            out.append(PlannedCall(c["name"], args if isinstance(args, dict) else {}))
    kind = obj.get("route")
    return (kind if kind in KINDS else None), out


def kind_of(calls: list[PlannedCall]) -> str:
    """The route kind a list of calls implies (module docstring)."""
    names = {c.name for c in calls}
    if not calls:
        return "none"
    if "web_search" in names:
        return "live"
    if names == {"vector_search"}:
        return "document"
    return "both" if "vector_search" in names else "record"


def settle_kind(stated: str | None, calls: list[PlannedCall]) -> str:
    """The route kind of a reply that states ``stated`` and makes ``calls``: what the calls do
    decides where the two disagree (a model that calls ``invoice_status`` while labelling the
    route ``live`` or ``document`` has routed to a record tool), except that ``none`` stays none
    (the model said no tool answers) and ``both`` stays both when a record tool is called (the
    rule's passage is searched for it). No calls: the stated kind (None: ``none``).

    >>> settle_kind("live", [PlannedCall("invoice_status", {"invoice_id": 1})])
    'record'
    >>> settle_kind("both", [PlannedCall("invoice_status", {"invoice_id": 1})])
    'both'
    >>> settle_kind("none", [PlannedCall("invoice_status", {})]), settle_kind("record", [])
    ('none', 'record')
    """
    if not calls:
        return stated or "none"
    implied = kind_of(calls)
    if stated is None or stated == implied or stated == "none":
        return stated or implied
    if stated == "both" and implied == "record":
        return "both"
    return implied


class LLMRouter:
    """Routing by a chat model (see module docstring).

    Args:
        model: a ChatModel (``chat(messages, tools=None, tool_choice=None, max_tokens=None)``).
        tools: the tools to choose from (OpenAI specs or tool objects); a ``web_search`` line is
            added when none is given (a live question is routed as live; the answer abstains
            when no web search is configured).
    """

    name = "llm"

    def __init__(self, model, tools: Sequence, *, add_live: bool = True):
        self.model = model
        self.specs = [t if isinstance(t, dict) else spec(t) for t in tools]
        fns = [s["function"] for s in self.specs]
        if add_live and not any(f["name"] == "web_search" for f in fns):
            fns.append(_LIVE_SPEC)
        self.functions = fns
        self.names = {f["name"] for f in fns}
        self.tool_lines = "\n".join(_line(f) for f in fns)

    def prompt(self, today: _dt.date) -> str:
        return ROUTER_SYSTEM_PROMPT.format(tools=self.tool_lines, today=today.isoformat())

    def route(self, question: str, today: _dt.date | None = None) -> Route:
        from citewise.models.chat import ChatError

        today = today or _dt.datetime.now(_dt.timezone.utc).date()
        messages = [{"role": "system", "content": self.prompt(today)}, {"role": "user", "content": question}]
        try:
            resp = self.model.chat(messages, max_tokens=MAX_ROUTE_TOKENS)
        except ChatError as e:
            return Route("none", [], f"LLM router failed: {e}")
        if resp.tool_calls:
            kind, calls = None, [PlannedCall(c.name, c.arguments) for c in resp.tool_calls if c.name in self.names]
        else:
            kind, calls = parse_calls(resp.content, self.names)
            if kind is None and not calls:
                return Route("none", [], f"no route in the reply: {(resp.content or '')[:120]!r}")
        kind = settle_kind(kind, calls)
        if kind == "both" and calls and not any(c.name == "vector_search" for c in calls):
            calls = [*calls, PlannedCall("vector_search", {"query": question})]
        if kind == "none":
            calls = []
        elif kind == "record" and not calls:
            calls = [PlannedCall("sql_query", {})]
        elif kind == "document" and not calls:
            calls = [PlannedCall("vector_search", {"query": question})]
        elif kind == "live" and not calls:
            calls = [PlannedCall("web_search", {"query": question})]
        params = {f["name"]: f.get("parameters") or {} for f in self.functions}
        calls = [PlannedCall(c.name, coerce_args(c.arguments, params.get(c.name, {}))) for c in calls]
        records = [c for c in calls if c.name not in ("vector_search", "web_search")]
        rest = [c for c in calls if c.name in ("vector_search", "web_search")]
        ordered = records + rest if kind in ("record", "both") else rest + records
        return Route(kind, ordered, "LLM route")

    def select(self, question: str) -> list[tuple[str, dict]]:
        """The calls of :meth:`route` as ``(name, arguments)``, for BFCL-style scoring
        (:func:`citewise.tools.bfcl.evaluate_bfcl`)."""
        r = self.route(question)
        return [
            (c.name, c.arguments)
            for c in r.calls
            if c.name != "web_search" or "web_search" in {s["function"]["name"] for s in self.specs}
        ]


def router_selector(model):
    """A BFCL selector (:data:`citewise.tools.bfcl.Selector`) that routes with :class:`LLMRouter`
    over each case's functions (no ``web_search`` line added)."""

    def select(question: str, tools: list[dict]):
        return LLMRouter(model, tools, add_live=False).select(question)

    return select
