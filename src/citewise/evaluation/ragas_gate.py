"""Floors on RAGAS metrics, gated by the judge's measured agreement with hand labels.

Floors file (YAML)::

    floors:                 # metric: lowest acceptable mean (noise_sensitivity: highest)
      faithfulness: 0.85
      context_precision: 0.60
    judge:
      agreement: judge-agreement.json   # written by citewise eval judge-agreement --out
      min_kappa: 0.6                    # default 0.6
      min_labels: 30                    # default 30 (the decision document: 30 to 50)

Every RAGAS metric is judged by an LLM, so a floors file always names the judge's agreement
record: :func:`citewise.evaluation.judge_agreement.require_agreement` refuses a judge below it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from citewise.core import InputError
from citewise.evaluation.judge_agreement import DEFAULT_MIN_KAPPA, MIN_LABELS
from citewise.evaluation.ragas import METRICS


@dataclass(frozen=True)
class RagasFloors:
    """Parsed floors file (module docstring); ``agreement`` is resolved next to the file."""

    floors: dict[str, float]
    agreement: Path | None
    min_kappa: float = DEFAULT_MIN_KAPPA
    min_labels: int = MIN_LABELS


def load_ragas_floors(path: str | Path) -> RagasFloors:
    """Read a floors file.

    Raises:
        InputError: unreadable file, bad YAML, an unknown metric or key, or a value outside [0, 1].
    """
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(path), f"cannot read floors: {getattr(e, 'strerror', None) or e}") from None
    except yaml.YAMLError as e:
        raise InputError(str(path), f"bad YAML: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("floors"), dict) or not data["floors"]:
        raise InputError(str(path), "floors: must be a mapping of metric: value")
    unknown = sorted(set(data) - {"floors", "judge"})
    if unknown:
        raise InputError(str(path), f"{unknown[0]}: unknown key (expected floors, judge)")
    floors = {}
    for m, v in data["floors"].items():
        if m not in METRICS:
            raise InputError(str(path), f"floors.{m}: unknown metric (expected one of: {', '.join(METRICS)})")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            raise InputError(str(path), f"floors.{m}: must be a number in [0, 1], got {v!r}")
        floors[m] = float(v)
    judge = data.get("judge") or {}
    if not isinstance(judge, dict) or set(judge) - {"agreement", "min_kappa", "min_labels"}:
        raise InputError(str(path), "judge: a mapping with agreement, min_kappa, min_labels")
    agreement = judge.get("agreement")
    agreement = (path.parent / agreement) if isinstance(agreement, str) else None
    min_kappa = judge.get("min_kappa", DEFAULT_MIN_KAPPA)
    min_labels = judge.get("min_labels", MIN_LABELS)
    if isinstance(min_kappa, bool) or not isinstance(min_kappa, (int, float)) or not -1 <= min_kappa <= 1:
        raise InputError(str(path), f"judge.min_kappa: must be a number in [-1, 1], got {min_kappa!r}")
    if isinstance(min_labels, bool) or not isinstance(min_labels, int) or min_labels < 1:
        raise InputError(str(path), f"judge.min_labels: must be a whole number >= 1, got {min_labels!r}")
    return RagasFloors(floors, agreement, float(min_kappa), min_labels)


def check_floors(means: dict, fl: RagasFloors) -> list[str]:
    """One line per breached floor (``noise_sensitivity`` is a ceiling: higher is worse); a metric
    with no measured mean is a breach too (a missing metric never passes a gate)."""
    out = []
    for m, f in fl.floors.items():
        v = (means.get(m) or {}).get("mean")
        if v is None:
            out.append(f"{m}: not measured (floor {f:g})")
        elif m == "noise_sensitivity" and v > f:
            out.append(f"{m}: {v:.3f} > ceiling {f:g}")
        elif m != "noise_sensitivity" and v < f:
            out.append(f"{m}: {v:.3f} < floor {f:g}")
    return out
