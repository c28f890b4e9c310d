r"""The ``Tool`` seam (DESIGN.md): name, description, JSON Schema parameters, ``call(args)``.

A tool is offered to a router or an LLM in the OpenAI tools format::

    {"type": "function", "function": {"name": ..., "description": ..., "parameters": {...}}}

``call(args) -> observation`` returns a JSON-serialisable dict. Failures are observations too,
never exceptions: ``{"error": "<one line>", "tool": "<name>"}`` (plus ``"retryable": true`` for
failures that may succeed on a second try, such as timeouts or a lost connection).

Arguments are checked against the tool's JSON Schema by :func:`validate_args` before the tool
runs: the subset used by our tools and by BFCL (``type`` object/string/integer/number/boolean/
array, ``required``, ``enum``, ``pattern``, ``format: date``, ``minimum``/``maximum``,
``additionalProperties: false`` implied: unknown arguments are rejected).

``pattern`` follows JSON Schema (ECMA-262): it may match anywhere, but ``$`` is the end of the
string, so ``^C-[0-9]{4}$`` refuses ``"C-1002\n"`` (Python's ``$`` would accept a trailing
newline; :func:`schema_regex` translates it to ``\Z``).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Protocol, runtime_checkable


@runtime_checkable
class Tool(Protocol):
    """Anything a router or agent can call."""

    name: str
    description: str
    parameters: dict

    def call(self, args: dict) -> dict:
        """Run with ``args`` (already JSON-decoded); return an observation dict (errors included)."""
        ...


def error(tool: str, message: str, retryable: bool = False) -> dict:
    """The observation for a failure: ``{"error": message, "tool": tool}`` (+ ``retryable``)."""
    obs: dict[str, Any] = {"error": message, "tool": tool}
    if retryable:
        obs["retryable"] = True
    return obs


def is_error(observation: Any) -> bool:
    """Whether an observation reports a failure."""
    return isinstance(observation, dict) and "error" in observation


def spec(tool: Tool) -> dict:
    """The tool in the OpenAI tools format (``{"type": "function", "function": {...}}``)."""
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def canonical_args(args: dict) -> str:
    """Canonical JSON of arguments (sorted keys, no spaces): the cache and comparison key.

    Never raises: integers beyond 64 bits are written as ``{"$int": "0x..."}`` (``str()`` of an
    integer over 4,300 digits raises in Python 3.11+), NaN/infinity and other values as ``str``.
    """

    def norm(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): norm(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [norm(x) for x in v]
        if isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**63:
            return {"$int": hex(v)}
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        return v

    try:
        return json.dumps(norm(args), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except (ValueError, TypeError, RecursionError) as e:
        return f"<arguments not serialisable: {type(e).__name__}>"


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def schema_regex(pattern: str) -> re.Pattern:
    r"""Compile a JSON Schema ``pattern`` with ECMA-262's ``$`` (end of string, never before a
    final newline): every ``$`` outside a character class and not escaped becomes ``\Z``.

    Raises:
        re.error: the pattern is not a valid regular expression.
    """
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":  # a leading ']' after '[' or '[^' is a literal
                out.append("[^")
                i += 2
                ch = None
            else:
                out.append("[")
                i += 1
                ch = None
            if pattern[i : i + 1] == "]":
                out.append("]")
                i += 1
            continue
        elif ch == "$":
            out.append(r"\Z")
            i += 1
            continue
        out.append(ch)
        i += 1
    return re.compile("".join(out))


def _show(value: Any) -> str:
    """A short JSON rendering of a value for an error message (never raises)."""
    try:
        return json.dumps(value, default=str)[:60]
    except (ValueError, TypeError, RecursionError):  # e.g. an int beyond str()'s digit limit
        return f"<{type(value).__name__}>"


def _check(value: Any, schema: dict, where: str) -> str | None:
    typ = schema.get("type")
    if typ:
        types = typ if isinstance(typ, list) else [typ]
        if not any(_TYPES.get(t, lambda v: True)(value) for t in types):
            return f"{where} must be {' or '.join(types)}, got {type(value).__name__} {_show(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} must be one of {', '.join(map(str, schema['enum']))}; got {_show(value)}"
    if isinstance(value, str):
        if "pattern" in schema:
            try:
                matched = schema_regex(schema["pattern"]).search(value)
            except re.error as e:
                return f"{where}: the tool's schema pattern {schema['pattern']!r} is invalid ({e})"
            if not matched:
                return f"{where} does not match {schema['pattern']}: {value[:60]!r}"
        if schema.get("format") == "date":
            try:
                _dt.date.fromisoformat(value)
                if len(value) != 10:
                    raise ValueError
            except ValueError:
                return f"{where} must be a date YYYY-MM-DD, got {value[:60]!r}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{where} is longer than {schema['maxLength']} characters"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where} must be >= {schema['minimum']}, got {_show(value)}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where} must be <= {schema['maximum']}, got {_show(value)}"
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            msg = _check(item, schema["items"], f"{where}[{i}]")
            if msg:
                return msg
    if isinstance(value, dict) and "properties" in schema:
        return _validate(value, schema, where)
    return None


_INTEGER_TEXT = re.compile(r"[+-]?\d+")


def coerce_args(args: Any, schema: dict) -> Any:
    """``args`` with each top-level string value converted to the scalar type its property
    declares, when the whole string is that type's JSON literal: ``"2011"`` for an ``integer``,
    ``"12.5"`` for a ``number``, ``"true"``/``"false"`` for a ``boolean``. Small models write
    numbers quoted; anything else is left as it is for :func:`validate_args` to judge.

    >>> coerce_args({"year": "2011", "country": "Germany"}, {"properties": {"year": {"type": "integer"}}})
    {'year': 2011, 'country': 'Germany'}
    >>> coerce_args({"year": "20x1"}, {"properties": {"year": {"type": "integer"}}})
    {'year': '20x1'}
    """
    if not isinstance(args, dict):
        return args
    props = schema.get("properties") or {}
    out = dict(args)
    for key, value in args.items():
        kind = (props.get(key) or {}).get("type") if isinstance(key, str) else None
        if not isinstance(value, str) or kind not in ("integer", "number", "boolean"):
            continue
        text = value.strip()
        if kind == "integer" and _INTEGER_TEXT.fullmatch(text):
            out[key] = int(text)
        elif kind == "number":
            try:
                number = float(text)
            except ValueError:
                continue
            if math.isfinite(number):
                out[key] = int(number) if _INTEGER_TEXT.fullmatch(text) else number
        elif kind == "boolean" and text.lower() in ("true", "false"):
            out[key] = text.lower() == "true"
    return out


def validate_args(args: Any, schema: dict, where: str = "arguments") -> str | None:
    """Check ``args`` against an object JSON Schema; return the first problem as one line, or None.

    Unknown keys are rejected (a model inventing an argument is an error, not a silent no-op).
    Never raises: a schema this checker cannot apply (say ``minimum: "x"``) is reported as a problem.
    """
    try:
        return _validate(args, schema, where)
    except (TypeError, ValueError, RecursionError) as e:
        return f"{where}: cannot be checked against the tool's schema ({type(e).__name__}: {e})"


def _validate(args: Any, schema: dict, where: str) -> str | None:
    if not isinstance(args, dict):
        return f"{where} must be a JSON object, got {type(args).__name__}"
    props = schema.get("properties") or {}
    for key in schema.get("required") or []:
        if key not in args or args[key] is None:
            return f"missing required argument '{key}'"
    if not all(isinstance(k, str) for k in args):
        return f"{where} must have string keys"
    for key in sorted(args):
        if key not in props:
            return f"unknown argument '{key}' (valid: {', '.join(sorted(props)) or 'none'})"
        if args[key] is None and key not in (schema.get("required") or []):
            continue
        msg = _check(args[key], props[key], f"argument '{key}'")
        if msg:
            return msg
    return None


@dataclass
class FunctionTool:
    """A tool around a Python callable ``fn(**args) -> dict``; exceptions become observations.

    Used for tests and small adapters. ``fn`` returning a non-dict is wrapped as ``{"result": x}``.
    """

    name: str
    description: str
    parameters: dict
    fn: Callable[..., Any]

    def call(self, args: dict) -> dict:
        problem = validate_args(args, self.parameters)
        if problem:
            return error(self.name, problem)
        try:
            result = self.fn(**args)
        except Exception as e:  # a tool failure is an observation (DESIGN.md)
            return error(self.name, f"{type(e).__name__}: {e}", retryable=True)
        return result if isinstance(result, dict) else {"result": result}
