"""Retrieval metrics with trec_eval's definitions, per query and averaged.

Conventions (trec_eval 9.x, which pytrec_eval wraps; DESIGN.md "Conventions"):

* A document is relevant when its grade is >= 1 (trec_eval ``relevance_level`` 1).
* A scored run is ordered by score descending, ties by document id *descending* (trec_eval's
  ``qsort`` comparator). Scores are compared in single precision, because trec_eval keeps them
  as C ``float`` (``TEXT_RESULTS.sim``): 1.0 and 1.0 + 1e-12 are a tie there, and so here. A
  ranked list (Python list) is used in its own order.
* Duplicate documents in a query's run are dropped, first occurrence wins.
* A query in the qrels but absent from the run scores 0 on every measure; queries in the run but
  not in the qrels are ignored. Means are over the qrels' queries.
* A run with no hits at all for the qrels' queries (an empty arm) is an error, not a score of 0:
  a retriever that returned nothing must never be reported, let alone called significantly worse.

Measures (``name@k`` cuts the ranking at k):

* ``ndcg@k`` — trec_eval ``ndcg_cut_k``: DCG = sum gain_i / log2(i + 1) over ranks i <= k with
  gain = grade (linear); IDCG from all judged grades > 0 sorted descending; 0 when IDCG is 0.
* ``ndcg_exp@k`` — the same with gain 2^grade - 1 (Burges et al. 2005); not a trec_eval measure.
* ``mrr@k`` — trec_eval ``recip_rank`` on the ranking cut at k (``mrr`` uncut).
* ``recall@k`` — trec_eval ``recall_k``: relevant in top k / all relevant (0 if none).
* ``precision@k`` (alias ``p@k``) — trec_eval ``P_k``: relevant in top k / k.
* ``map`` / ``map@k`` — trec_eval ``map`` / ``map_cut_k``: sum of precision at each relevant
  rank (<= k) divided by the number of relevant documents.
* ``hit@k`` — trec_eval ``success_k``: 1 if any relevant document is in the top k.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping, Sequence, Union

import numpy as np

from citewise.core import CitewiseError

Qrels = Mapping[str, Mapping[str, int]]
Ranking = Union[Sequence[str], Mapping[str, float]]
Run = Mapping[str, Ranking]

MEASURES = ("ndcg", "ndcg_exp", "mrr", "recall", "precision", "map", "hit")

#: Metrics reported by ``citewise eval compare`` / ``gate`` unless ``--metrics`` says otherwise.
DEFAULT_METRICS = ("ndcg@10", "ndcg_exp@10", "mrr@10", "recall@10", "precision@10", "map", "hit@1", "hit@10")

#: Name of the slice holding every query (a golden-set kind may not use it).
ALL_SLICE = "all"
_NAME = re.compile(r"^(ndcg_exp|ndcg|mrr|recall|precision|p|map|hit)(?:@(\d+))?$")
_NEEDS_K = {"ndcg", "ndcg_exp", "recall", "precision", "hit"}


@dataclass(frozen=True)
class Metric:
    """A parsed measure name such as ``ndcg@10`` (``k`` None = uncut)."""

    measure: str
    k: int | None

    @classmethod
    def parse(cls, name: str) -> "Metric":
        """Parse ``name``.

        Raises:
            CitewiseError: unknown measure or a cut-off that is missing or < 1.
        """
        m = _NAME.match(name.strip().lower())
        if not m:
            raise CitewiseError(
                f"unknown metric '{name}' (valid: ndcg@k, ndcg_exp@k, mrr, mrr@k, recall@k, "
                "precision@k, map, map@k, hit@k)"
            )
        measure = "precision" if m.group(1) == "p" else m.group(1)
        k = int(m.group(2)) if m.group(2) else None
        if k is not None and k < 1:
            raise CitewiseError(f"metric '{name}': cut-off must be >= 1")
        if k is None and measure in _NEEDS_K:
            raise CitewiseError(f"metric '{name}' needs a cut-off, e.g. {measure}@10")
        return cls(measure, k)

    def __str__(self) -> str:
        return self.measure if self.k is None else f"{self.measure}@{self.k}"


def ordered(ranking: Ranking) -> list[str]:
    """Document ids of one query's run in evaluation order, duplicates removed.

    A mapping ``{doc: score}`` is sorted like trec_eval (score desc as float32, doc id desc); a
    sequence is kept in its order.
    """
    if isinstance(ranking, Mapping):
        items = sorted(ranking.items(), key=lambda kv: kv[0].encode("utf-8"), reverse=True)  # strcmp order
        items.sort(key=lambda kv: float(np.float32(kv[1])), reverse=True)  # stable: ties keep doc id descending
        docs = [d for d, _ in items]
    else:
        docs = list(ranking)
    seen: set[str] = set()
    out = []
    for d in docs:
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def _score_one(metric: Metric, docs: list[str], judged: Mapping[str, int]) -> float:
    num_rel = sum(1 for g in judged.values() if g >= 1)
    cut = docs if metric.k is None else docs[: metric.k]
    m = metric.measure
    if m in ("ndcg", "ndcg_exp"):
        gain = (lambda g: float(g)) if m == "ndcg" else (lambda g: 2.0**g - 1.0)
        dcg = sum(gain(judged[d]) / math.log2(i + 2) for i, d in enumerate(cut) if judged.get(d, 0) > 0)
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)
        if metric.k is not None:
            ideal = ideal[: metric.k]
        idcg = sum(gain(g) / math.log2(i + 2) for i, g in enumerate(ideal))
        return dcg / idcg if idcg > 0 else 0.0
    if m == "mrr":
        for i, d in enumerate(cut):
            if judged.get(d, 0) >= 1:
                return 1.0 / (i + 1)
        return 0.0
    rel_flags = [judged.get(d, 0) >= 1 for d in cut]
    if m == "recall":
        return sum(rel_flags) / num_rel if num_rel else 0.0
    if m == "precision":
        return sum(rel_flags) / metric.k
    if m == "hit":
        return 1.0 if any(rel_flags) else 0.0
    if m == "map":
        if not num_rel:
            return 0.0
        hits, total = 0, 0.0
        for i, flag in enumerate(rel_flags):
            if flag:
                hits += 1
                total += hits / (i + 1)
        return total / num_rel
    raise CitewiseError(f"unknown measure {m}")  # pragma: no cover - parse() prevents it


@dataclass
class Evaluation:
    """Per-query values and means of several metrics over one run.

    Attributes:
        per_query: ``{qid: {metric name: value}}`` for every qrels query.
        means: ``{metric name: mean over per_query}``.
    """

    per_query: dict[str, dict[str, float]]
    means: dict[str, float]


def parse_metrics(metrics: str | Sequence[str]) -> list[str]:
    """Canonical metric names from ``"ndcg@10,mrr@10"`` or a list; duplicates dropped, order kept.

    Raises:
        CitewiseError: an unknown name (the message lists the valid ones) or an empty list.
    """
    names = [m for m in (metrics.split(",") if isinstance(metrics, str) else metrics) if m.strip()]
    if not names:
        raise CitewiseError("no metrics given (e.g. --metrics ndcg@10,mrr@10)")
    return list(dict.fromkeys(str(Metric.parse(m)) for m in names))


def evaluate(qrels: Qrels, run: Run, metrics: Sequence[str], *, allow_empty: bool = False) -> Evaluation:
    """Score ``run`` against ``qrels`` (see module docstring for the conventions).

    Args:
        qrels: ``{qid: {doc_id: grade}}``.
        run: ``{qid: [doc_id, ...]}`` (ranked) or ``{qid: {doc_id: score}}``.
        metrics: names such as ``["ndcg@10", "mrr@10", "recall@100"]``.
        allow_empty: score a run without a single hit for the qrels' queries as all zeros
            instead of raising.

    Raises:
        CitewiseError: an unknown metric name, empty qrels, or (unless ``allow_empty``) a run
            with no hits for any qrels query.
    """
    parsed = [Metric.parse(m) for m in metrics]
    if not qrels:
        raise CitewiseError("qrels are empty: nothing to evaluate")
    docs_of = {qid: ordered(run.get(qid, [])) for qid in sorted(qrels)}
    if not allow_empty and not any(docs_of.values()):
        raise CitewiseError(
            f"the run has no hits for any of the {len(qrels)} qrels queries: an empty arm is an error, "
            "not a score of 0 (check the query ids and that the retriever returned results)"
        )
    per_query: dict[str, dict[str, float]] = {}
    for qid, docs in docs_of.items():
        per_query[qid] = {str(m): _score_one(m, docs, qrels[qid]) for m in parsed}
    n = len(per_query)
    means = {str(m): math.fsum(v[str(m)] for v in per_query.values()) / n for m in parsed}
    return Evaluation(per_query, means)


def slice_means(
    per_query: Mapping[str, Mapping[str, float]], slices: Mapping[str, Sequence[str]], metrics: Sequence[str]
) -> dict[str, dict[str, float]]:
    """Mean of each metric over each slice's queries: ``{slice: {metric: mean}}``.

    Args:
        per_query: ``{qid: {metric: value}}`` as in :attr:`Evaluation.per_query`.
        slices: ``{slice name: [qid, ...]}``, e.g. from :func:`slices_of`.

    Raises:
        CitewiseError: a slice is empty or names a query without per-query values.
    """
    out: dict[str, dict[str, float]] = {}
    for name, qids in slices.items():
        missing = [q for q in qids if q not in per_query]
        if not qids or missing:
            raise CitewiseError(
                f"slice '{name}': " + (f"query '{missing[0]}' was not evaluated" if missing else "no queries")
            )
        out[name] = {m: math.fsum(per_query[q][m] for q in qids) / len(qids) for m in metrics}
    return out


def slices_of(kinds: Mapping[str, str]) -> dict[str, list[str]]:
    """``{"all": every qid, kind: [qid, ...], ...}`` from ``{qid: kind}``; qids sorted, kinds sorted.

    Queries whose kind is empty belong to ``all`` only.
    """
    out: dict[str, list[str]] = {ALL_SLICE: sorted(kinds)}
    for kind in sorted({k for k in kinds.values() if k}):
        out[kind] = sorted(q for q, k in kinds.items() if k == kind)
    return out
