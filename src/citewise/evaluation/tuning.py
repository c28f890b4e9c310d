"""Fitting fusion parameters on judged queries: k-fold cross-validation against reciprocal rank
fusion, decided by the paired randomisation test (Smucker, Allan and Carterette, "A Comparison of
Statistical Significance Tests for Information Retrieval Evaluation", CIKM 2007).

The fitted models are used by the retrievers in :mod:`citewise.retrieval.convex` and
:mod:`citewise.retrieval.fusion_learned`; the fitting lives here because it scores runs with the
evaluation layer's metrics.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from citewise.core import CitewiseError
from citewise.evaluation.metrics import evaluate
from citewise.evaluation.significance import randomization_test
from citewise.retrieval.convex import ALPHA_GRID, DEPTH, PRF_GRID, convex_fusion, feedback_fusion
from citewise.retrieval.fusion import reciprocal_rank_fusion
from citewise.retrieval.fusion_learned import FEATURES, FITTERS, FusionModel, Labeled, TuneReport, ndcg10
from citewise.retrieval.retrievers import effective_filters
from citewise.store.base import ScoredChunk
from citewise.text.analyzer import analyze


def cross_validate(
    data: Sequence[Labeled],
    kind: str = "linear",
    folds: int = 5,
    seed: int = 42,
    permutations: int = 10_000,
    alpha: float = 0.05,
) -> TuneReport:
    """k-fold CV of ``kind`` against RRF, then the decision (module docstring). Queries without
    any relevant candidate still count (nDCG 0 for both).

    Raises:
        CitewiseError: fewer queries than folds, or fewer than 2 folds.
    """
    n = len(data)
    if folds < 2 or n < folds:
        raise CitewiseError(
            f"cross-validation needs at least 2 folds and one query per fold ({n} queries, {folds} folds)"
        )
    order = np.random.default_rng(seed).permutation(n)
    fold_of = np.empty(n, dtype=int)
    fold_of[order] = np.arange(n) % folds
    rrf_j = FEATURES.index("rrf")
    rrf = [ndcg10(q.pool.X[:, rrf_j], q) for q in data]
    tuned = [0.0] * n
    for f in range(folds):
        model = FITTERS[kind]([data[i] for i in range(n) if fold_of[i] != f], seed=seed)
        for i in np.flatnonzero(fold_of == f):
            tuned[i] = ndcg10(model.score(data[i].pool.X), data[i])
    p = float(randomization_test(np.array(rrf), np.array(tuned), permutations, seed)[0])
    better = np.mean(tuned) > np.mean(rrf)
    stored = bool(better and p < alpha)
    if stored:
        reason = f"held-out nDCG@10 {np.mean(tuned):.4f} vs RRF {np.mean(rrf):.4f}, p = {p:.4g} < {alpha}"
    elif not better:
        reason = (
            f"does not beat RRF on held-out queries (nDCG@10 {np.mean(tuned):.4f} vs {np.mean(rrf):.4f}, p = {p:.4g})"
        )
    else:
        reason = f"not significantly better than RRF (nDCG@10 {np.mean(tuned):.4f} vs {np.mean(rrf):.4f}, p = {p:.4g} >= {alpha})"
    final = FITTERS[kind](list(data), seed=seed) if stored else None
    return TuneReport(kind, folds, n, rrf, tuned, p, alpha, stored, reason, final)


def _ranked_keys(items: Sequence[ScoredChunk], level: str, depth: int = 100) -> list[str]:
    seen: dict[str, None] = {}
    for c in items:
        seen.setdefault(c.doc_id if level == "doc" else c.chunk_id, None)
        if len(seen) == depth:
            break
    return list(seen)


def tune_convex(
    store,
    embedder,
    queries,
    qrels,
    level="doc",
    folds: int = 5,
    seed: int = 42,
    permutations: int = 10_000,
    alpha: float = 0.05,
    progress=None,
    principal=None,
):
    """Fit ``(alpha, prf_chunks, prf_beta)`` over :data:`ALPHA_GRID` x :data:`PRF_GRID` with k-fold
    cross-validation against RRF, as :func:`cross_validate` does
    for the feature models: each fold's queries are ranked with the grid point that is best
    (mean nDCG@10, trec_eval linear gain) on the other folds, compared per query with RRF (k=60)
    by the paired randomisation test; stored only when better and ``p < alpha``.

    Args:
        queries: ``{qid: text}``; qrels: ``{qid: {doc or chunk id: grade}}``; level: ``doc`` |
            ``chunk`` or one per query id.

    Returns:
        a :class:`citewise.retrieval.fusion_learned.TuneReport` of kind ``convex`` whose model (when
        stored) has ``weights = [alpha, prf_chunks, prf_beta]``.

    Raises:
        CitewiseError: fewer judged queries than folds, or fewer than 2 folds.
    """
    qids = sorted(q for q in queries if q in qrels)
    n = len(qids)
    if folds < 2 or n < folds:
        raise CitewiseError(
            f"cross-validation needs at least 2 folds and one query per fold ({n} queries, {folds} folds)"
        )
    f = effective_filters(principal, None)
    grid = [(a, m, b) for a in ALPHA_GRID for m, b in PRF_GRID]
    runs: dict[tuple, dict[str, list[str]]] = {g: {} for g in grid}
    rrf_run: dict[str, list[str]] = {}
    vec_cache: dict[str, np.ndarray] = {}
    for qid in qids:
        lv = level if isinstance(level, str) else level.get(qid, "doc")
        qvec = embedder.embed([queries[qid]])[0]
        lex = store.lexical_search(analyze(queries[qid]), DEPTH, f)
        vec = store.vector_search(qvec, DEPTH, f)
        by_id = {c.chunk_id: c for c in vec} | {c.chunk_id: c for c in lex}
        rrf = reciprocal_rank_fusion([[c.chunk_id for c in lex], [c.chunk_id for c in vec]])
        rrf_run[qid] = _ranked_keys([by_id[c] for c, _ in rrf], lv)
        for a in ALPHA_GRID:
            first = convex_fusion(lex, vec, a)
            for m, b in PRF_GRID:
                fused = feedback_fusion(store, qvec, lex, first, a, m, b, DEPTH, f, vec_cache)
                runs[(a, m, b)][qid] = _ranked_keys(fused, lv)
        if progress:
            progress(1)
    judged = {q: dict(qrels[q]) for q in qids}
    per = {g: evaluate(judged, runs[g], ["ndcg@10"], allow_empty=True).per_query for g in grid}
    score = {g: np.array([per[g][q]["ndcg@10"] for q in qids]) for g in grid}
    base = evaluate(judged, rrf_run, ["ndcg@10"], allow_empty=True).per_query
    rrf_scores = [float(base[q]["ndcg@10"]) for q in qids]
    order = np.random.default_rng(seed).permutation(n)
    fold_of = np.empty(n, dtype=int)
    fold_of[order] = np.arange(n) % folds
    tuned = [0.0] * n
    for k in range(folds):
        train = fold_of != k
        best = max(grid, key=lambda g: (round(float(score[g][train].mean()), 12), -grid.index(g)))
        for i in np.flatnonzero(~train):
            tuned[i] = float(score[best][i])
    p = float(randomization_test(np.array(rrf_scores), np.array(tuned), permutations, seed)[0])
    better = float(np.mean(tuned)) > float(np.mean(rrf_scores))
    stored = bool(better and p < alpha)
    t, r = float(np.mean(tuned)), float(np.mean(rrf_scores))
    if stored:
        reason = f"held-out nDCG@10 {t:.4f} vs RRF {r:.4f}, p = {p:.4g} < {alpha}"
    elif not better:
        reason = f"does not beat RRF on held-out queries (nDCG@10 {t:.4f} vs {r:.4f}, p = {p:.4g})"
    else:
        reason = f"not significantly better than RRF (nDCG@10 {t:.4f} vs {r:.4f}, p = {p:.4g} >= {alpha})"
    model = None
    if stored:
        a, m, b = max(grid, key=lambda g: (round(float(score[g].mean()), 12), -grid.index(g)))
        model = FusionModel(
            "convex",
            [],
            [],
            weights=[a, m, b],
            features=list(FEATURES),
            info={"grid_means": {f"{g[0]}/{g[1]}/{g[2]}": round(float(score[g].mean()), 4) for g in grid}},
        )
    return TuneReport("convex", folds, n, rrf_scores, tuned, p, alpha, stored, reason, model)
