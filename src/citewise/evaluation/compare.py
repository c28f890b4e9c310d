"""Run retrievers over a golden set and compare them: metrics per slice, CIs and paired p-values.

:func:`compare` takes one run per arm (the first arm is the baseline) and returns a
:class:`Comparison`: for every arm, slice and metric the mean, its 95% bootstrap CI, and for
every non-baseline arm the paired difference to the baseline with its bootstrap CI and a
two-sided paired randomisation p-value (:mod:`citewise.evaluation.significance`). Per-query
values are kept so reports and gates need nothing else.

An arm with no hits at all is an error (:func:`citewise.evaluation.metrics.evaluate`): an empty
arm must never be reported as "significantly worse".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from citewise.core import CitewiseError
from citewise.evaluation.beir import doc_ranking
from citewise.evaluation.golden import GoldenSet
from citewise.evaluation.metrics import DEFAULT_METRICS, evaluate, parse_metrics, slice_means
from citewise.evaluation.significance import BOOTSTRAP, PERMUTATIONS, SEED, bootstrap_ci, randomization_test

Ranked = dict[str, list[tuple[str, float]]]


def ranking_for(hits, level: str, depth: int) -> list[tuple[str, float]]:
    """``[(id, score)]`` from hits at ``level`` (``doc``: first chunk of each document wins;
    ``chunk``: chunk ids, duplicates dropped), at most ``depth`` entries."""
    return doc_ranking(hits, depth, level)


def run_golden(
    retriever, golden: GoldenSet, depth: int = 100, principal=None, progress: Callable[[int], None] | None = None
) -> Ranked:
    """Search every golden query: ``{qid: [(doc or chunk id, score), ...]}`` (at most ``depth``).

    Chunks are fetched at 1.5x depth (as :func:`citewise.evaluation.beir.run_queries`) so that
    documents split into several chunks still leave ``depth`` distinct documents.
    """
    out: Ranked = {}
    for q in golden.queries:
        hits = retriever.search(q.text, k=int(depth * 1.5), principal=principal)
        out[q.qid] = ranking_for(hits, q.level, depth)
        if progress:
            progress(1)
    return out


@dataclass
class Comparison:
    """Result of :func:`compare` (all numbers plain floats, JSON-ready via :meth:`to_dict`).

    Attributes:
        name: what was evaluated (golden file or dataset name).
        arms: arm names; ``arms[0]`` is the baseline.
        metrics: metric names (columns).
        slices: ``{slice: [qid, ...]}``; ``all`` first.
        per_query: ``{arm: {qid: {metric: value}}}``.
        means: ``{arm: {slice: {metric: mean}}}``.
        ci: ``{arm: {slice: {metric: [low, high]}}}`` (95% percentile bootstrap of the mean).
        deltas: ``{arm: {slice: {metric: {"delta", "ci", "p"}}}}`` for arms[1:], vs the baseline.
        settings: permutations, bootstrap resamples, seed, level.
        info: free-form extras (timings, index, split).
    """

    name: str
    arms: list[str]
    metrics: list[str]
    slices: dict[str, list[str]]
    per_query: dict[str, dict[str, dict[str, float]]]
    means: dict[str, dict[str, dict[str, float]]]
    ci: dict[str, dict[str, dict[str, list[float]]]]
    deltas: dict[str, dict[str, dict[str, dict]]]
    settings: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    @property
    def baseline(self) -> str:
        return self.arms[0]

    def to_dict(self) -> dict:
        """Everything as plain JSON types (``citewise eval compare --json`` prints this)."""
        return {
            "name": self.name,
            "baseline": self.baseline,
            "arms": self.arms,
            "metrics": self.metrics,
            "slices": {s: len(q) for s, q in self.slices.items()},
            "slice_queries": self.slices,
            "means": self.means,
            "ci": self.ci,
            "deltas": self.deltas,
            "per_query": self.per_query,
            "settings": self.settings,
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> "Comparison":
        """Rebuild from :meth:`to_dict` output.

        Raises:
            CitewiseError: a required key is missing.
        """
        try:
            return cls(
                data["name"],
                list(data["arms"]),
                list(data["metrics"]),
                {s: list(q) for s, q in data["slice_queries"].items()},
                data["per_query"],
                data["means"],
                data["ci"],
                data["deltas"],
                data.get("settings", {}),
                data.get("info", {}),
            )
        except (KeyError, TypeError, AttributeError) as e:
            raise CitewiseError(f"not a comparison produced by 'citewise eval compare --json' (missing {e})") from None


def compare(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Mapping],
    *,
    slices: Mapping[str, Sequence[str]] | None = None,
    metrics: Sequence[str] = DEFAULT_METRICS,
    name: str = "",
    permutations: int = PERMUTATIONS,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
    level: float = 0.95,
) -> Comparison:
    """Evaluate each arm's run and compare every arm with the first.

    Args:
        qrels: ``{qid: {id: grade}}``.
        runs: ``{arm: run}`` in arm order; a run is ``{qid: [(id, score), ...]}`` (ranked, as from
            :func:`run_golden`), ``{qid: [id, ...]}`` or ``{qid: {id: score}}``.
        slices: ``{slice: [qid, ...]}``; default one slice ``all`` with every qrels query.
        metrics: metric names (:func:`citewise.evaluation.metrics.parse_metrics`).
        permutations, resamples, seed, level: randomisation test and bootstrap settings.

    Raises:
        CitewiseError: no arms, an arm with no hits at all, an unknown metric, or an empty slice.
    """
    if not runs:
        raise CitewiseError("nothing to compare: give at least one retriever")
    metrics = parse_metrics(list(metrics))
    slices = {s: list(q) for s, q in (slices or {"all": sorted(qrels)}).items()}
    arms = list(runs)
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    for arm in arms:
        run = {
            q: ([d for d, _ in items] if isinstance(items, list) and items and isinstance(items[0], tuple) else items)
            for q, items in runs[arm].items()
        }
        try:
            per_query[arm] = evaluate(qrels, run, metrics).per_query
        except CitewiseError as e:
            raise CitewiseError(f"arm '{arm}': {e}") from None
    means = {arm: slice_means(per_query[arm], slices, metrics) for arm in arms}
    ci: dict = {arm: {} for arm in arms}
    deltas: dict = {arm: {} for arm in arms[1:]}
    base = arms[0]
    for s, qids in slices.items():
        mats = {arm: np.array([[per_query[arm][q][m] for m in metrics] for q in qids]) for arm in arms}
        for arm in arms:
            bounds = bootstrap_ci(mats[arm], resamples, seed, level)
            ci[arm][s] = {m: [float(lo), float(hi)] for m, (lo, hi) in zip(metrics, bounds)}
        for arm in arms[1:]:
            diff = mats[arm] - mats[base]
            bounds = bootstrap_ci(diff, resamples, seed, level)
            pvals = randomization_test(mats[base], mats[arm], permutations, seed)
            deltas[arm][s] = {
                m: {
                    "delta": float(diff[:, j].mean()),
                    "ci": [float(bounds[j, 0]), float(bounds[j, 1])],
                    "p": float(pvals[j]),
                }
                for j, m in enumerate(metrics)
            }
    settings = {
        "test": "paired randomisation, two-sided",
        "permutations": permutations,
        "ci": "percentile bootstrap",
        "resamples": resamples,
        "seed": seed,
        "level": level,
    }
    return Comparison(name, arms, metrics, slices, per_query, means, ci, deltas, settings)
