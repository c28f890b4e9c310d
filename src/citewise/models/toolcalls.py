"""Tool calls as real chat servers send them, read into one shape.

OpenAI-compatible servers return a function call in one of these forms, depending on the
server, its chat template and the model:

* ``message.tool_calls`` — the OpenAI field (vLLM with a tool parser, llama.cpp ``--jinja``,
  Ollama, OpenAI).
* In ``message.content``, when the server does not parse the model's output:

  - Hermes / Qwen 2.5 tags: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (one
    block per call; a missing closing tag at the end of the reply is accepted);
  - Llama 3.1 / 3.2: ``<|python_tag|>{"name": ..., "parameters": {...}}`` (several separated by
    ``;``), or ``<|python_tag|>NAME.call(key="value", ...)``, or ``<function=NAME>{...}</function>``;
  - ``functions.NAME:{...}`` (also ``to=functions.NAME``), as some fine-tunes write the OpenAI
    call syntax;
  - a JSON object (or a list of them) in the reply, bare or in a Markdown code fence:
    ``{"name": ..., "arguments": {...}}``, ``{"name": ..., "parameters": {...}}``,
    ``{"function": {"name": ..., "arguments": ...}}`` or ``{"tool_calls": [...]}``
    (llama-cpp-python's default chat template with a Qwen 2.5 GGUF answers with a fenced
    object).

:func:`parse_content` reads these; a call is **malformed** when its JSON does not parse, it
names no tool or a tool that was not offered, its arguments are not an object, or a required
parameter is missing. :func:`repair_message` is the one follow-up turn the chat client sends
then (:meth:`citewise.models.chat.OpenAIChatModel.chat`); a reply still malformed fails closed.
Plain prose with none of these forms is an answer without a tool call, not a malformed call.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

#: Tool call formats, as reported in :attr:`Parsed.format` and ``ChatResponse.tool_format``.
FORMATS = ("tool_calls", "tool_call_tags", "python_tag", "function_tags", "functions_prefix", "json")

_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_PYTHON_TAG = re.compile(r"<\|python_tag\|>\s*(.*?)\s*(?:<\|eom_id\|>|<\|eot_id\|>|$)", re.S)
_FUNCTION_TAG = re.compile(r"<function=([\w.\-]+)>\s*(.*?)\s*(?:</function>|$)", re.S)
_PREFIX = re.compile(r"(?:to=)?functions\.([\w\-]+)\s*:?(?:\s*(?:<\|[a-z_]+\|>|json\b))*\s*", re.S)
_FENCE = re.compile(r"```(?:json|tool_call|tool_code|javascript)?\s*\n?(.*?)```", re.S | re.I)
_CALL_SYNTAX = re.compile(r"^([\w.\-]+?)(?:\.call)?\((.*)\)\s*;?\s*$", re.S)


@dataclass(frozen=True)
class Call:
    """One call read from a reply: ``name``, parsed ``arguments``, and the arguments as JSON text."""

    name: str
    arguments: dict
    raw_arguments: str


@dataclass
class Parsed:
    """What :func:`parse_content` found.

    Attributes:
        calls: well-formed calls, in order.
        format: which form they came in (:data:`FORMATS`), '' when none.
        problem: why the reply's tool call is malformed ('' when it is not).
        text: the reply with the call blocks removed (the model's thought, or its answer).
    """

    calls: list[Call] = field(default_factory=list)
    format: str = ""
    problem: str = ""
    text: str = ""


def tool_names(tools: Sequence[dict] | None) -> dict[str, dict]:
    """``{name: parameters schema}`` of OpenAI-format tool specs."""
    out: dict[str, dict] = {}
    for t in tools or ():
        fn = t.get("function", t) if isinstance(t, dict) else {}
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            out[fn["name"]] = fn.get("parameters") or {}
    return out


def _loads(text: str) -> Any:
    """A JSON value from ``text``; trailing text after the first complete value is ignored.

    Raises:
        ValueError: no JSON value at the start.
    """
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        value, _ = json.JSONDecoder().raw_decode(text)
        return value


def check_call(name: Any, args: Any, offered: dict[str, dict]) -> tuple[Call | None, str]:
    """``(Call, '')`` for a well-formed call, else ``(None, problem)``.

    ``args`` may be a dict or a JSON string (OpenAI sends a string)."""
    if not isinstance(name, str) or not name:
        return None, "the call names no tool"
    if offered and name not in offered:
        return None, f"'{name}' is not one of the tools offered ({', '.join(sorted(offered))})"
    raw = args
    if args is None:
        args = {}
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError as e:
            return None, f"the arguments of '{name}' are not valid JSON ({e.msg} at character {e.pos})"
    if not isinstance(args, dict):
        return None, f"the arguments of '{name}' are not a JSON object"
    required = (offered.get(name) or {}).get("required") or []
    missing = [r for r in required if r not in args]
    if missing:
        return None, f"'{name}' is missing its required argument(s) {', '.join(missing)}"
    raw_text = raw if isinstance(raw, str) and raw.strip() else json.dumps(args, ensure_ascii=False)
    return Call(name, args, raw_text), ""


def _from_object(obj: Any, offered: dict[str, dict]) -> tuple[list[Call], str] | None:
    """Calls from a decoded JSON value that has the shape of a call (None: it has not)."""
    if isinstance(obj, list):
        if not obj or not all(isinstance(o, dict) for o in obj):
            return None
        calls: list[Call] = []
        for o in obj:
            got = _from_object(o, offered)
            if got is None:
                return None
            if got[1]:
                return [], got[1]
            calls.extend(got[0])
        return calls, ""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("tool_calls"), list):
        return _from_object(obj["tool_calls"], offered)
    fn = obj.get("function")
    if isinstance(fn, dict) and "name" in fn:
        obj = fn
    if "name" not in obj:
        return None
    args = obj.get("arguments", obj.get("parameters"))
    call, problem = check_call(obj.get("name"), args, offered)
    return ([call], "") if call else ([], problem)


def _call_syntax(text: str, offered: dict[str, dict]) -> tuple[list[Call], str] | None:
    """``NAME.call(key="value")`` / ``NAME(key=value)`` (Llama 3 built-in tool syntax)."""
    m = _CALL_SYNTAX.match(text.strip())
    if not m:
        return None
    name = m.group(1)
    try:
        tree = ast.parse(f"f({m.group(2)})", mode="eval")
        args = {kw.arg: ast.literal_eval(kw.value) for kw in tree.body.keywords if kw.arg}
    except (SyntaxError, ValueError):
        return [], f"the arguments of '{name}' could not be read: {m.group(2)[:80]!r}"
    call, problem = check_call(name, args, offered)
    return ([call], "") if call else ([], problem)


def _json_blocks(text: str, offered: dict[str, dict]) -> tuple[list[Call], str, list[tuple[int, int]]]:
    """Calls from JSON in ``text``: code fences first, else the reply as one JSON value, else the
    first ``{`` ... that decodes. Returns ``(calls, problem, spans used)``."""
    calls: list[Call] = []
    spans: list[tuple[int, int]] = []
    for m in _FENCE.finditer(text):
        try:
            obj = _loads(m.group(1))
        except ValueError:
            if re.search(r'"name"\s*:', m.group(1)):
                return [], "the tool call is not valid JSON", [m.span()]
            continue
        got = _from_object(obj, offered)
        if got is None:
            continue
        if got[1]:
            return [], got[1], [m.span()]
        calls.extend(got[0])
        spans.append(m.span())
    if calls:
        return calls, "", spans
    start = text.find("{") if text.lstrip()[:1] != "[" else text.find("[")
    while start != -1:
        try:
            obj, end = json.JSONDecoder().raw_decode(text[start:])
        except ValueError:
            obj, end = None, 0
        if obj is not None:
            got = _from_object(obj, offered)
            if got is not None:
                return got[0], got[1], [(start, start + end)]
        start = text.find("{", start + 1)
    if re.search(r'^\s*[\[{].*"(?:name|function)"\s*:', text, re.S):
        return [], "the tool call is not valid JSON", [(0, len(text))]
    return [], "", []


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    out, pos = [], 0
    for s, e in sorted(spans):
        out.append(text[pos:s])
        pos = max(pos, e)
    out.append(text[pos:])
    return " ".join("".join(out).split())


def parse_content(content: str | None, tools: Sequence[dict] | None) -> Parsed:
    """Tool calls written in a reply's text (module docstring), checked against ``tools``."""
    text = content or ""
    offered = tool_names(tools)
    if not text.strip():
        return Parsed(text="")
    for fmt, pattern in (("tool_call_tags", _TAG), ("function_tags", _FUNCTION_TAG), ("python_tag", _PYTHON_TAG)):
        found = list(pattern.finditer(text))
        if not found:
            continue
        calls: list[Call] = []
        for m in found:
            if fmt == "function_tags":
                body = m.group(2) or "{}"
                try:
                    args = _loads(body)
                except ValueError:
                    return Parsed(
                        [], fmt, f"the arguments of '{m.group(1)}' are not valid JSON", _cut(text, [m.span()])
                    )
                call, problem = check_call(m.group(1), args, offered)
                got = ([call], "") if call else ([], problem)
            else:
                got = None
                for piece in (
                    m.group(1).split(";")
                    if fmt == "python_tag" and not m.group(1).lstrip().startswith("[")
                    else [m.group(1)]
                ):
                    if not piece.strip():
                        continue
                    try:
                        part = _from_object(_loads(piece), offered)
                    except ValueError:
                        part = _call_syntax(piece, offered) if fmt == "python_tag" else None
                    if part is None:
                        return Parsed(
                            [],
                            fmt,
                            "the tool call is not a JSON object with a name and arguments",
                            _cut(text, [m.span()]),
                        )
                    if part[1]:
                        return Parsed([], fmt, part[1], _cut(text, [m.span()]))
                    got = (got[0] + part[0], "") if got else part
                if got is None:
                    return Parsed([], fmt, "the tool call is empty", _cut(text, [m.span()]))
            if got[1]:
                return Parsed([], fmt, got[1], _cut(text, [m.span()]))
            calls.extend(got[0])
        return Parsed(calls, fmt, "", _cut(text, [m.span() for m in found]))
    prefixed = list(_PREFIX.finditer(text))
    if prefixed:
        calls = []
        spans = []
        for m in prefixed:
            rest = text[m.end() :]
            try:
                args, end = json.JSONDecoder().raw_decode(rest.lstrip())
            except ValueError:
                return Parsed(
                    [],
                    "functions_prefix",
                    f"the arguments of '{m.group(1)}' are not valid JSON",
                    _cut(text, [m.span()]),
                )
            call, problem = check_call(m.group(1), args, offered)
            if problem:
                return Parsed([], "functions_prefix", problem, _cut(text, [m.span()]))
            calls.append(call)
            spans.append((m.start(), m.end() + (len(rest) - len(rest.lstrip())) + end))
        return Parsed(calls, "functions_prefix", "", _cut(text, spans))
    calls, problem, spans = _json_blocks(text, offered)
    if calls or problem:
        return Parsed(calls, "json", problem, _cut(text, spans))
    return Parsed(text=text.strip())


def repair_message(problem: str, tools: Sequence[dict] | None) -> dict:
    """The user turn sent after a malformed call: what was wrong, the one accepted form, the
    tools' names and required arguments."""
    offered = tool_names(tools)
    listing = "; ".join(f"{n}({', '.join((s or {}).get('required') or [])})" for n, s in sorted(offered.items()))
    return {
        "role": "user",
        "content": (
            f"Your tool call could not be read: {problem}. Reply again with only the call, as one JSON object "
            '{"name": "TOOL", "arguments": {...}} per call (a JSON list for several), using only these tools '
            f"and their required arguments: {listing}. If no tool applies, answer in plain text without JSON."
        ),
    }


def prompted_tools(tools: Sequence[dict]) -> str:
    """A system-prompt paragraph describing ``tools`` for servers that refuse the ``tools``
    field: the model then writes calls as JSON in its reply, which :func:`parse_content` reads."""
    specs = [t.get("function", t) for t in tools]
    return (
        "You can call these tools. To call one, reply with only a JSON object "
        '{"name": "TOOL", "arguments": {...}} (a JSON list for several calls); to answer without a tool, '
        "reply in plain text.\nTools:\n" + "\n".join(json.dumps(s, ensure_ascii=False) for s in specs)
    )
