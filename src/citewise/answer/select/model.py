"""The selector's model: a linear scorer over :data:`~citewise.answer.select.features.FEATURES`,
fitted as a listwise softmax ranker, stored as JSON package data.

``score(x) = ((x - mean) / scale) · w``, one score per answer unit; within one question the
scores define ``P(unit answers) = softmax(scores)``. Fitting minimises, over the training
questions that have at least one answering and one other unit,

``- Σ_q log( Σ_{u answers q} e^{s_u} / Σ_{u in q} e^{s_u} ) / |Q|  +  λ ‖w‖²``

(ListNet's top-one probability with several relevant items: Cao et al. 2007, "Learning to Rank:
From Pairwise Approach to Listwise Approach") by full-batch Adam (Kingma & Ba 2015), features
z-scored on the training units. Pure numpy, deterministic (zero start, fixed steps): no extra
dependency at query time, and the model file is a few hundred bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Sequence

import numpy as np

from citewise.answer.select.features import FEATURES
from citewise.core import CitewiseError

#: The model shipped with the package (``citewise/answer/data/selector.json``).
PACKAGED = "data/selector.json"


@dataclass
class SelectorModel:
    """Linear unit scorer (see module docstring).

    Attributes:
        features: feature names, in column order (must equal :data:`FEATURES`).
        mean, scale: z-scoring of each feature.
        weights: one weight per feature.
        info: provenance: what it was trained on, how, and held-out figures.
    """

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    info: dict = field(default_factory=dict)

    def score(self, x: np.ndarray) -> np.ndarray:
        """Scores of the rows of ``x`` (shape (n, len(features))) -> shape (n,)."""
        if len(x) == 0:
            return np.zeros(0, dtype=np.float32)
        return ((np.asarray(x, dtype=np.float64) - self.mean) / self.scale) @ self.weights

    def to_dict(self) -> dict:
        return {
            "features": list(self.features),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "weights": [round(float(v), 6) for v in self.weights],
            "info": self.info,
        }

    def save(self, path: str | Path) -> None:
        """Write the model as JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def from_dict(cls, data: dict, source: str = "model", features: Sequence[str] = FEATURES) -> "SelectorModel":
        """Build from the JSON form; ``features``: the names the model must have, in order.

        Raises:
            CitewiseError: the file's features are not :data:`FEATURES` (a model trained for
                another version of the features), or a field is missing.
        """
        try:
            feats = tuple(data["features"])
            if feats != tuple(features):
                raise CitewiseError(
                    f"{source}: model features {list(feats)} are not this version's "
                    f"{list(features)}; retrain it with 'citewise train-answerer'"
                )
            return cls(
                feats,
                np.array(data["mean"], dtype=np.float64),
                np.array(data["scale"], dtype=np.float64),
                np.array(data["weights"], dtype=np.float64),
                dict(data.get("info") or {}),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise CitewiseError(f"{source}: not a selector model ({type(e).__name__}: {e})") from None

    @classmethod
    def load(cls, path: str | Path, features: Sequence[str] = FEATURES) -> "SelectorModel":
        """Read a model file (see :meth:`from_dict` for errors)."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise CitewiseError(f"{path}: cannot read selector model ({e})") from None
        return cls.from_dict(data, str(path), features)


@lru_cache(maxsize=1)
def packaged_model() -> SelectorModel:
    """The model shipped with the package, read once."""
    text = resources.files("citewise.answer").joinpath(PACKAGED).read_text(encoding="utf-8")
    return SelectorModel.from_dict(json.loads(text), f"citewise/answer/{PACKAGED}")


def fit(
    groups: Sequence[tuple[np.ndarray, np.ndarray]],
    l2: float = 1e-3,
    steps: int = 400,
    lr: float = 0.05,
    features: Sequence[str] = FEATURES,
) -> SelectorModel:
    """Fit the listwise model on ``groups``: per question, ``(x, y)`` with ``x`` shape (n, F)
    and ``y`` shape (n,) of 0/1 (1: the unit answers). Groups without both a 1 and a 0 are
    skipped.

    Raises:
        CitewiseError: no usable group.
    """
    use = [
        (np.asarray(x, np.float64), np.asarray(y, np.float64))
        for x, y in groups
        if len(y) > 1 and 0 < float(np.sum(y)) < len(y)
    ]
    if not use:
        raise CitewiseError("no training question has both an answering and a non-answering unit")
    allx = np.vstack([x for x, _ in use])
    mean = allx.mean(axis=0)
    scale = allx.std(axis=0)
    scale[scale < 1e-9] = 1.0
    zs = [((x - mean) / scale, y) for x, y in use]
    w = np.zeros(allx.shape[1])
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    b1, b2 = 0.9, 0.999
    for t in range(1, steps + 1):
        grad = 2 * l2 * w
        for z, y in zs:
            s = z @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            ps = p * y
            q = ps / ps.sum()  # posterior over the answering units
            grad += (z.T @ (p - q)) / len(zs)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        w -= lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + 1e-8)
    return SelectorModel(tuple(features), mean, scale, w)


def listwise_loss(model: SelectorModel, groups: Sequence[tuple[np.ndarray, np.ndarray]]) -> float:
    """Mean negative log top-one probability of the answering units (the fitted objective
    without the penalty) over the usable groups; nan when there is none."""
    out = []
    for x, y in groups:
        y = np.asarray(y, np.float64)
        if len(y) < 2 or not 0 < y.sum() < len(y):
            continue
        s = model.score(x)
        p = np.exp(s - s.max())
        p /= p.sum()
        out.append(-np.log(max(float((p * y).sum()), 1e-12)))
    return float(np.mean(out)) if out else float("nan")
