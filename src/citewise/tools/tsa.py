"""Tool selection accuracy (TSA) and argument accuracy of a router on a routing set.

A routing set is JSON Lines, one case per line (sample: ``sample/routing.jsonl``, labelled before
the router was written)::

    {"id": "r01", "kind": "record", "text": "What is the status of invoice 2041?",
     "expected_tool": "invoice_status", "expected_args": {"invoice_id": 2041}, "today": "2026-11-20"}

``kind`` is record | both | live | document | none; ``expected_tool`` is null for none,
``vector_search`` for document, ``web_search`` for live and ``sql_query`` for a record question no
named query answers; ``today`` (optional) resolves relative dates.

Definitions (per case, then means overall and per kind):

* **TSA** (tool selection accuracy): the route's kind equals the expected kind *and* its primary
  tool equals ``expected_tool`` (none: no tool). A router that picks the right record tool but
  misses that the question also needs the policy (``both``) is wrong.
* **argument accuracy**: over cases with non-empty ``expected_args`` only: the selection is
  correct and the primary call's arguments equal ``expected_args`` exactly (keys and values,
  None-valued arguments dropped).
* **route accuracy**: kind only.
* **wrong source** (count): record, both and live questions routed to the documents, or to a tool
  other than the expected one (``sql_query`` is the general records tool and counts as right for
  a record or both question; for a live question only ``web_search`` does).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path

from citewise.core import MAX_QUERY_CHARS, InputError
from citewise.text.lines import jsonl_rows
from citewise.tools.route import KINDS, Route


@dataclass(frozen=True)
class RoutingCase:
    id: str
    kind: str
    text: str
    expected_tool: str | None
    expected_args: dict
    today: _dt.date | None = None


def load_routing_set(path: str | Path) -> list[RoutingCase]:
    """Read a routing set (see module docstring).

    Raises:
        InputError: a line is not JSON or misses/has a wrong field (file and line named).
    """
    path = Path(path)
    cases, seen = [], set()
    for n, d in jsonl_rows(path, "routing set", max_text=MAX_QUERY_CHARS):
        for key in ("id", "kind", "text"):
            if not isinstance(d.get(key), str) or not d[key]:
                raise InputError(str(path), f"field '{key}' must be a non-empty string", n)
        if d["kind"] not in KINDS:
            raise InputError(str(path), f"kind must be one of {', '.join(KINDS)}, got {d['kind']!r}", n)
        if d["id"] in seen:
            raise InputError(str(path), f"duplicate id {d['id']!r}", n)
        seen.add(d["id"])
        tool = d.get("expected_tool")
        if (tool is None) != (d["kind"] == "none"):
            raise InputError(str(path), "expected_tool must be null exactly when kind is none", n)
        args = d.get("expected_args") or {}
        if not isinstance(args, dict):
            raise InputError(str(path), "expected_args must be an object", n)
        try:
            today = _dt.date.fromisoformat(d["today"]) if d.get("today") else None
        except (TypeError, ValueError):
            raise InputError(str(path), f"today must be YYYY-MM-DD, got {d.get('today')!r}", n) from None
        cases.append(RoutingCase(d["id"], d["kind"], d["text"], tool, args, today))
    if not cases:
        raise InputError(str(path), "no routing cases")
    return cases


@dataclass
class CaseResult:
    id: str
    kind: str
    predicted_kind: str
    expected_tool: str | None
    predicted_tool: str | None
    expected_args: dict
    predicted_args: dict
    selection_ok: bool
    args_ok: bool | None  # None: the case has no expected arguments
    wrong_source: bool = False


@dataclass
class TsaReport:
    """Results of one router on one routing set (means are over the cases that count)."""

    router: str
    cases: list[CaseResult] = field(default_factory=list)

    @staticmethod
    def _means(results: list[CaseResult]) -> dict:
        with_args = [r for r in results if r.args_ok is not None]
        return {
            "cases": len(results),
            "tsa": round(sum(r.selection_ok for r in results) / len(results), 4) if results else 0.0,
            "route_accuracy": round(sum(r.kind == r.predicted_kind for r in results) / len(results), 4)
            if results
            else 0.0,
            "arg_cases": len(with_args),
            "arg_accuracy": round(sum(bool(r.args_ok) for r in with_args) / len(with_args), 4) if with_args else None,
            "wrong_source": sum(r.wrong_source for r in results),
        }

    @property
    def overall(self) -> dict:
        return self._means(self.cases)

    @property
    def per_kind(self) -> dict:
        return {
            k: self._means([r for r in self.cases if r.kind == k])
            for k in KINDS
            if any(r.kind == k for r in self.cases)
        }

    def as_dict(self) -> dict:
        return {
            "router": self.router,
            "overall": self.overall,
            "per_kind": self.per_kind,
            "errors": [r.__dict__ for r in self.cases if not r.selection_ok or r.args_ok is False],
        }


def _clean(args: dict) -> dict:
    return {k: v for k, v in (args or {}).items() if v is not None}


def score_case(case: RoutingCase, route: Route) -> CaseResult:
    """Compare one route with its case (see module docstring)."""
    selection_ok = route.kind == case.kind and route.tool == case.expected_tool
    args_ok = None
    if case.expected_args:
        args_ok = selection_ok and _clean(route.arguments) == _clean(case.expected_args)
    wrong = False
    if case.kind in ("record", "both", "live"):
        allowed = {case.expected_tool} | ({"sql_query"} if case.kind != "live" else set())
        wrong = route.kind == "document" or (route.tool is not None and route.tool not in allowed)
    return CaseResult(
        case.id,
        case.kind,
        route.kind,
        case.expected_tool,
        route.tool,
        case.expected_args,
        route.arguments,
        selection_ok,
        args_ok,
        wrong,
    )


def evaluate_router(router, cases: list[RoutingCase]) -> TsaReport:
    """Route every case with ``router.route(text, today=...)`` and score it."""
    report = TsaReport(getattr(router, "name", type(router).__name__))
    for case in cases:
        report.cases.append(score_case(case, router.route(case.text, today=case.today)))
    return report
