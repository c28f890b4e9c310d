"""Reciprocal rank fusion.

RRF (Cormack, Clarke and Büttcher, SIGIR 2009, "Reciprocal Rank Fusion outperforms Condorcet and
individual Rank Learning Methods"): ``score(d) = sum over lists L containing d of w_L / (k + rank_L(d))``
with 1-based ranks and ``k = 60`` (the paper's constant). Ties in the fused score break by id
ascending, so the output is a total order.
"""

from __future__ import annotations

from typing import Sequence

RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Fuse ranked id lists; returns ``(id, score)`` sorted by score desc, then id asc.

    Args:
        rankings: each a list of ids, best first; an id repeated within one list counts once
            (its first rank).
        k: the RRF constant (> 0).
        weights: one per ranking (default all 1.0).

    Raises:
        ValueError: ``k <= 0`` or weights of the wrong length.

    >>> reciprocal_rank_fusion([["a", "b"], ["b", "c"]], k=60)[0]
    ('b', 0.03252247488101534)
    """
    if k <= 0:
        raise ValueError(f"RRF k must be > 0, got {k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    scores: dict[str, float] = {}
    for ranking, w in zip(rankings, weights):
        seen: set[str] = set()
        rank = 0
        for item in ranking:
            if item in seen:
                continue
            seen.add(item)
            rank += 1
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
