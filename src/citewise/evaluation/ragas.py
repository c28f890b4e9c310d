"""RAGAS over a dataset in the RAGAS column format, as the tool-calling design document defines it.

Dataset (JSON Lines, one row per question; the four columns RAGAS expects)::

    {"question": "...", "answer": "...", "contexts": ["chunk 1", "chunk 2"], "ground_truth": "..."}

``id`` is optional (default ``row<line>``); ``ground_truth`` may be missing or null (then context
precision and recall, which need it, are not computed for that row). Contexts are in retrieved
order.

Metrics (Es et al. 2023, arXiv:2309.15217; the formulas of the design document):

* **faithfulness** = |claims of the answer supported by the contexts| / |claims of the answer|.
* **answer_relevance** = mean over N questions the judge generates from the answer of
  cos(question, generated question), embeddings L2-normalised.
* **context_precision** = relevant retrieved / retrieved — the document's form ("the judge
  classifies each chunk as relevant or not ... Precision is the relevant fraction"): 3 relevant
  of 5 gives 0.60.
* **context_precision_ranked** = Σ_k precision@k · 1[chunk_k relevant] / |relevant in top-K| —
  the document's weighted form, the one the ``ragas`` library reports, under its own name
  (0.9167 on the worked example, where the relevant chunks are ranks 1, 2 and 4).
* **context_recall** = |ground-truth claims attributable to some context| / |ground-truth claims|.
* **noise_sensitivity** (:mod:`citewise.evaluation.ragas_noise`) = faithfulness with clean context
  − faithfulness with controlled noise, flagged above :data:`NOISE_FLAG` (0.15).

Relevance of a context means "useful to arrive at the ground truth", judged by the LLM. The
judge's decisions are kept per row (:class:`Judgments`) and the scores computed from them
(:func:`scores_from`), so a report shows why a metric has its value. Every LLM step goes through
:class:`citewise.answer.judges.ClaimJudge` (OpenAI-compatible chat client); an unusable reply
fails closed to the worst value with a note, never to a made-up score.

Without an LLM the runner says so in the report's notes and computes only what needs none: per
row the number of contexts and whether the answer abstains, and over the set how many rows carry a
ground truth. No LLM metric is estimated in its place.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from citewise.core import ABSTENTION_TEXT, InputError
from citewise.text.lines import jsonl_rows

COLUMNS = ("question", "answer", "contexts", "ground_truth")
#: Metric names in report order.
METRICS = (
    "faithfulness",
    "answer_relevance",
    "context_precision",
    "context_precision_ranked",
    "context_recall",
    "noise_sensitivity",
)
#: Metrics that need the ground truth.
NEEDS_TRUTH = ("context_precision", "context_precision_ranked", "context_recall")
#: Noise sensitivity above this is flagged (the design document: "A Δ > 0.15 indicates that the
#: prompt or the LLM are fragile against contaminated contexts").
NOISE_FLAG = 0.15


@dataclass(frozen=True)
class RagasRow:
    """One dataset row (see module docstring); ``line`` is its 1-based line in the file."""

    id: str
    question: str
    answer: str
    contexts: tuple[str, ...]
    ground_truth: str | None = None
    line: int = 0


def read_ragas_set(path: str | Path) -> list[RagasRow]:
    """The rows of a RAGAS-format JSONL file.

    Raises:
        InputError: unreadable file, bad JSON, a missing or mistyped column, an unknown column, or
            a duplicate id — naming the file, line and field.
    """
    rows, seen = [], {}
    allowed = set(COLUMNS) | {"id"}
    for n, row in jsonl_rows(path, "RAGAS dataset"):
        unknown = sorted(set(row) - allowed)
        if unknown:
            raise InputError(str(path), f"unknown field '{unknown[0]}' (expected: id, {', '.join(COLUMNS)})", n)
        for key in ("question", "answer"):
            if not isinstance(row.get(key), str) or (key == "question" and not row[key].strip()):
                raise InputError(
                    str(path), f"field '{key}': must be a {'non-empty ' if key == 'question' else ''}string", n
                )
        ctx = row.get("contexts")
        if not isinstance(ctx, list) or not all(isinstance(c, str) for c in ctx):
            raise InputError(
                str(path), "field 'contexts': must be a list of strings (the retrieved chunks, in rank order)", n
            )
        truth = row.get("ground_truth")
        if truth is not None and not isinstance(truth, str):
            raise InputError(str(path), "field 'ground_truth': must be a string (or null)", n)
        rid = row.get("id", f"row{n}")
        if not isinstance(rid, str) or not rid:
            raise InputError(str(path), "field 'id': must be a non-empty string", n)
        if rid in seen:
            raise InputError(str(path), f"duplicate id '{rid}' (first on line {seen[rid]})", n)
        seen[rid] = n
        rows.append(RagasRow(rid, row["question"], row["answer"], tuple(ctx), truth or None, n))
    if not rows:
        raise InputError(str(path), "no rows (expected JSON Lines with question, answer, contexts, ground_truth)")
    return rows


# -- the formulas ------------------------------------------------------------------------------


def share(flags: Sequence[bool]) -> float | None:
    """``sum(flags) / len(flags)``; None for no flags (nothing to measure)."""
    return sum(bool(f) for f in flags) / len(flags) if flags else None


def precision_ranked(relevant: Sequence[bool]) -> float:
    """Σ_k precision@k · v_k / |relevant| (0.0 when none is relevant).

    >>> round(precision_ranked([True, True, False, True, False]), 4)   # (1/1 + 2/2 + 3/4) / 3
    0.9167
    """
    hits, total = 0, 0.0
    for k, v in enumerate(relevant, start=1):
        if v:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


@dataclass
class Judgments:
    """What the judge decided for one row; the scores follow from these alone.

    Attributes:
        claims / supported: the answer's claims and, per claim, whether the contexts support it.
        relevant: per context (rank order), whether it is useful for the ground truth.
        truth_claims / attributed: the ground truth's claims and, per claim, whether a context
            holds it.
        generated / cosines: questions generated back from the answer and their cosine to the
            question.
        notes: one line per metric forced to a value by an unusable reply or empty input.
    """

    claims: list[str] | None = None
    supported: list[bool] | None = None
    relevant: list[bool] | None = None
    truth_claims: list[str] | None = None
    attributed: list[bool] | None = None
    generated: list[str] | None = None
    cosines: list[float] | None = None
    notes: list[str] = field(default_factory=list)


def scores_from(j: Judgments) -> dict[str, float | None]:
    """The metric values of one row from its :class:`Judgments` (None: not measured)."""
    return {
        "faithfulness": share(j.supported) if j.supported is not None else None,
        "answer_relevance": float(statistics.fmean(j.cosines)) if j.cosines else (0.0 if j.cosines == [] else None),
        "context_precision": share(j.relevant) if j.relevant is not None else None,
        "context_precision_ranked": precision_ranked(j.relevant) if j.relevant is not None else None,
        "context_recall": share(j.attributed) if j.attributed is not None else None,
    }


# -- asking the judge --------------------------------------------------------------------------


def _is_abstention(answer: str) -> bool:
    return not answer.strip() or answer.strip() == ABSTENTION_TEXT


def judge_row(row: RagasRow, judge, embedder, n_questions: int = 3) -> Judgments:
    """Ask ``judge`` (a :class:`citewise.answer.judges.ClaimJudge`) for every decision the metrics
    of ``row`` need; ``embedder`` embeds the questions for answer relevance (L2-normalised rows).

    Fails closed: an unusable reply makes the metric's list all-False (or an empty cosine list,
    relevance 0.0) with a note naming the metric and the step."""
    from citewise.evaluation.answer_set import strip_citations

    j = Judgments()
    answer = strip_citations(row.answer)
    contexts = [c for c in row.contexts if c.strip()]
    joined = "\n\n".join(contexts)
    # faithfulness
    if _is_abstention(answer):
        j.notes.append("faithfulness: the answer abstains; it makes no claim (not measured)")
    else:
        j.claims = judge.claims(answer)
        if j.claims is None:
            j.claims, j.supported = [], [False]
            j.notes.append("faithfulness: unusable judge reply listing the answer's claims (0.0)")
        elif not j.claims:
            j.supported = [False]
            j.notes.append("faithfulness: the judge found no claim in the answer (0.0)")
        elif not contexts:
            j.supported = [False] * len(j.claims)
            j.notes.append("faithfulness: no contexts, nothing supports the answer (0.0)")
        else:
            j.supported = judge.supported(j.claims, joined)
            if j.supported is None:
                j.supported = [False] * len(j.claims)
                j.notes.append("faithfulness: unusable judge reply on claim support (0.0)")
    # answer relevance
    if _is_abstention(answer):
        j.generated, j.cosines = [], []
    else:
        j.generated = judge.questions(answer, n_questions)
        if not j.generated:
            j.notes.append(
                "answer relevance: "
                + (
                    "unusable judge reply generating questions"
                    if j.generated is None
                    else "the judge generated no question"
                )
                + " (0.0)"
            )
            j.generated, j.cosines = [], []
        else:
            vecs = np.asarray(embedder.embed([row.question, *j.generated]), dtype=np.float32)
            j.cosines = [round(float(np.clip(v @ vecs[0], -1.0, 1.0)), 6) for v in vecs[1:]]
    # context precision and recall (need the ground truth)
    if row.ground_truth is None:
        j.notes.append("context precision and recall: no ground_truth in this row (not measured)")
        return j
    if not row.contexts:
        j.relevant, j.attributed = [], [False]
        j.notes.append("context precision and recall: no contexts (recall 0.0)")
        return j
    j.relevant = judge.useful(row.question, row.ground_truth, list(row.contexts))
    if j.relevant is None:
        j.relevant = [False] * len(row.contexts)
        j.notes.append("context precision: unusable judge reply on context relevance (0.0)")
    j.truth_claims = judge.claims(row.ground_truth)
    if not j.truth_claims:
        j.truth_claims, j.attributed = j.truth_claims or [], [False]
        j.notes.append("context recall: unusable judge reply listing the ground truth's claims (0.0)")
    else:
        j.attributed = judge.supported(j.truth_claims, joined)
        if j.attributed is None:
            j.attributed = [False] * len(j.truth_claims)
            j.notes.append("context recall: unusable judge reply on claim attribution (0.0)")
    return j


@dataclass
class RowResult:
    """One row's scores (None: not measured), judgments and noise-sensitivity result."""

    id: str
    question: str
    scores: dict[str, float | None]
    judgments: Judgments | None = None
    noise: dict | None = None

    contexts: int = 0
    abstained: bool = False

    def to_dict(self) -> dict:
        d = {
            "id": self.id,
            "question": self.question,
            "contexts": self.contexts,
            "abstained": self.abstained,
            "scores": self.scores,
        }
        if self.judgments is not None:
            d["judgments"] = asdict(self.judgments)
        if self.noise is not None:
            d["noise"] = self.noise
        return d


