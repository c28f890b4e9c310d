"""Tool selection accuracy on BFCL (Berkeley Function Calling Leaderboard v4) files.

Data: ``../shared/data/bfcl`` (see its PROVENANCE.md): each category file holds one JSON object
per line ``{"id", "question": [[{"role", "content"}...]], "function": [{name, description,
parameters}]}``; answers ``possible_answer/<file>`` hold ``{"id", "ground_truth":
[{func_name: {param: [acceptable values...]}}]}``. Irrelevance categories have no answers: the
right behaviour is *no* call.

Scoring (our reading of BFCL's AST checker, simplified):

* **TSA**: the set of called function names equals the set of expected names (irrelevance: no
  call at all).
* **argument accuracy** (relevant cases, when the selector fills arguments): every expected call
  has a predicted call with the same name whose arguments are acceptable: each expected parameter
  is either given with a value in its acceptable list (numbers compared as floats, strings
  case-insensitively after trimming) or omitted while ``""`` is acceptable; no argument outside
  the function's parameters.

BFCL parameter schemas use Python-ish types (``dict``, ``float``, ``tuple``, ``any``); they are
converted to JSON Schema for the OpenAI tools format, and dotted names (``math.factorial``) are
sanitised to ``math_factorial`` (OpenAI names allow ``[A-Za-z0-9_-]``) and mapped back.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from citewise.core import InputError

_TYPE_MAP = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "list": "array",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
    "double": "number",
    "long": "integer",
}


def to_json_schema(schema):
    """A BFCL parameter schema converted to JSON Schema (recursively)."""
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, v in schema.items():
        if k == "type":
            if v == "any":
                continue
            out[k] = _TYPE_MAP.get(v, v)
        elif k == "properties" and isinstance(v, dict):
            out[k] = {p: to_json_schema(s) for p, s in v.items()}
        elif k == "items":
            out[k] = to_json_schema(v)
        elif k in ("optional",):
            continue
        else:
            out[k] = v
    return out


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)


@dataclass
class BfclCase:
    """One BFCL entry: question text, offered tools (OpenAI format), expected calls (None: no call)."""

    id: str
    question: str
    tools: list[dict]
    names: dict[str, str]  # sanitised -> original
    expected: list[dict] | None
    params: dict[str, set] = field(default_factory=dict)  # original name -> parameter names


def load_bfcl(root: str | Path, category: str, limit: int | None = None) -> list[BfclCase]:
    """Cases of ``BFCL_v4_<category>.json`` (first ``limit``), with answers when the category has them.

    Raises:
        InputError: the file is missing or a line is not an entry (file and line named).
    """
    root = Path(root)
    path = root / f"BFCL_v4_{category}.json"
    if not path.is_file():
        raise InputError(str(path), "no such BFCL category file")
    answers: dict[str, list] = {}
    apath = root / "possible_answer" / path.name
    if apath.is_file():
        for n, line in enumerate(apath.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    a = json.loads(line)
                    answers[a["id"]] = a["ground_truth"]
                except (ValueError, KeyError, IndexError, TypeError, RecursionError) as e:
                    raise InputError(str(apath), f"not a BFCL answer ({type(e).__name__}: {e})", n) from None
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            turns = d["question"][0]
            question = "\n".join(m["content"] for m in turns if m.get("role") == "user")
            funcs = d["function"]
            tools, names, params = [], {}, {}
            for f in funcs:
                sname = safe_name(f["name"])
                names[sname] = f["name"]
                params[f["name"]] = set((f.get("parameters") or {}).get("properties") or {})
                tools.append(
                    {
                        "type": "function",
                        "function": {
                            "name": sname,
                            "description": f.get("description", ""),
                            "parameters": to_json_schema(f.get("parameters") or {"type": "object", "properties": {}}),
                        },
                    }
                )
            case = BfclCase(d["id"], question, tools, names, answers.get(d["id"]) if answers else None, params)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as e:
            raise InputError(str(path), f"not a BFCL entry ({type(e).__name__}: {e})", n) from None
        cases.append(case)
        if limit and len(cases) >= limit:
            break
    return cases


def _same(value, acceptable) -> bool:
    if isinstance(value, bool) or isinstance(acceptable, bool):
        return value is acceptable if isinstance(value, bool) and isinstance(acceptable, bool) else False
    if isinstance(value, (int, float)) and isinstance(acceptable, (int, float)):
        return abs(float(value) - float(acceptable)) < 1e-9
    if isinstance(value, str) and isinstance(acceptable, str):
        return value.strip().lower() == acceptable.strip().lower()
    if isinstance(value, (list, tuple)) and isinstance(acceptable, (list, tuple)):
        return len(value) == len(acceptable) and all(_same(a, b) for a, b in zip(value, acceptable))
    if isinstance(value, dict) and isinstance(acceptable, dict):
        return set(value) == set(acceptable) and all(_same(value[k], acceptable[k]) for k in value)
    return value == acceptable


def args_acceptable(args: dict, expected: dict, allowed: set) -> bool:
    """Whether ``args`` satisfy one expected call's ``{param: [acceptable...]}`` (module docstring)."""
    if any(k not in allowed for k in args):
        return False
    for param, acceptable in expected.items():
        if param in args:
            if not any(_same(args[param], a) for a in acceptable if a != ""):
                return False
        elif "" not in acceptable:
            return False
    return True


