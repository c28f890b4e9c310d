"""Metric range → likely cause → corrective action, from the design documents.

The table is the tool-calling document's "Correlation with real satisfaction" table (field
studies by Databricks, 2024, and RAGAS adoption analyses, 2025), plus its noise-sensitivity
threshold; :func:`diagnose` returns the rows whose range holds a measured value. It is data, not
a rule per case: each row is ``(metric, low, high, symptom, action)`` with ``low <= value < high``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Mapping


@dataclass(frozen=True)
class Diagnosis:
    """One row of the table that applies: the metric, its range, the value, cause and action."""

    metric: str
    range: str
    value: float
    symptom: str
    action: str

    def to_dict(self) -> dict:
        return asdict(self)


INF = float("inf")

#: ``(metric, low, high, observable symptom / likely cause, corrective action)``.
TABLE: tuple[tuple[str, float, float, str, str], ...] = (
    (
        "faithfulness",
        -INF,
        0.75,
        "users frequently report made-up answers",
        "review the LLM prompt; increase citation instructions; lower the temperature",
    ),
    (
        "faithfulness",
        0.75,
        0.85,
        "occasional hallucinations on peripheral topics",
        "improve context precision to eliminate contaminating chunks",
    ),
    ("faithfulness", 0.85, INF, "correlates with positive NPS in field studies", "hold steady; monitor for drift"),
    (
        "context_precision",
        -INF,
        0.60,
        "the LLM includes contradictory information; inconsistent answers",
        "tune the reranker; reduce K; review similarity thresholds",
    ),
    (
        "context_recall",
        -INF,
        0.70,
        "multi-hop questions fail; key information missing",
        "review the chunking strategy; add larger chunks; enrich metadata",
    ),
    (
        "answer_relevance",
        -INF,
        0.70,
        "answers that are correct but do not answer",
        "review the synthesis prompt; add an explicit instruction to stick to the question",
    ),
    (
        "noise_sensitivity",
        0.15,
        INF,
        "the prompt or the LLM are fragile against contaminated contexts",
        "harden the prompt against irrelevant context; raise context precision so less noise reaches it",
    ),
)


def _range(metric: str, low: float, high: float) -> str:
    if low == -INF:
        return f"< {high:.2f}"
    if high == INF:
        return f"> {low:.2f}" if metric == "noise_sensitivity" else f">= {low:.2f}"
    return f"{low:.2f}-{high:.2f}"


def diagnose(values: Mapping[str, float | None]) -> list[Diagnosis]:
    """The table rows whose range holds ``values[metric]`` (metrics without a value are skipped).

    >>> [d.range for d in diagnose({"faithfulness": 0.75, "context_precision": 0.60, "context_recall": 1.0})]
    ['0.75-0.85']
    >>> [d.metric for d in diagnose({"context_precision": 0.59, "noise_sensitivity": 0.2})]
    ['context_precision', 'noise_sensitivity']
    """
    out = []
    for metric, low, high, symptom, action in TABLE:
        v = values.get(metric)
        if v is None:
            continue
        inside = (low < v if metric == "noise_sensitivity" else low <= v) and v < high
        if inside:
            out.append(Diagnosis(metric, _range(metric, low, high), round(float(v), 4), symptom, action))
    return out
