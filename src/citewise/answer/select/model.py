"""The selector's model: a linear scorer over :data:`~citewise.answer.select.features.FEATURES`,
fitted as a listwise softmax ranker, optionally followed by boosted regression trees, stored as
JSON package data.

``score(x) = ((x - mean) / scale) · w + Σ_t tree_t(x)``, one score per answer unit; within one
question the scores define ``P(unit answers) = softmax(scores)``. The linear part is fitted
first; it minimises, over the training questions that have at least one answering and one other
unit,

``- Σ_q log( Σ_{u answers q} e^{s_u} / Σ_{u in q} e^{s_u} ) / |Q|  +  λ ‖w‖²``

(ListNet's top-one probability with several relevant items: Cao et al. 2007, "Learning to Rank:
From Pairwise Approach to Listwise Approach") by full-batch Adam (Kingma & Ba 2015), features
z-scored on the training units. Pure numpy, deterministic (zero start, fixed steps).

The trees (:func:`fit_trees`) are gradient-boosted (LightGBM, Newton steps: Friedman 2001; Ke
et al. 2017) on the same listwise objective, starting from the linear scores (``init_score``), so
they add only what the linear part cannot express (interactions such as "a row, for a question
that names its first cell") and the scores stay on the scale the softmax shares of
:mod:`citewise.answer.select.compose` read. Per question, with ``p = softmax(s)`` and ``q`` the
posterior over its answering units (``q ∝ p · y``), the gradient of the loss is ``p - q`` and the
diagonal Hessian taken is ``p (1 - p)`` (:func:`listnet_objective`). LightGBM is needed only to fit
them (the ``tune`` extra); at query time the trees are plain arrays walked with numpy, and the
model file stays a JSON document of some tens of KB.
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
    trees: list["Tree"] = field(default_factory=list)
    _packed: tuple[int, "Forest"] | None = field(default=None, repr=False, compare=False)

    def linear(self, x: np.ndarray) -> np.ndarray:
        """The linear part's scores of the rows of ``x`` (shape (n, len(features))) -> (n,)."""
        if len(x) == 0:
            return np.zeros(0, dtype=np.float64)
        return ((np.asarray(x, dtype=np.float64) - self.mean) / self.scale) @ self.weights

    def score(self, x: np.ndarray) -> np.ndarray:
        """Scores of the rows of ``x`` (shape (n, len(features))) -> shape (n,): the linear part
        plus every tree's leaf value."""
        s = self.linear(x)
        if len(x) and self.trees:
            s = s + self._forest().predict(np.asarray(x, dtype=np.float64))
        return s

    def _forest(self) -> "Forest":
        if self._packed is None or self._packed[0] != len(self.trees):
            self._packed = (len(self.trees), Forest.pack(self.trees))
        return self._packed[1]

    def to_dict(self) -> dict:
        return {
            "features": list(self.features),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "weights": [round(float(v), 6) for v in self.weights],
            **({"trees": [t.to_dict() for t in self.trees]} if self.trees else {}),
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
                [Tree.from_dict(t, len(feats)) for t in data.get("trees") or []],
            )
        except (KeyError, TypeError, ValueError, IndexError) as e:
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