@dataclass
class RagasReport:
    """A run over a dataset: per-row results, means per metric, and how it was judged."""

    dataset: str
    rows: list[RowResult]
    judge: str | None
    embedder: str | None
    notes: list[str] = field(default_factory=list)
    with_truth: int = 0

    def means(self) -> dict[str, dict]:
        """``{metric: {"mean": float | None, "n": rows measured}}`` for every metric."""
        out = {}
        for m in METRICS:
            vals = [r.scores.get(m) for r in self.rows if r.scores.get(m) is not None]
            out[m] = {"mean": round(statistics.fmean(vals), 6) if vals else None, "n": len(vals)}
        return out

    def flagged_noise(self) -> list[str]:
        """Ids of rows whose noise sensitivity is above :data:`NOISE_FLAG`."""
        return [r.id for r in self.rows if r.noise and r.noise.get("flagged")]

    def to_dict(self) -> dict:
        from citewise.evaluation.diagnosis import diagnose

        means = self.means()
        return {
            "dataset": self.dataset,
            "judge": self.judge,
            "embedder": self.embedder,
            "rows": len(self.rows),
            "rows_with_ground_truth": self.with_truth,
            "abstentions": sum(r.abstained for r in self.rows),
            "mean_contexts": round(statistics.fmean(r.contexts for r in self.rows), 3) if self.rows else 0.0,
            "means": means,
            "noise_flag": NOISE_FLAG,
            "noise_flagged": self.flagged_noise(),
            "diagnosis": [d.to_dict() for d in diagnose({m: v["mean"] for m, v in means.items()})],
            "notes": list(self.notes),
            "per_row": [r.to_dict() for r in self.rows],
        }


