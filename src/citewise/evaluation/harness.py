"""Glue for the evaluation commands: run several retrievers of one index over a golden set or a
BEIR split, then :func:`~citewise.evaluation.compare.compare` them or gate one of them.

Functions take an opened index (anything with ``store``, ``embedder`` and ``path``, i.e.
:class:`citewise.index.Index`), so this module stays below the interfaces layer.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from citewise.core import CitewiseError
from citewise.evaluation.beir import BeirDataset, PrecomputedEmbedder, run_queries
from citewise.evaluation.compare import Comparison, compare, run_golden
from citewise.evaluation.gate import Breach, Floors, check
from citewise.evaluation.golden import GoldenSet, load_golden
from citewise.evaluation.metrics import DEFAULT_METRICS, parse_metrics
from citewise.evaluation.significance import BOOTSTRAP, PERMUTATIONS, SEED
from citewise.retrieval.retrievers import RETRIEVERS, make_retriever

Progress = Callable[[int], None]


class MemoStore:
    """A Store proxy that memoises ``lexical_search`` and ``vector_search`` results.

    The arms of one comparison repeat the same candidate searches (``hybrid`` fetches exactly
    what ``bm25`` and ``dense`` fetch at the same depth), so sharing one MemoStore between the
    arms returns identical results at a fraction of the cost. Everything else is delegated.
    Only for read-only use during one evaluation: it never sees later writes.
    """

    def __init__(self, store):
        self._store = store
        self._memo: dict = {}

    def lexical_search(self, terms, k, filters=None):
        key = ("lex", tuple(terms), k, filters)
        if key not in self._memo:
            self._memo[key] = self._store.lexical_search(terms, k, filters)
        return list(self._memo[key])

    def vector_search(self, vector, k, filters=None):
        key = ("vec", np.asarray(vector, dtype=np.float32).tobytes(), k, filters)
        if key not in self._memo:
            self._memo[key] = self._store.vector_search(vector, k, filters)
        return list(self._memo[key])

    def __getattr__(self, name):
        return getattr(self._store, name)


def parse_retrievers(spec: str | Sequence[str]) -> list[str]:
    """``"bm25,dense,hybrid"`` -> names in order, unique. ``NAME+rerank`` is NAME reranked by the
    reranker the caller passes on (``--reranker``).

    Raises:
        CitewiseError: empty, or an unknown name (listing the valid ones).
    """
    names = [n.strip() for n in (spec.split(",") if isinstance(spec, str) else spec) if n.strip()]
    if not names:
        raise CitewiseError(f"no retrievers given (valid: {', '.join(RETRIEVERS)})")
    for n in names:
        if n.removesuffix("+rerank") not in RETRIEVERS:
            raise CitewiseError(f"unknown retriever '{n}' (valid: {', '.join(RETRIEVERS)})")
    return list(dict.fromkeys(names))


def _arm(name: str, store, emb, reranker=None, rerank_depth: int | None = None):
    """The retriever of one arm: ``NAME+rerank`` arms get ``reranker``, the others none."""
    if name.endswith("+rerank"):
        return make_retriever(name, store, emb, reranker=reranker, rerank_depth=rerank_depth)
    return make_retriever(name, store, emb)


def golden_runs(
    idx,
    golden: GoldenSet,
    retrievers: Sequence[str],
    depth: int = 100,
    progress: Progress | None = None,
    reranker=None,
    rerank_depth: int | None = None,
) -> dict:
    """``{retriever: {qid: [(id, score), ...]}}`` for every golden query (anonymous principal).

    Query embeddings are computed once, in one batch, and shared by the arms.
    """
    emb = PrecomputedEmbedder(idx.embedder, [q.text for q in golden.queries])
    store = MemoStore(idx.store)
    return {
        name: run_golden(_arm(name, store, emb, reranker, rerank_depth), golden, depth, progress=progress)
        for name in retrievers
    }


def compare_golden(
    idx,
    golden_path: str | Path,
    retrievers: Sequence[str],
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    depth: int = 100,
    permutations: int = PERMUTATIONS,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
    progress: Progress | None = None,
    reranker=None,
    rerank_depth: int | None = None,
) -> Comparison:
    """Load (and validate against ``idx``) a golden set, run the retrievers, compare per slice.

    ``reranker`` (spec or object) reranks the ``NAME+rerank`` arms.

    Raises:
        InputError: a bad golden set (file and line); CitewiseError: an empty arm or bad option.
    """
    golden = load_golden(golden_path, idx.store)
    t0 = time.perf_counter()
    runs = golden_runs(idx, golden, retrievers, depth, progress, reranker, rerank_depth)
    t1 = time.perf_counter()
    c = compare(
        golden.qrels,
        runs,
        slices=golden.slices,
        metrics=metrics,
        name=Path(golden_path).name,
        permutations=permutations,
        resamples=resamples,
        seed=seed,
    )
    c.info.update(
        {
            "source": str(golden_path),
            "index": str(idx.path),
            "embedder": idx.embedder.name,
            "query_seconds": round(t1 - t0, 3),
            "compare_seconds": round(time.perf_counter() - t1, 3),
        }
    )
    return c


def compare_beir(
    idx,
    ds: BeirDataset,
    retrievers: Sequence[str],
    *,
    split: str = "test",
    metrics: Sequence[str] = DEFAULT_METRICS,
    depth: int = 100,
    permutations: int = PERMUTATIONS,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
    progress: Progress | None = None,
    reranker=None,
    rerank_depth: int | None = None,
) -> Comparison:
    """Run the retrievers over a BEIR split on an index that already holds its corpus; compare.

    ``reranker`` (spec or object) reranks the ``NAME+rerank`` arms.

    One slice, ``all``. Query embeddings are computed once and shared by the arms.

    Raises:
        CitewiseError: qrels queries without text, an empty arm, or a bad option.
    """
    qrels, queries = ds.load_split(split)
    t0 = time.perf_counter()
    emb = PrecomputedEmbedder(idx.embedder, [queries[q] for q in sorted(queries)])
    store = MemoStore(idx.store)
    runs = {
        name: run_queries(_arm(name, store, emb, reranker, rerank_depth), queries, depth=depth, progress=progress)
        for name in retrievers
    }
    t1 = time.perf_counter()
    c = compare(
        qrels,
        runs,
        metrics=metrics,
        name=f"{ds.name} {split}",
        permutations=permutations,
        resamples=resamples,
        seed=seed,
    )
    c.info.update(
        {
            "source": str(ds.root),
            "split": split,
            "index": str(idx.path),
            "embedder": idx.embedder.name,
            "query_seconds": round(t1 - t0, 3),
            "compare_seconds": round(time.perf_counter() - t1, 3),
        }
    )
    return c


def run_gate(
    idx,
    floors: Floors,
    golden_path: str | Path,
    retriever: str = "shipped",
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
    progress: Progress | None = None,
) -> tuple[Comparison, list[Breach]]:
    """Evaluate one retriever on the golden set and check it against ``floors``.

    The metrics evaluated are ``metrics`` plus every metric the floors name.

    Returns:
        (the one-arm comparison, every breached floor; empty = the gate passes).
    """
    wanted = parse_metrics(list(metrics) + floors.metrics)
    c = compare_golden(
        idx, golden_path, [retriever], metrics=wanted, permutations=1, resamples=resamples, seed=seed, progress=progress
    )
    return c, check(c.means[retriever], floors)
