"""How often an LLM judge agrees with hand labels, and the gate that refuses a judge below a bar.

The decision document: "An LLM judge is itself a model with an error rate. Before trusting it in
a gate, I label 30 to 50 answers by hand and measure how often the judge agrees."

Labels (JSON Lines, one answer per line)::

    {"id": "a01", "question": "...", "answer": "...", "contexts": ["..."], "faithful": true}

``faithful`` is the hand label: every claim of the answer is supported by the contexts. The
configured judge (:class:`citewise.answer.judges.LLMFaithfulnessJudge`, failing closed: an
unusable verdict counts as "not faithful") judges each answer; then

* **accuracy** = agreeing items / items;
* **Cohen's kappa** = (p_o − p_e) / (1 − p_e), with p_o the accuracy and p_e the agreement
  expected by chance from the two raters' marginals, Σ_c p_labels(c) · p_judge(c) (Cohen 1960);
  1.0 when p_e = 1 and the raters agree on everything.

The result is written as an *agreement record* (JSON) naming the judge (model and a hash of its
prompt). :func:`require_agreement` is the gate: a judge-based gate runs only when the record is
for the configured judge, holds at least :data:`MIN_LABELS` labels and reaches the configured
kappa (default :data:`DEFAULT_MIN_KAPPA`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from citewise.core import InputError
from citewise.text.lines import jsonl_rows

#: The decision document's lower bound on hand labels before a judge may gate anything.
MIN_LABELS = 30
#: Default minimum Cohen's kappa: the lower edge of "substantial" agreement (0.61-0.80) in Landis
#: & Koch (1977), rounded; set your own with ``min_kappa``.
DEFAULT_MIN_KAPPA = 0.6


@dataclass(frozen=True)
class Labelled:
    """One hand-labelled answer (``line``: its line in the labels file)."""

    id: str
    question: str
    answer: str
    contexts: tuple[str, ...]
    faithful: bool
    line: int = 0


def read_labels(path: str | Path) -> list[Labelled]:
    """Rows of a labels file (module docstring).

    Raises:
        InputError: unreadable file, bad JSON, a missing or mistyped field, or a duplicate id.
    """
    out, seen = [], {}
    for n, row in jsonl_rows(path, "judge labels"):
        for key in ("id", "question", "answer"):
            if not isinstance(row.get(key), str):
                raise InputError(str(path), f"field '{key}': must be a string", n)
        if not isinstance(row.get("contexts"), list) or not all(isinstance(c, str) for c in row["contexts"]):
            raise InputError(str(path), "field 'contexts': must be a list of strings", n)
        if not isinstance(row.get("faithful"), bool):
            raise InputError(str(path), "field 'faithful': must be true or false (the hand label)", n)
        if row["id"] in seen:
            raise InputError(str(path), f"duplicate id '{row['id']}' (first on line {seen[row['id']]})", n)
        seen[row["id"]] = n
        out.append(Labelled(row["id"], row["question"], row["answer"], tuple(row["contexts"]), row["faithful"], n))
    if not out:
        raise InputError(str(path), "no labelled answers")
    return out


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's kappa of two raters over the same items (module docstring).

    >>> round(cohen_kappa([True, True, False, False], [True, False, False, False]), 4)   # (0.75 - 0.5) / 0.5
    0.5

    Raises:
        ValueError: different lengths or no items.
    """
    if len(a) != len(b) or not a:
        raise ValueError("kappa needs two equally long, non-empty rating lists")
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return 1.0 if pe == 1 else (po - pe) / (1 - pe)


def judge_identity(judge) -> dict:
    """``{"model", "prompt_sha256"}`` of an :class:`~citewise.answer.judges.LLMFaithfulnessJudge`:
    what an agreement record is for (the endpoint may move; the model and prompt may not)."""
    from citewise.answer.judges import FAITHFULNESS_PROMPT

    config = getattr(getattr(judge, "model", None), "config", None)
    return {
        "model": getattr(config, "model", None),
        "prompt_sha256": hashlib.sha256(FAITHFULNESS_PROMPT.encode("utf-8")).hexdigest()[:16],
    }


