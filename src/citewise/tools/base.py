"""The ``Tool`` seam (DESIGN.md): name, description, JSON Schema parameters, ``call(args)``.

A tool is offered to a router or an LLM in the OpenAI tools format::

    {"type": "function", "function": {"name": ..., "description": ..., "parameters": {...}}}

``call(args) -> observation`` returns a JSON-serialisable dict. Failures are observations too,
never exceptions: ``{"error": "<one line>", "tool": "<name>"}`` (plus ``"retryable": true`` for
failures that may succeed on a second try, such as timeouts or a lost connection).

Arguments are checked against the tool's JSON Schema by :func:`validate_args` before the tool
runs: the subset used by our tools and by BFCL (``type`` object/string/integer/number/boolean/
array, ``required``, ``enum``, ``pattern``, ``format: date``, ``minimum``/``maximum``,
``additionalProperties: false`` implied: unknown arguments are rejected).
"""

from __future__ import annotations

import datetime as _dt
import json
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
    return {"type": "function", "function": {"name": tool.name, "description": tool.description,
                                             "parameters": tool.parameters}}


def canonical_args(args: dict) -> str:
    """Canonical JSON of arguments (sorted keys, no spaces): the cache and comparison key."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _check(value: Any, schema: dict, where: str) -> str | None:
    typ = schema.get("type")
    if typ:
        types = typ if isinstance(typ, list) else [typ]
        if not any(_TYPES.get(t, lambda v: True)(value) for t in types):
            return f"{where} must be {' or '.join(types)}, got {type(value).__name__} {json.dumps(value, default=str)[:60]}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} must be one of {', '.join(map(str, schema['enum']))}; got {json.dumps(value, default=str)[:60]}"
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
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
            return f"{where} must be >= {schema['minimum']}, got {value}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where} must be <= {schema['maximum']}, got {value}"
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            msg = _check(item, schema["items"], f"{where}[{i}]")
            if msg:
                return msg
    if isinstance(value, dict) and "properties" in schema:
        return validate_args(value, schema, where)
    return None


def validate_args(args: Any, schema: dict, where: str = "arguments") -> str | None:
    """Check ``args`` against an object JSON Schema; return the first problem as one line, or None.

    Unknown keys are rejected (a model inventing an argument is an error, not a silent no-op).
    """
    if not isinstance(args, dict):
        return f"{where} must be a JSON object, got {type(args).__name__}"
    props = schema.get("properties") or {}
    for key in schema.get("required") or []:
        if key not in args or args[key] is None:
            return f"missing required argument '{key}'"
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
