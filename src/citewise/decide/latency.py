"""Latency of the ReAct loop, measured from recorded spans (``citewise decide latency``).

The tool-calling design document writes one iteration of the loop as
``T_iter = TTFT_LLM + T_tool + Δ_context`` and a run as the sum of its iterations plus the final
synthesis; tool calls made in one turn run in parallel, so they cost ``max(...)``, not the sum.
Its reference values give 150 + 50 = 200 ms for one step, (150 + 50) + (180 + 20) + 400 = 800 ms
for two, ≈ 1,100 ms for three, and 150 + max(50, 20) + 400 = 600 ms for two parallel calls.
It says to measure rather than guess; this module measures those terms from spans.

Input: the spans of :class:`citewise.tools.agent.Agent` runs (``invoke_agent citewise`` with its
``chat {model}`` and ``execute_tool {tool}`` descendants), read from an OTLP/JSON lines file
(:mod:`citewise.telemetry_file`: what ``CITEWISE_TRACES_FILE`` records, or a collector's ``file``
exporter). Per run, chat spans in start order are the steps; the tool spans that start after a
chat span and before the next chat belong to that chat's step. For step *i* of a run:

* **T1** — the LLM call at the starting context: the duration of the run's first chat span.
* **T2** — the tool phase: ``max(end) - min(start)`` of the step's tool spans (parallel calls
  cost the max; a retried call counts both attempts). ``tools_sequential_s`` is the sum of their
  durations — what the same calls would cost one after the other.
* **T3** — everything else of the step: its wall time (this chat's start to the next chat's
  start) minus T1 and T2, i.e. the extra LLM time the grown context costs (Δ_context) plus the
  loop's own overhead.

The chat span that produced no tool call is the final synthesis. So, per run,
``model = Σ_steps (T1 + T2 + T3) + synthesis`` equals the first chat's start to the last chat's
end; ``measured`` is the ``invoke_agent`` span's duration (the two differ by the loop's set-up).
Chat spans are whole requests (no streaming), so T1 holds prefill *and* the decoding of the
tool-call message, not the time to the first token alone.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from citewise.core import InputError
from citewise.telemetry_file import SpanRecord, read_spans


@dataclass(frozen=True)
class Step:
    """One ReAct step: seconds of T1 (LLM), T2 (tools, parallel = max), T3 (context growth and
    overhead), the tool calls made, and what they would cost one after the other."""

    llm_s: float
    tools_s: float
    overhead_s: float
    calls: int
    tools_sequential_s: float

    @property
    def total_s(self) -> float:
        return self.llm_s + self.tools_s + self.overhead_s


@dataclass
class Run:
    """One agent run: its steps, the final synthesis, the modelled and the measured total (s)."""

    trace_id: str
    steps: list[Step]
    synthesis_s: float
    measured_s: float

    @property
    def model_s(self) -> float:
        return sum(s.total_s for s in self.steps) + self.synthesis_s

    @property
    def sequential_s(self) -> float:
        """The model with every step's tool calls made one after the other."""
        return self.model_s + sum(s.tools_sequential_s - s.tools_s for s in self.steps)


@dataclass
class LatencyGroup:
    """Runs with the same number of tool steps: means in milliseconds and p50/p95 of the measured."""

    steps: int
    runs: int
    measured_ms_mean: float
    measured_ms_p50: float
    measured_ms_p95: float
    model_ms_mean: float
    t1_ms_mean: float
    t2_ms_mean: float
    t3_ms_mean: float
    synthesis_ms_mean: float
    sequential_ms_mean: float
    per_step: list[dict] = field(default_factory=list)


def _ms(x: float) -> float:
    return round(x * 1000, 3)


def _pct(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default method) of a non-empty list."""
    v = sorted(values)
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def runs_from_spans(spans: list[SpanRecord]) -> list[Run]:
    """The agent runs in ``spans`` (see the module docstring), in the order their traces start."""
    children: dict[str, list[SpanRecord]] = {}
    for s in spans:
        children.setdefault(s.parent_id, []).append(s)

    def descendants(root: SpanRecord) -> list[SpanRecord]:
        out, todo = [], [root.span_id]
        while todo:
            for c in children.get(todo.pop(), []):
                out.append(c)
                todo.append(c.span_id)
        return out

    runs = []
    agents = sorted((s for s in spans if s.name.startswith("invoke_agent")), key=lambda s: (s.start_ns, s.span_id))
    for a in agents:
        below = descendants(a)
        chats = sorted((s for s in below if s.name.startswith("chat")), key=lambda s: (s.start_ns, s.span_id))
        tools = [s for s in below if s.name.startswith("execute_tool")]
        if not chats:
            continue
        t1 = chats[0].seconds
        steps = []
        for i, c in enumerate(chats[:-1]):
            nxt = chats[i + 1]
            mine = [t for t in tools if c.start_ns <= t.start_ns < nxt.start_ns]
            tools_s = (max(t.end_ns for t in mine) - min(t.start_ns for t in mine)) / 1e9 if mine else 0.0
            wall = (nxt.start_ns - c.start_ns) / 1e9
            steps.append(Step(t1, tools_s, wall - t1 - tools_s, len(mine), sum(t.seconds for t in mine)))
        runs.append(Run(a.trace_id, steps, chats[-1].seconds, a.seconds))
    return runs


def summarise(runs: list[Run]) -> list[LatencyGroup]:
    """One :class:`LatencyGroup` per number of tool steps, fewest first."""
    groups: dict[int, list[Run]] = {}
    for r in runs:
        groups.setdefault(len(r.steps), []).append(r)
    out = []
    for n in sorted(groups):
        rs = groups[n]
        measured = [r.measured_s for r in rs]
        all_steps = [s for r in rs for s in r.steps]

        def mean(xs):
            return statistics.fmean(xs) if xs else 0.0

        per_step = [
            {
                "step": i + 1,
                "t1_ms": _ms(mean([r.steps[i].llm_s for r in rs])),
                "t2_ms": _ms(mean([r.steps[i].tools_s for r in rs])),
                "t3_ms": _ms(mean([r.steps[i].overhead_s for r in rs])),
                "calls": round(mean([r.steps[i].calls for r in rs]), 2),
            }
            for i in range(n)
        ]
        out.append(
            LatencyGroup(
                n,
                len(rs),
                _ms(mean(measured)),
                _ms(_pct(measured, 0.5)),
                _ms(_pct(measured, 0.95)),
                _ms(mean([r.model_s for r in rs])),
                _ms(mean([s.llm_s for s in all_steps])),
                _ms(mean([s.tools_s for s in all_steps])),
                _ms(mean([s.overhead_s for s in all_steps])),
                _ms(mean([r.synthesis_s for r in rs])),
                _ms(mean([r.sequential_s for r in rs])),
                per_step,
            )
        )
    return out


def latency_report(path: str | Path) -> dict:
    """``citewise decide latency --json``: ``{"file", "runs", "groups": [LatencyGroup as dict]}``.

    Raises:
        InputError: the file cannot be read or holds no agent run (``invoke_agent`` span).
    """
    runs = runs_from_spans(list(read_spans(path)))
    if not runs:
        raise InputError(
            str(path),
            "no agent run in these spans (no 'invoke_agent' span with a 'chat' span under it); "
            "record them with CITEWISE_TRACES_FILE=PATH while the agent runs",
        )
    return {"file": str(path), "runs": len(runs), "groups": [asdict(g) for g in summarise(runs)]}