@dataclass
class Agreement:
    """Judge verdicts against hand labels.

    Attributes:
        judge: :func:`judge_identity`; labels: the labels file; n: items.
        accuracy, kappa: see module docstring.
        confusion: ``{"tp", "fp", "fn", "tn"}`` with "faithful" as the positive class (rows: the
            judge, columns: the hand label).
        judge_errors: verdicts that failed closed (endpoint error, unparseable reply).
        items: per item ``{"id", "label", "judge", "error"}``.
    """

    judge: dict
    labels: str
    n: int
    accuracy: float
    kappa: float
    confusion: dict
    judge_errors: int
    items: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def measure_agreement(
    labels: Sequence[Labelled], judge, *, labels_path: str = "", progress: Callable[[], None] | None = None
) -> Agreement:
    """Run ``judge`` on every labelled answer and compare (module docstring)."""
    items, truth, pred = [], [], []
    for item in labels:
        v = judge.judge(item.question, item.answer, list(item.contexts))
        items.append(
            {
                "id": item.id,
                "label": item.faithful,
                "judge": v.passed,
                "error": v.error,
                "unsupported_claims": list(v.unsupported_claims),
            }
        )
        truth.append(item.faithful)
        pred.append(v.passed)
        if progress:
            progress()
    conf = {
        "tp": sum(p and t for p, t in zip(pred, truth)),
        "fp": sum(p and not t for p, t in zip(pred, truth)),
        "fn": sum(not p and t for p, t in zip(pred, truth)),
        "tn": sum(not p and not t for p, t in zip(pred, truth)),
    }
    acc = sum(p == t for p, t in zip(pred, truth)) / len(truth)
    return Agreement(
        judge_identity(judge),
        labels_path,
        len(truth),
        round(acc, 6),
        round(cohen_kappa(truth, pred), 6),
        conf,
        sum(1 for i in items if i["error"]),
        items,
    )


def require_agreement(
    record: str | Path | None, judge, min_kappa: float = DEFAULT_MIN_KAPPA, min_labels: int = MIN_LABELS
) -> dict:
    """The gate on a judge: return the agreement record when the judge may gate, else raise.

    Raises:
        InputError: no record given, an unreadable record, a record for another model or prompt,
            fewer than ``min_labels`` labels, or a kappa below ``min_kappa`` — one line saying
            which, and how to measure (``citewise eval judge-agreement LABELS --out FILE``).
    """
    how = (
        "measure it with 'citewise eval judge-agreement LABELS --out FILE' on at least "
        f"{min_labels} hand-labelled answers"
    )
    if record is None:
        raise InputError(
            "judge", f"refused: this gate uses an LLM judge whose agreement with hand labels is unknown; {how}"
        )
    try:
        data = json.loads(Path(record).read_text(encoding="utf-8"))
        n, kappa, who = int(data["n"]), float(data["kappa"]), data["judge"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(str(record), f"not a judge agreement record ({type(e).__name__}: {e}); {how}") from None
    me = judge_identity(judge)
    if who.get("model") != me["model"] or who.get("prompt_sha256") != me["prompt_sha256"]:
        raise InputError(
            str(record),
            f"refused: the record is for judge {who.get('model')} (prompt "
            f"{who.get('prompt_sha256')}), not the configured {me['model']} (prompt "
            f"{me['prompt_sha256']}); {how}",
        )
    if n < min_labels:
        raise InputError(str(record), f"refused: agreement measured on {n} labels, fewer than {min_labels}; {how}")
    if kappa < min_kappa:
        raise InputError(
            str(record),
            f"refused: judge {me['model']} agrees with hand labels at kappa {kappa:.3f} "
            f"(accuracy {float(data.get('accuracy', 0)):.3f}, n={n}), below the "
            f"configured {min_kappa:.2f}",
        )
    return data
