"""The quality gate: floors per slice and metric, kept as data next to the golden set.

Floors file (YAML)::

    golden: golden.jsonl        # optional, relative to this file
    retriever: shipped          # optional, the configuration the floors were measured on
    floors:
      all:        {ndcg@10: 0.90, mrr@10: 0.90}
      identifier: {mrr@10: 0.99, hit@1: 0.99}

:func:`check` compares measured slice means with the floors: a value below its floor is a
breach (``identifier/mrr@10: 0.743 < floor 0.95``), and so is a slice or metric named in the
floors but absent from the results (a slice that silently disappeared must not pass).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import yaml

from citewise.core import InputError
from citewise.evaluation.metrics import parse_metrics


@dataclass(frozen=True)
class Floors:
    """Parsed floors file.

    Attributes:
        floors: ``{slice: {metric: floor}}`` with canonical metric names.
        golden: the golden set path named in the file (resolved against it), or None.
        retriever: the retriever the floors belong to, or None.
        source: the file path.
    """

    floors: dict[str, dict[str, float]]
    golden: Path | None = None
    retriever: str | None = None
    source: str = ""

    @property
    def metrics(self) -> list[str]:
        """Every metric named by any slice, in first-seen order."""
        return list(dict.fromkeys(m for per in self.floors.values() for m in per))


def load_floors(path: str | Path) -> Floors:
    """Read and validate a floors YAML file.

    Raises:
        InputError: unreadable or invalid YAML, no ``floors`` mapping, an unknown metric name, or
            a floor that is not a number in [0, 1]; naming the file (and slice/metric).
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(path), f"cannot read floors: {getattr(e, 'strerror', None) or e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(
            str(path), f"invalid YAML: {getattr(e, 'problem', None) or e}", mark.line + 1 if mark is not None else None
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("floors"), dict) or not data["floors"]:
        raise InputError(str(path), "expected a mapping with 'floors: {slice: {metric: floor}}'")
    floors: dict[str, dict[str, float]] = {}
    for slice_name, per in data["floors"].items():
        if not isinstance(per, dict) or not per:
            raise InputError(str(path), f"floors.{slice_name}: expected a mapping {{metric: floor}}")
        floors[str(slice_name)] = {}
        for metric, value in per.items():
            try:
                name = parse_metrics([str(metric)])[0]
            except Exception as e:  # CitewiseError with the valid names
                raise InputError(str(path), f"floors.{slice_name}: {e}") from None
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
                raise InputError(
                    str(path), f"floors.{slice_name}.{metric}: floor must be a number in [0, 1], got {value!r}"
                )
            floors[str(slice_name)][name] = float(value)
    golden = data.get("golden")
    return Floors(floors, (path.parent / golden) if golden else None, data.get("retriever"), str(path))


@dataclass(frozen=True)
class Breach:
    """One failed floor; ``value`` None when the slice or metric is missing from the results."""

    slice: str
    metric: str
    value: float | None
    floor: float

    def __str__(self) -> str:
        if self.value is None:
            return f"{self.slice}/{self.metric}: missing from the results (floor {self.floor:g})"
        return f"{self.slice}/{self.metric}: {self.value:.3f} < floor {self.floor:g}"


def check(means: Mapping[str, Mapping[str, float]], floors: Floors) -> list[Breach]:
    """Every breached floor, in the floors file's order.

    Args:
        means: measured ``{slice: {metric: mean}}``.

    A value equal to its floor passes; a slice or metric absent from ``means`` is a breach.
    """
    out = []
    for slice_name, per in floors.floors.items():
        got = means.get(slice_name)
        for metric, floor in per.items():
            value = None if got is None else got.get(metric)
            if value is None or value < floor:
                out.append(Breach(slice_name, metric, value, floor))
    return out