#: A selector: ``(question, tools in OpenAI format) -> [(sanitised name, args or None)]``.
Selector = Callable[[str, list[dict]], list[tuple[str, dict | None]]]


def evaluate_bfcl(select: Selector, cases: list[BfclCase]) -> dict:
    """TSA and argument accuracy of ``select`` on ``cases`` (module docstring).

    Returns ``{"cases", "tsa", "arg_cases", "arg_accuracy", "per_case": [{id, ok, args_ok}]}``;
    ``arg_accuracy`` is None when the selector fills no arguments.
    """
    per_case = []
    for c in cases:
        calls = [(c.names.get(n, n), a) for n, a in select(c.question, c.tools)]
        names = {n for n, _ in calls}
        if c.expected is None:
            ok, args_ok = not calls, None
        else:
            expected_names = {next(iter(e)) for e in c.expected}
            ok = names == expected_names
            args_ok = None
            if all(a is not None for _, a in calls) and calls:
                args_ok = ok and all(
                    any(n == next(iter(e)) and args_acceptable(a, e[n], c.params.get(n, set())) for n, a in calls)
                    for e in c.expected
                )
        per_case.append({"id": c.id, "ok": ok, "args_ok": args_ok, "called": sorted(names)})
    with_args = [p for p in per_case if p["args_ok"] is not None]
    relevant = [p for p, c in zip(per_case, cases) if c.expected is not None]
    return {
        "cases": len(cases),
        "tsa": round(sum(p["ok"] for p in per_case) / len(per_case), 4) if per_case else 0.0,
        "arg_cases": len(with_args),
        "arg_accuracy": round(sum(p["args_ok"] for p in with_args) / len(with_args), 4)
        if with_args and len(with_args) == len(relevant)
        else None,
        "per_case": per_case,
    }


def llm_selector(model) -> Selector:
    """Selector that asks an OpenAI-compatible chat model (function calling, ``tool_choice=auto``).

    A chat error counts as no call (so it can only score on irrelevance cases).
    """
    from citewise.models.chat import ChatError

    def select(question: str, tools: list[dict]):
        try:
            resp = model.chat([{"role": "user", "content": question}], tools=tools, tool_choice="auto")
        except ChatError:
            return []
        return [(c.name, c.arguments) for c in resp.tool_calls]

    return select


def embedding_selector(embedder, threshold: float = 0.15) -> Selector:
    """Baseline selector: the one tool whose ``name: description`` is most similar to the question
    (cosine, the given embedder); no call below ``threshold``; fills no arguments."""

    def select(question: str, tools: list[dict]):
        texts = [f"{t['function']['name'].replace('_', ' ')}: {t['function'].get('description', '')}" for t in tools]
        m = embedder.embed([question] + texts)
        sims = m[1:] @ m[0]
        best = int(np.argmax(sims))
        if float(sims[best]) < threshold:
            return []
        return [(tools[best]["function"]["name"], None)]

    return select
