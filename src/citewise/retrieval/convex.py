"""Convex score fusion of BM25 and dense, with vector pseudo-relevance feedback (``hybrid-prf``).

**Fusion.** Each list's scores are min-max normalised over its top ``depth`` candidates, then
``score(c) = alpha * dense(c) + (1 - alpha) * bm25(c)`` with a missing score counting 0 (Bruch,
Gai and Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 2023: a convex
combination of normalised scores beats reciprocal rank fusion once ``alpha`` is set on a few
judged queries; min-max over the retrieved list is their ``MM`` normaliser). Ties break by chunk
id ascending.

**Pseudo-relevance feedback.** With ``prf_chunks = m > 0`` the query vector is moved toward the
top ``m`` fused chunks, Rocchio style (Rocchio 1971; the "Vector PRF" of Li et al., "Pseudo
Relevance Feedback with Deep Language Models and Dense Retrievers: Successes and Pitfalls", ACM
TOIS 2023): ``q' = q/|q| + beta * mean(c_i/|c_i|)``, dense search is run again with ``q'`` (same
filters, inside the store), and the BM25 list is fused with that second dense list.

Defaults ``alpha = 0.5``, ``m = 3``, ``beta = 0.5`` were chosen on the SciFact *train* qrels
(809 queries; the test split was measured once with them, see README "Evaluate on BEIR");
``citewise tune --model convex`` fits them for another corpus with cross-validation.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from citewise.core import Filters, Hit, Principal
from citewise.retrieval.registry import register
from citewise.retrieval.retrievers import BM25Retriever, _hits, effective_filters
from citewise.models.embedding import Embedder
from citewise.store.base import ScoredChunk, Store
from citewise.telemetry.decorators import traced_retrieval

ALPHA = 0.5
PRF_CHUNKS = 3
PRF_BETA = 0.5
DEPTH = 100


def minmax(items: Sequence[ScoredChunk]) -> dict[str, float]:
    """``{chunk_id: (s - min) / (max - min)}`` over ``items`` (first occurrence of an id); all 1.0
    when every score is equal; ``{}`` for no items.

    >>> minmax([ScoredChunk("a", "d", "", 3.0), ScoredChunk("b", "d", "", 1.0), ScoredChunk("c", "d", "", 2.0)])
    {'a': 1.0, 'b': 0.0, 'c': 0.5}
    """
    seen: dict[str, float] = {}
    for c in items:
        seen.setdefault(c.chunk_id, float(c.score))
    if not seen:
        return {}
    lo, hi = min(seen.values()), max(seen.values())
    if hi - lo <= 0:
        return {cid: 1.0 for cid in seen}
    return {cid: (s - lo) / (hi - lo) for cid, s in seen.items()}


def convex_fusion(
    lexical: Sequence[ScoredChunk], dense: Sequence[ScoredChunk], alpha: float = ALPHA
) -> list[ScoredChunk]:
    """Fuse two scored lists: ``alpha * minmax(dense) + (1 - alpha) * minmax(lexical)``; sorted by
    fused score desc, then chunk id asc; each chunk once, carrying the fused score.

    Raises:
        ValueError: ``alpha`` outside [0, 1].

    >>> L = [ScoredChunk("a", "d1", "", 10.0), ScoredChunk("b", "d2", "", 5.0)]
    >>> D = [ScoredChunk("b", "d2", "", 0.9), ScoredChunk("c", "d3", "", 0.5)]
    >>> [(c.chunk_id, round(c.score, 3)) for c in convex_fusion(L, D, 0.5)]
    [('a', 0.5), ('b', 0.5), ('c', 0.0)]
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    lex, vec = minmax(lexical), minmax(dense)
    by_id = {c.chunk_id: c for c in dense}
    by_id.update({c.chunk_id: c for c in lexical})
    fused = {cid: alpha * vec.get(cid, 0.0) + (1.0 - alpha) * lex.get(cid, 0.0) for cid in by_id}
    order = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
    return [ScoredChunk(cid, by_id[cid].doc_id, by_id[cid].title, s) for cid, s in order]