def run_ragas(
    rows: Sequence[RagasRow],
    judge=None,
    embedder=None,
    *,
    dataset: str = "",
    judge_name: str | None = None,
    n_questions: int = 3,
    noise: Callable | None = None,
    progress: Callable[[], None] | None = None,
) -> RagasReport:
    """Score every row.

    Args:
        judge: a :class:`~citewise.answer.judges.ClaimJudge`, or None when no LLM is configured:
            then no LLM metric is computed and the report's notes say so.
        embedder: for answer relevance (needed with a judge).
        noise: ``noise(row, judgments) -> dict`` computing noise sensitivity
            (:func:`citewise.evaluation.ragas_noise.noise_probe`), or None to skip it.
    """
    results, notes = [], []
    if judge is None:
        notes.append(
            "no LLM judge configured ([llm.judge] or [llm]: CITEWISE_LLM_JUDGE_BASE_URL / CITEWISE_LLM_JUDGE_MODEL, or CITEWISE_LLM_*): "
            "faithfulness, answer relevance, context precision, context recall and noise sensitivity "
            "need one and were not computed"
        )
    for row in rows:
        if judge is None:
            r = RowResult(row.id, row.question, {m: None for m in METRICS})
        else:
            j = judge_row(row, judge, embedder, n_questions)
            scores = {**scores_from(j), "noise_sensitivity": None}
            nz = noise(row, j) if noise is not None else None
            if nz is not None:
                scores["noise_sensitivity"] = nz.get("delta")
            r = RowResult(row.id, row.question, scores, j, nz)
        r.contexts, r.abstained = len(row.contexts), _is_abstention(row.answer)
        results.append(r)
        if progress:
            progress()
    return RagasReport(
        dataset,
        results,
        judge_name,
        getattr(embedder, "name", None) if judge else None,
        notes,
        sum(r.ground_truth is not None for r in rows),
    )
