"""Exact dense search in NumPy over the vectors kept with a table version's postings.

:func:`exact_top` ranks rows by cosine to a query: the best ``k`` (among the visible rows when a
filter mask is given), ties within :data:`TIE_DECIMALS` decimals by chunk id. How much of the
matrix is read depends on the filter:

* a visible share of at least :data:`GATHER_MAX_SHARE` (or no filter): one float32 product over
  every row, on one BLAS thread (a query's product is memory-bound: more threads only add
  hand-offs), then the visible rows are selected. The product reads the vectors transposed
  (dim, n), C-contiguous: OpenBLAS's row-major matrix-vector kernel (``q @ V^T``) streamed them
  1.9 times as fast as the (n, dim) layout's (``V @ q``): 6.7 vs 12.7 ms at 100k x 384, one
  thread (bench/dense_search.py, the NumPy peer uses the latter);
* a more selective filter: only the visible rows are gathered and multiplied, so a principal who
  sees 1% of the chunks pays ~1% of the pass (the search gets cheaper, not dearer, with a
  selective filter).

In both, the float32 scores pick candidates within :data:`SELECT_MARGIN` of the k-th best, and
only those are scored again in float64 and ranked (same result as scoring every row in float64).
"""

from __future__ import annotations

from typing import Any, Callable, Literal

import numpy as np

#: Cosines are compared at this many decimals, so that vectors at mathematically equal distance
#: (float32 rounding puts them ~1e-7 apart) tie and go by id.
TIE_DECIMALS = 6
#: Candidates of the float32 pass reach this far below its k-th best cosine. The float32 error of
#: a dot product of two unit vectors of dimension d is at most d * 2**-24 (~2.3e-5 at d = 384,
#: Higham, "Accuracy and Stability of Numerical Algorithms", eq. 3.5); twice that plus the 1e-6
#: tie band is below this, so every row the float64 ranking could keep is a candidate.
SELECT_MARGIN = 1e-4
#: Below this visible share the visible rows are gathered (``np.take`` of the (n, dim) rows) and
#: scored alone; above, one pass over every row is cheaper. At 100k x 384, one thread: gather 0.07
#: / 1.4 / 4.9 / 14.5 ms at 1 / 5 / 15 / 30% visible, full pass 6.6 ms.
GATHER_MAX_SHARE = 0.12

#: threadpoolctl's BLAS library controllers (untyped), found on first use
_BLAS: list[Any] | None = None


class _OneBlasThread:
    """Context: the BLAS libraries' thread counts set to 1 inside, put back after (only those
    that had more). Calls OpenBLAS's own get/set functions through ``threadpoolctl``'s library
    controllers, found once: ``threadpoolctl.ThreadpoolController.limit`` cost ~0.15-0.3 ms of
    bookkeeping per query, more than a 5k-row product."""

    def __init__(self, controllers: list[Any]):
        self._controllers = controllers
        self._restore: list[tuple[Any, int]] = []

    def __enter__(self) -> _OneBlasThread:
        self._restore = []
        for c in self._controllers:
            n = c.get_num_threads()
            if n is not None and n > 1:
                c.set_num_threads(1)
                self._restore.append((c, n))
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        for c, n in self._restore:
            c.set_num_threads(n)
        self._restore = []
        return False


def one_blas_thread() -> _OneBlasThread:
    """A context in which NumPy's BLAS runs on one thread (``threadpoolctl``'s controllers).

    A query's matrix-vector product is memory-bound: OpenBLAS's worker threads add nothing but
    their hand-off, and on shared cores they spin. Measured on the 2-core machine, 10,000 x 384
    float32 times a vector, same run: 6.6 ms CPU / 29.7 ms wall with OpenBLAS's default threads,
    0.8 ms CPU / 5.1 ms wall on one (load ~12). The limit is process-wide while the context is
    open (BLAS has no per-thread setting).
    """
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController().select(user_api="blas").lib_controllers
    return _OneBlasThread(_BLAS)


def exact_top(
    vectors: np.ndarray,
    vector: np.ndarray,
    k: int,
    visible: np.ndarray | None,
    rows_of: Callable[[np.ndarray], tuple[list[str], list[str], list[str]]],
    vectors_t: np.ndarray | None = None,
    hidden: np.ndarray | None = None,
) -> list[tuple[str, str, str, float]]:
    """The best ``k`` rows of ``vectors`` by cosine to ``vector`` (see module docstring).

    Args:
        vectors: float32 (n, dim), rows L2-normalised.
        vector: the query, shape (dim,) (normalised here).
        k: results wanted.
        visible: int64 positions of the rows the filter lets through, ascending (None: all).
        rows_of: ``(chunk ids, doc ids, titles)`` of an array of row positions.
        vectors_t: ``vectors`` transposed, C-contiguous (dim, n), for the full pass (None: the
            (n, dim) layout is used).
        hidden: the positions ``visible`` leaves out (optional): when fewer than the visible ones,
            the full pass's scores of these rows are dropped instead of the visible ones taken.

    Returns:
        ``[(chunk_id, doc_id, title, cosine)]``, best first, ties by chunk id.
    """
    n = len(vectors)
    q = np.asarray(vector, dtype=np.float64).reshape(-1)
    norm = float(np.linalg.norm(q))
    q = q / norm if norm > 0 else q
    if (visible is not None and len(visible) == 0) or k <= 0 or n == 0:
        return []
    if visible is not None and len(visible) <= k:
        cand = visible
        cs = vectors[cand].astype(np.float64) @ q
    else:
        q32 = q.astype(np.float32)
        with one_blas_thread():
            gather = visible is not None and len(visible) < GATHER_MAX_SHARE * n
            if gather and visible is not None:
                sims = np.take(vectors, visible, axis=0) @ q32  # gather the visible rows only
            else:
                sims = q32 @ vectors_t if vectors_t is not None else vectors @ q32  # float32: selection only
        if visible is not None and not gather:
            if hidden is not None and len(hidden) < len(visible):  # mostly visible: drop the hidden rows
                sims[hidden] = -np.inf
                visible = None
            else:
                sims = sims[visible]
        cand = visible if visible is not None else np.arange(n)
        kth = np.partition(sims, len(sims) - k)[len(sims) - k]
        cand = cand[sims >= kth - SELECT_MARGIN]
        cs = vectors[cand].astype(np.float64) @ q  # float64 dot products, as ranked
        if len(cand) > k:
            kth = np.partition(cs, len(cs) - k)[len(cs) - k]
            sel = cs >= kth - 10.0**-TIE_DECIMALS
            cand, cs = cand[sel], cs[sel]
    chunk, docs, titles = rows_of(cand)
    scores = cs.tolist()
    # cosines equal up to rounding (1e-7 apart for equal vectors) tie, and ties go by chunk id
    order = sorted(range(len(cand)), key=lambda i: (-round(scores[i], TIE_DECIMALS), chunk[i]))[:k]
    return [(chunk[i], docs[i], titles[i], scores[i]) for i in order]