def _usable(groups: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The groups with at least two units and labels neither all 0 nor all 1, as float arrays.

    Raises:
        CitewiseError: no such group.
    """
    use = [
        (np.asarray(x, np.float64), np.asarray(y, np.float64))
        for x, y in groups
        if len(y) > 1 and 0 < float(np.sum(y)) < len(y)
    ]
    if not use:
        raise CitewiseError("no training question has both an answering and a non-answering unit")
    return use


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
    use = _usable(groups)
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


@dataclass
class Tree:
    """One regression tree as flat arrays (LightGBM's numerical splits, ``x <= threshold`` goes
    left). Node ``i`` is internal when ``feature[i] >= 0``; a child index ``c < 0`` names leaf
    ``~c`` (``-1`` is leaf 0), whose output is ``value[~c]`` (learning rate included)."""

    feature: np.ndarray  # (nodes,) int
    threshold: np.ndarray  # (nodes,) float
    left: np.ndarray  # (nodes,) int
    right: np.ndarray  # (nodes,) int
    value: np.ndarray  # (leaves,) float

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Leaf outputs for the rows of ``x`` (shape (n, F)) -> (n,) (walked as a forest of one:
        :class:`Forest`)."""
        return Forest.pack([self]).predict(np.asarray(x, dtype=np.float64))

    def to_dict(self) -> dict:
        return {
            "feature": self.feature.tolist(),
            "threshold": [float(v) for v in self.threshold],
            "left": self.left.tolist(),
            "right": self.right.tolist(),
            "value": [round(float(v), 8) for v in self.value],
        }

    @classmethod
    def from_dict(cls, data: dict, n_features: int) -> "Tree":
        """Build from :meth:`to_dict`'s form.

        Raises:
            ValueError: arrays of unequal length, or a feature or child index out of range.
        """
        t = cls(
            np.array(data["feature"], dtype=np.int64),
            np.array(data["threshold"], dtype=np.float64),
            np.array(data["left"], dtype=np.int64),
            np.array(data["right"], dtype=np.int64),
            np.array(data["value"], dtype=np.float64),
        )
        nodes, leaves = len(t.feature), len(t.value)
        if not (len(t.threshold) == len(t.left) == len(t.right) == nodes) or leaves != nodes + 1:
            raise ValueError("tree arrays of unequal length")
        kids = np.concatenate([t.left, t.right])
        if np.any((t.feature < 0) | (t.feature >= n_features)):
            raise ValueError("tree feature index out of range")
        if np.any(kids >= nodes) or np.any(~kids[kids < 0] >= leaves):
            raise ValueError("tree child index out of range")
        return t

    @classmethod
    def from_lightgbm(cls, node: dict) -> "Tree":
        """Flatten one ``tree_structure`` of LightGBM's ``Booster.dump_model()`` (numerical
        ``<=`` splits only)."""
        feature: list[int] = []
        threshold: list[float] = []
        left: list[int] = []
        right: list[int] = []
        value: list[float] = []

        def walk(n: dict) -> int:
            if "leaf_value" in n:
                value.append(float(n["leaf_value"]))
                return ~(len(value) - 1)
            if n.get("decision_type", "<=") != "<=":
                raise ValueError(f"unsupported split {n.get('decision_type')!r}")
            i = len(feature)
            feature.append(int(n["split_feature"]))
            threshold.append(float(n["threshold"]))
            left.append(0)
            right.append(0)
            left[i] = walk(n["left_child"])
            right[i] = walk(n["right_child"])
            return i

        walk(node)
        return cls(
            np.array(feature, dtype=np.int64),
            np.array(threshold, dtype=np.float64),
            np.array(left, dtype=np.int64),
            np.array(right, dtype=np.int64),
            np.array(value, dtype=np.float64),
        )


@dataclass
class Forest:
    """Trees packed into padded ``(trees, nodes)`` / ``(trees, leaves)`` arrays, walked together:
    one gather per tree level for all rows and trees, rather than one loop per tree. Sums to the
    same values as :meth:`Tree.predict` over the trees."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    single: np.ndarray  # (trees,) bool: a single-leaf tree (no node)

    @classmethod
    def pack(cls, trees: Sequence[Tree]) -> "Forest":
        n_nodes = max([len(t.feature) for t in trees] + [1])
        n_leaves = max([len(t.value) for t in trees] + [1])
        k = len(trees)
        feature = np.zeros((k, n_nodes), dtype=np.int64)
        threshold = np.zeros((k, n_nodes))
        left = np.full((k, n_nodes), -1, dtype=np.int64)
        right = np.full((k, n_nodes), -1, dtype=np.int64)
        value = np.zeros((k, n_leaves))
        for i, t in enumerate(trees):
            m = len(t.feature)
            feature[i, :m], threshold[i, :m], left[i, :m], right[i, :m] = t.feature, t.threshold, t.left, t.right
            value[i, : len(t.value)] = t.value
        single = np.array([len(t.feature) == 0 for t in trees], dtype=bool)
        return cls(feature, threshold, left, right, value, single)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Sum of every tree's leaf output for the rows of ``x`` (shape (n, F)) -> (n,)."""
        n, k = len(x), len(self.feature)
        tree = np.broadcast_to(np.arange(k), (n, k))
        row = np.broadcast_to(np.arange(n)[:, None], (n, k))
        node = np.zeros((n, k), dtype=np.int64)
        leaf = np.where(self.single[None, :], 0, -1) * np.ones((n, 1), dtype=np.int64)
        live = leaf < 0
        while live.any():
            f = self.feature[tree, node]
            nxt = np.where(x[row, f] <= self.threshold[tree, node], self.left[tree, node], self.right[tree, node])
            ends = live & (nxt < 0)
            leaf[ends] = ~nxt[ends]
            live &= ~ends
            node = np.where(live, nxt, node)
        return self.value[tree, leaf].sum(axis=1)


#: LightGBM settings of :func:`fit_trees`: small trees, few rounds, a strong leaf minimum (the
#: training questions are some thousands, their units some tens of thousands), deterministic.
TREE_PARAMS = {
    "learning_rate": 0.05,
    "num_leaves": 16,
    "min_data_in_leaf": 100,
    "lambda_l2": 1.0,
    "deterministic": True,
    "force_row_wise": True,
    "num_threads": 1,
    "seed": 0,
    "verbose": -1,
}
#: Boosting rounds of :func:`fit_trees`.
TREE_ROUNDS = 200


def listnet_objective(sizes: Sequence[int], y: np.ndarray):
    """A LightGBM custom objective: the listwise loss of the module docstring over consecutive
    groups of ``sizes`` rows with labels ``y`` (0/1, or non-negative weights such as a span's token
    F1: ``q ∝ p · y`` either way); returns ``f(scores, dataset) -> (grad, hess)``, both of shape
    (rows,)."""
    ends = np.cumsum(np.asarray(sizes, dtype=np.int64))
    starts = ends - np.asarray(sizes, dtype=np.int64)
    y = np.asarray(y, dtype=np.float64)

    def objective(scores: np.ndarray, _data=None) -> tuple[np.ndarray, np.ndarray]:
        grad = np.zeros(len(scores))
        hess = np.zeros(len(scores))
        for a, b in zip(starts, ends):
            z = np.asarray(scores[a:b], dtype=np.float64)
            p = np.exp(z - z.max())
            p /= p.sum()
            q = p * y[a:b]
            q /= q.sum()
            grad[a:b] = p - q
            hess[a:b] = np.maximum(p * (1.0 - p), 1e-6)
        return grad, hess

    return objective


def fit_trees(
    base: SelectorModel,
    groups: Sequence[tuple[np.ndarray, np.ndarray]],
    rounds: int = TREE_ROUNDS,
    params: dict | None = None,
) -> SelectorModel:
    """``base`` plus ``rounds`` boosted trees fitted on ``groups`` (as for :func:`fit`) with the
    base's scores as the starting point (module docstring).

    Raises:
        CitewiseError: LightGBM is not installed (``pip install 'citewise[tune]'``), or no usable
            group.
    """
    try:
        import lightgbm as lgb
    except ImportError:
        raise CitewiseError("fitting trees needs LightGBM: pip install 'citewise[tune]'") from None
    use = _usable(groups)
    x = np.vstack([g for g, _ in use])
    y = np.concatenate([g for _, g in use])
    sizes = [len(g) for _, g in use]
    init = np.concatenate([base.linear(g) for g, _ in use])
    data = lgb.Dataset(x, y, group=sizes, init_score=init, free_raw_data=False)
    settings = {**TREE_PARAMS, **(params or {}), "objective": listnet_objective(sizes, y)}
    booster = lgb.train(settings, data, num_boost_round=rounds)
    dump = booster.dump_model()
    trees = [Tree.from_lightgbm(t["tree_structure"]) for t in dump["tree_info"]]
    return SelectorModel(base.features, base.mean, base.scale, base.weights, dict(base.info), trees)