def feedback_vector(query_vec: np.ndarray, chunk_vecs: Sequence[np.ndarray], beta: float) -> np.ndarray:
    """Rocchio's moved query ``q/|q| + beta * mean(c/|c|)`` (module docstring); ``q/|q|`` when
    ``chunk_vecs`` is empty or ``beta`` is 0. Shape ``(dim,)``, float32.

    >>> feedback_vector(np.array([2.0, 0.0]), [np.array([0.0, 3.0])], 0.5).tolist()
    [1.0, 0.5]
    """
    q: np.ndarray = np.asarray(query_vec, dtype=np.float32)
    q = q / (np.linalg.norm(q) or 1.0)
    if beta == 0 or len(chunk_vecs) == 0:
        return q
    C = np.stack([np.asarray(v, dtype=np.float32) for v in chunk_vecs])
    C = C / np.maximum(np.linalg.norm(C, axis=1, keepdims=True), 1e-12)
    moved: np.ndarray = (q + beta * C.mean(axis=0)).astype(np.float32)
    return moved


def feedback_fusion(
    store: Store,
    qvec: np.ndarray,
    lexical: Sequence[ScoredChunk],
    first: list[ScoredChunk],
    alpha: float,
    prf_chunks: int,
    prf_beta: float,
    depth: int,
    filters: Filters,
    vector_cache: dict[str, np.ndarray] | None = None,
) -> list[ScoredChunk]:
    """The feedback round (module docstring): ``first`` (the first fused list) when feedback is
    off or there is nothing to feed back; else BM25 fused again with a dense search (``depth``,
    inside ``filters``) for the query moved toward ``first``'s top ``prf_chunks``.
    ``vector_cache`` (chunk id -> vector) saves store reads across calls."""
    if prf_chunks == 0 or prf_beta == 0 or not first:
        return first
    cache: dict[str, np.ndarray] = {} if vector_cache is None else vector_cache
    top = [c.chunk_id for c in first[:prf_chunks]]
    missing = [c for c in top if c not in cache]
    if missing:
        cache.update(store.get_vectors(missing))
    moved = feedback_vector(qvec, [cache[c] for c in top if c in cache], prf_beta)
    return convex_fusion(lexical, store.vector_search(moved, depth, filters), alpha)


@register("hybrid-prf")
class ConvexRetriever:
    """Convex fusion of BM25 and dense with optional vector PRF (module docstring).

    Args:
        alpha: dense weight in [0, 1].
        prf_chunks: feedback chunks ``m`` (0 turns feedback off).
        prf_beta: feedback weight ``beta`` (>= 0).
        depth: candidates taken from each list (at least k).

    Raises:
        ValueError: ``alpha`` outside [0, 1], negative ``prf_chunks`` or ``prf_beta``.
    """

    name = "hybrid-prf"

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        alpha: float = ALPHA,
        prf_chunks: int = PRF_CHUNKS,
        prf_beta: float = PRF_BETA,
        depth: int = DEPTH,
    ) -> None:
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {alpha}")
        if prf_chunks < 0 or prf_beta < 0:
            raise ValueError(f"prf_chunks and prf_beta must be >= 0, got {prf_chunks}, {prf_beta}")
        self.store = store
        self.embedder = embedder
        self.bm25 = BM25Retriever(store)
        self.alpha, self.prf_chunks, self.prf_beta, self.depth = alpha, int(prf_chunks), prf_beta, depth

    def fused(self, query: str, k: int, filters: Filters) -> list[ScoredChunk]:
        """The fused candidates (at most ``max(k, depth)`` per list), best first."""
        if not query.strip():
            return []
        depth = max(k, self.depth)
        qvec = self.embedder.embed([query])[0]
        lex = self.bm25.candidates(query, depth, filters)
        vec = self.store.vector_search(qvec, depth, filters)
        first = convex_fusion(lex, vec, self.alpha)
        return feedback_fusion(self.store, qvec, lex, first, self.alpha, self.prf_chunks, self.prf_beta, depth, filters)

    @traced_retrieval
    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        return _hits(self.fused(query, k, effective_filters(principal, filters)), self.name, k)


#: The grid :func:`tune_convex` searches: dense weights, and (feedback chunks, feedback weight).
ALPHA_GRID = (0.3, 0.4, 0.5, 0.6, 0.7)
PRF_GRID = ((0, 0.0), (3, 0.5), (3, 1.0), (5, 0.5))
