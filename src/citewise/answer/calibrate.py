"""Calibrate the abstention threshold on a golden set and store it with the index.

Questions: the golden set's in-scope questions (``golden.jsonl``: id, text, relevant
``{doc_id: grade}``) and out-of-scope questions (``out_of_scope.jsonl``: id, text). They are split
deterministically into train and test halves (sorted by sha256 of the id; in-scope and
out-of-scope halved separately, so both halves hold both kinds).

Every question is answered once with the threshold at its minimum (only the always-abstain
rules of :mod:`citewise.answer.evidence` and the generator's own abstentions apply), which gives
its evidence score and what the answer would be. For a threshold ``t`` a question is answered
when its score is ≥ ``t`` (questions with a pinned identifier always are) and the generator
answered. Objective, counted on the train half:

``answered correctly`` (in-scope, answered, cites a document graded ≥ 1 for it)
``+ abstained correctly`` (out-of-scope, abstained).

The threshold is the midpoint of the widest score interval that maximises the objective (ties
between equally wide intervals: the lower one). The test half is then scored with that
threshold. ``fit="all"`` fits on both halves (what :data:`citewise.index.DEFAULT_THRESHOLDS`
holds for the sample corpus).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from citewise.core import MAX_QUERY_CHARS, Answer, CitewiseError, InputError
from citewise.text.lines import jsonl_rows

#: Threshold used to collect scores: abstain only when a rule fired (score exactly 0).
COLLECT_THRESHOLD = 1e-9


@dataclass(frozen=True)
class Question:
    """A calibration question: ``relevant`` empty for an out-of-scope question."""

    qid: str
    text: str
    relevant: dict = field(default_factory=dict)

    @property
    def in_scope(self) -> bool:
        return bool(self.relevant)


@dataclass
class Scored:
    """One question answered at the minimum threshold."""

    qid: str
    in_scope: bool
    score: float  # +inf when pinned
    generator_answered: bool
    correct_citation: bool
    cited: list[str] = field(default_factory=list)


def read_questions(path: str | Path, need_relevant: bool) -> list[Question]:
    """Questions from a JSONL file (``id``, ``text`` and, for a golden set, ``relevant``).

    Raises:
        InputError: unreadable file or a bad line (file and line named).
    """
    out = []
    for n, row in jsonl_rows(path, "questions", max_text=MAX_QUERY_CHARS):
        try:
            rel = row.get("relevant") or {}
            if not isinstance(rel, dict) or (need_relevant and not rel):
                raise ValueError("'relevant' must be a non-empty object {doc_id: grade}")
            out.append(Question(str(row["id"]), str(row["text"]), {str(k): int(v) for k, v in rel.items()}))
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(
                str(path), f"expected a JSON object with 'id', 'text'{', relevant' if need_relevant else ''} ({e})", n
            ) from None
    return out


def split_halves(questions: Sequence[Question]) -> tuple[list[Question], list[Question]]:
    """Deterministic train/test halves: each kind sorted by sha256(id), first half = train
    (the extra question of an odd count goes to train)."""
    train, test = [], []
    for kind in (True, False):
        group = sorted(
            (q for q in questions if q.in_scope == kind),
            key=lambda q: (hashlib.sha256(q.qid.encode()).hexdigest(), q.qid),
        )
        cut = (len(group) + 1) // 2
        train += group[:cut]
        test += group[cut:]
    return train, test


def score_questions(ask: Callable[[str], Answer], questions: Sequence[Question]) -> list[Scored]:
    """Answer each question once (``ask`` must use :data:`COLLECT_THRESHOLD`) and record what
    calibration needs."""
    out = []
    for q in questions:
        a = ask(q.text)
        pinned = bool(a.evidence.get("pinned"))
        raw = float(a.evidence.get("score", a.best_score))
        cited = list(dict.fromkeys(c.doc_id for c in a.citations))
        answered = a.outcome != "abstained"
        correct = answered and any(q.relevant.get(d, 0) >= 1 for d in cited)
        out.append(Scored(q.qid, q.in_scope, math.inf if pinned else raw, answered, correct, cited))
    return out


def objective(items: Sequence[Scored], threshold: float) -> tuple[int, int]:
    """``(answered correctly, abstained correctly)`` at ``threshold``."""
    ok_answered = ok_abstained = 0
    for s in items:
        answered = s.generator_answered and s.score >= threshold
        if s.in_scope and answered and s.correct_citation:
            ok_answered += 1
        if not s.in_scope and not answered:
            ok_abstained += 1
    return ok_answered, ok_abstained


def choose_threshold(items: Sequence[Scored]) -> float:
    """The threshold maximising :func:`objective` on ``items`` (see module docstring)."""
    finite = sorted({s.score for s in items if math.isfinite(s.score) and s.score > 0})
    if not finite:
        return COLLECT_THRESHOLD
    cuts = [0.0] + finite + [finite[-1] + 1.0]
    best_value, best = -1, (0.0, 0.0)
    for lo, hi in zip(cuts, cuts[1:]):
        t = (lo + hi) / 2 if lo > 0 else hi / 2
        value = sum(objective(items, t))
        if value > best_value or (value == best_value and hi - lo > best[1] - best[0]):
            best_value, best = value, (lo, hi)
    lo, hi = best
    return round((lo + hi) / 2, 4)


@dataclass
class CalibrationReport:
    """What ``citewise calibrate`` prints."""

    threshold: float
    fit: str
    train: dict
    test: dict
    scores: list[dict]

    def as_dict(self) -> dict:
        return asdict(self)


def _summary(items: Sequence[Scored], t: float) -> dict:
    ok_a, ok_b = objective(items, t)
    n_in = sum(1 for s in items if s.in_scope)
    n_out = len(items) - n_in
    return {
        "questions": len(items),
        "in_scope": n_in,
        "out_of_scope": n_out,
        "answered_correctly": ok_a,
        "abstained_correctly": ok_b,
        "answered_correctly_rate": round(ok_a / n_in, 4) if n_in else None,
        "abstained_correctly_rate": round(ok_b / n_out, 4) if n_out else None,
        "accuracy": round((ok_a + ok_b) / len(items), 4) if items else None,
    }


def calibrate(
    ask: Callable[[str], Answer], golden: Sequence[Question], out_of_scope: Sequence[Question], fit: str = "train"
) -> CalibrationReport:
    """Score all questions, choose the threshold on the train half, report both halves.

    ``ask(question) -> Answer`` must answer with :data:`COLLECT_THRESHOLD`. ``fit="all"``
    chooses the threshold on every question instead (for deployment once the train/test
    numbers are known; the test half is then no longer held out).

    Raises:
        CitewiseError: ``fit`` is not ``train`` or ``all``.
    """
    if fit not in ("train", "all"):
        raise CitewiseError(f"unknown calibration fit '{fit}' (valid: train, all)")
    questions = list(golden) + list(out_of_scope)
    train, test = split_halves(questions)
    scored = {s.qid: s for s in score_questions(ask, questions)}
    tr = [scored[q.qid] for q in train]
    te = [scored[q.qid] for q in test]
    t = choose_threshold(tr if fit == "train" else tr + te)
    rows = [
        {
            "id": s.qid,
            "split": "train" if s in tr else "test",
            "in_scope": s.in_scope,
            "score": None if math.isinf(s.score) else round(s.score, 4),
            "pinned": math.isinf(s.score),
            "answered": s.generator_answered and s.score >= t,
            "correct_citation": s.correct_citation,
            "cited": s.cited,
        }
        for s in scored.values()
    ]
    return CalibrationReport(t, fit, _summary(tr, t), _summary(te, t), rows)
