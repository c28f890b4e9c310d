"""Retrieval at scale: synthetic N-chunk indexes, p50/p95 per retriever with and without a 1% filter.

Run (bm25s comes with the bench extra: pip install -e '.[bench]'):

    python bench/scale.py --chunks 10000 100000 [--queries 200] [--json scale.json] [--keep DIR]

For each size N, in this one process and its children, on the same corpus and queries:

* corpus: N one-chunk documents (deterministic, seed 12): 60-140 words drawn from a Zipf(1.1)
  distribution over 30,000 pronounceable pseudo-words, plus a title of 3 words; every 100th
  document (1%) is readable by group ``restricted`` only, the rest are public.
* build: ``Ingestor.ingest_documents`` with the hashing embedder (dim 256), batches of 256
  documents, FTS and scalar index upkeep and compaction included. Build seconds, chunks/s,
  index size on disk right after the build (bytes of every file under the index folder, so
  files of replaced versions not yet cleaned up count), the table's fragment count, and the
  seconds to re-ingest one changed document into the built index (commit and index upkeep).
* queries: 4-word queries drawn from the same distribution (seeded). A fresh child process
  opens the index (as ``citewise search`` would), runs each retriever once per query as
  ``public`` (anonymous principal: 99% of chunks visible) and as ``1% filter``
  (``Filters(groups=("restricted",))`` for a principal in ``restricted``: 1% visible), k=10.
  Per-query latency p50/p95 in ms (query embedding included for dense/hybrid), how many
  queries returned a full top-10, and the child's peak RSS (``ru_maxrss``) after all queries.
* dense, ANN vs exact (same child, same queries, query vectors embedded beforehand, so only
  ``LanceStore.vector_search`` is timed): ``as built`` (the store's own choice: the IVF_FLAT
  index from ``ANN_MIN_ROWS`` chunks, exact for a filter leaving < ``ANN_EXACT_BELOW_VISIBLE``
  rows; IVF partitions probed per ``citewise.store.lance.ann_nprobes_for``), ``ANN forced``
  (the index even under the 1% filter) and ``exact``
  (``bypass_vector_index``, the ground truth), each public (``Filters(groups=("public",))``) and
  with the 1% filter. Recall@10 = |ANN top-10 ∩ exact top-10| / 10, averaged over the queries.
* peer: bm25s (``bm25s.BM25``, default k1=1.2, b=0.75, Lucene IDF) indexed on exactly the
  tokens citewise indexes (our analyzer's ``lexical`` column), queried one query at a time with
  the same analyzed tokens; unfiltered, and with the 1% filter as a ``weight_mask`` (score-0
  hits dropped). q/s = queries / total seconds; the ratio citewise/bm25s is printed.

Writes one JSON (``--json``, default ``bench/scale.json``) and prints a table. Figures are
measurements of this machine; nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SEED = 12
VOCAB = 30_000
RESTRICTED_EVERY = 100
K = 10
RETRIEVERS = ("bm25", "dense", "hybrid")
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def vocabulary(n: int = VOCAB, seed: int = SEED) -> list[str]:
    """``n`` distinct pseudo-words of 2-4 syllables (deterministic)."""
    rng = np.random.default_rng(seed)
    out, seen = [], set()
    while len(out) < n:
        w = "".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), rng.integers(2, 5)))
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


def zipf_words(rng, words: list[str], n: int) -> list[str]:
    ranks = rng.zipf(1.1, n)
    ranks = np.where(ranks > len(words), rng.integers(1, len(words) + 1, n), ranks)
    return [words[r - 1] for r in ranks]


def corpus(n_chunks: int):
    """``n_chunks`` one-chunk :class:`citewise.core.Document` objects (see module docstring)."""
    from citewise.core import Document

    words = vocabulary()
    rng = np.random.default_rng(SEED + n_chunks)
    docs = []
    for i in range(n_chunks):
        body = " ".join(zipf_words(rng, words, int(rng.integers(60, 141))))
        title = " ".join(zipf_words(rng, words, 3)).title()
        groups = ("restricted",) if i % RESTRICTED_EVERY == 0 else ("public",)
        docs.append(Document(f"doc{i:07d}", title, body, f"synthetic/{i}", "text", f"h{i}", groups=groups))
    return docs


def queries(n: int) -> list[str]:
    words = vocabulary()
    rng = np.random.default_rng(SEED - 1)
    return [" ".join(zipf_words(rng, words[:5000], 4)) for _ in range(n)]


def disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def pct(xs: list[float], p: float) -> float:
    return float(np.percentile(xs, p)) * 1e3


def time_retrievers(idx, qs: list[str]) -> list[dict]:
    """Every retriever x {public, 1% filter}: p50/p95 ms, q/s and how many queries got a full
    top-K (one warm-up query first)."""
    from citewise.core import Filters, Principal

    conds = {"public": (None, None), "1% filter": (Principal("r", ("restricted",)), Filters(groups=("restricted",)))}
    rows = []
    for name in RETRIEVERS:
        r = idx.retriever(name)
        for cond, (principal, filters) in conds.items():
            r.search("warm up " + qs[0], K, principal=principal, filters=filters)
            lat, full = [], 0
            for q in qs:
                t = time.perf_counter()
                hits = r.search(q, K, principal=principal, filters=filters)
                lat.append(time.perf_counter() - t)
                full += len(hits) == K
            rows.append(
                {
                    "retriever": name,
                    "condition": cond,
                    "p50_ms": pct(lat, 50),
                    "p95_ms": pct(lat, 95),
                    "queries_per_s": len(qs) / sum(lat),
                    "full_top_k": full,
                    "queries": len(qs),
                }
            )
    return rows


def query_child(index: str, n_queries: int) -> dict:
    """Runs in a fresh process: open the index, time every retriever x filter (see docstring)."""
    from citewise.index import Index

    t0 = time.perf_counter()
    idx = Index.open(index)
    open_s = time.perf_counter() - t0
    qs = queries(n_queries)
    out = {"open_s": open_s, "rows": time_retrievers(idx, qs)}
    out["dense_paths"] = dense_paths(idx, qs)
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def dense_paths(idx, qs: list[str]) -> list[dict]:
    """``vector_search`` as built / ANN forced / exact, public and 1%: p50/p95 ms and recall@10."""
    from citewise.core import Filters

    store = idx.store
    vecs = idx.embedder.embed(qs)
    conds = {"public": Filters(groups=("public",)), "1% filter": Filters(groups=("restricted",))}
    saved = (store.ann_min_rows, store.ann_exact_below)
    paths = {"exact": (float("inf"), saved[1]), "as built": saved, "ANN forced": (saved[0], 0)}
    rows, truth = [], {}
    for path, (min_rows, exact_below) in paths.items():
        store.ann_min_rows, store.ann_exact_below = min_rows, exact_below
        for cond, filters in conds.items():
            store.vector_search(vecs[0], K, filters)  # warm up
            lat, full, recall, taken = [], 0, [], set()
            for i, v in enumerate(vecs):
                t = time.perf_counter()
                hits = store.vector_search(v, K, filters)
                lat.append(time.perf_counter() - t)
                taken.add(store.last_vector_path)
                ids = [h.chunk_id for h in hits]
                full += len(ids) == K
                if path == "exact":
                    truth[(cond, i)] = ids
                recall.append(len(set(ids) & set(truth[(cond, i)])) / K)
            rows.append(
                {
                    "path": path,
                    "condition": cond,
                    "taken": "+".join(sorted(taken)),
                    "nprobes": store.last_nprobes if "ann" in taken else 0,
                    "p50_ms": pct(lat, 50),
                    "p95_ms": pct(lat, 95),
                    "recall_at_10": float(np.mean(recall)),
                    "full_top_k": full,
                    "queries": len(vecs),
                }
            )
    store.ann_min_rows, store.ann_exact_below = saved
    return rows


def bm25s_peer(index: str, n_queries: int) -> list[dict]:
    """bm25s on the very tokens citewise indexed, one query at a time; unfiltered and 1%-masked."""
    import bm25s
    from citewise.store.lance import LanceStore
    from citewise.text.analyzer import analyze

    store = LanceStore(Path(index) / "lance", 256)
    tbl = store._scan(["chunk_id", "lexical", "groups"])
    ids = tbl.column("chunk_id").to_pylist()
    tokens = [t.split() for t in tbl.column("lexical").to_pylist()]
    mask = np.array([("restricted" in g) for g in tbl.column("groups").to_pylist()], dtype=np.float32)
    vocab = {}
    corpus_ids = [[vocab.setdefault(w, len(vocab)) for w in doc] for doc in tokens]
    retr = bm25s.BM25()
    t = time.perf_counter()
    retr.index(bm25s.tokenization.Tokenized(ids=corpus_ids, vocab=vocab), show_progress=False)
    build_s = time.perf_counter() - t
    qtok = [[w for w in analyze(q) if w in vocab] for q in queries(n_queries)]
    rows = []
    for cond, wm in (("public", None), ("1% filter", mask)):
        lat, full = [], 0
        for q in qtok:
            t = time.perf_counter()
            scores = retr.get_scores(q, weight_mask=wm)
            top = np.argpartition(-scores, K)[:K]
            top = [ids[i] for i in top[np.argsort(-scores[top], kind="stable")] if scores[i] > 0]
            lat.append(time.perf_counter() - t)
            full += len(top) == K
        rows.append(
            {
                "retriever": "bm25s",
                "condition": cond,
                "p50_ms": pct(lat, 50),
                "p95_ms": pct(lat, 95),
                "queries_per_s": len(qtok) / sum(lat),
                "full_top_k": full,
                "queries": len(qtok),
                "build_s": build_s,
            }
        )
    return rows


def build(index: Path, n: int) -> dict:
    from citewise.index import Index

    docs = corpus(n)
    idx = Index.open(index, embedder="hashing")
    t = time.perf_counter()
    idx.ingestor(units=False).ingest_documents(docs)
    build_s = time.perf_counter() - t
    lance_dir = index / "lance" / "chunks.lance"
    out = {
        "chunks": idx.store.stats()["chunks"],
        "build_s": build_s,
        "chunks_per_s": n / build_s,
        "disk_mb": disk_bytes(index) / 2**20,
        "fragments": int(idx.store._table.stats()["fragment_stats"]["num_fragments"]),
        "ann_index": idx.store.has_ann_index(),
        "versions": len(list((lance_dir / "_versions").glob("*.manifest"))),
    }
    # one changed document re-ingested into the built index (commit + index upkeep + compaction)
    changed = dataclasses.replace(docs[1], text=docs[1].text + " changed", content_hash="changed")
    t = time.perf_counter()
    idx.ingestor(units=False).ingest_documents([changed])
    out["reingest_one_doc_s"] = time.perf_counter() - t
    return out


def run_size(n: int, n_queries: int, keep: Path | None) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix=f"citewise-scale-{n}-"))
    index = (keep / f"scale-{n}") if keep else tmp / "index"
    try:
        if keep and index.exists():
            shutil.rmtree(index)
        res = {"n": n, "build": build(index, n)}
        child = subprocess.run(
            [sys.executable, __file__, "--_query-child", str(index), "--queries", str(n_queries)],
            capture_output=True,
            text=True,
        )
        if child.returncode:
            raise RuntimeError(f"query child failed:\n{child.stderr[-3000:]}")
        res["citewise"] = json.loads(child.stdout.strip().splitlines()[-1])
        res["bm25s"] = bm25s_peer(str(index), n_queries)
        cw = {r["condition"]: r["queries_per_s"] for r in res["citewise"]["rows"] if r["retriever"] == "bm25"}
        peer = {r["condition"]: r["queries_per_s"] for r in res["bm25s"]}
        res["bm25_ratio_vs_bm25s"] = {c: cw[c] / peer[c] for c in cw}
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


#: Perturbation of the enlarged MiniLM sets (``--minilm-base``): each copy of a real vector gets
#: Gaussian noise of this standard deviation per component before renormalisation (cosine to its
#: original ~1 / sqrt(1 + 384 * 0.025**2) = 0.90), so copies of one text stay near each other
#: without being duplicates.
PERTURB_SIGMA = 0.025


class _FixedVectors:
    """An embedder serving precomputed vectors: the text ``vec<i>`` gets row ``i``; any other
    text (a query) is looked up in ``queries``."""

    def __init__(self, vectors: np.ndarray, queries: dict[str, np.ndarray] | None = None):
        import re

        self.vectors, self.queries, self.dim, self.name = vectors, queries or {}, vectors.shape[1], "fixed-minilm"
        self._re = re.compile(r"vec(\d+)")

    def embed(self, texts):
        out = []
        for t in texts:
            m = self._re.search(t)
            out.append(self.vectors[int(m.group(1))] if m else self.queries[t])
        return np.asarray(out, dtype=np.float32).reshape(-1, self.dim)


def probe_sweep(store, embedder, qs: list[str], probes: list[int]) -> list[dict]:
    """Recall@10 against the exact top-10 and p50/p95 ms of the ANN path (forced, no filter) at
    each ``probes`` count: how many IVF partitions a set needs for a recall target."""
    from citewise.core import Filters

    pub = Filters(groups=("public",))
    vecs = embedder.embed(qs)
    saved = (store.ann_min_rows, store.ann_exact_below, store.ann_nprobes)
    store.ann_min_rows = float("inf")
    truth = [[h.chunk_id for h in store.vector_search(v, K, pub)] for v in vecs]
    rows = []
    store.ann_min_rows, store.ann_exact_below = saved[0], 0
    for nprobes in probes:
        store.ann_nprobes = nprobes
        store.vector_search(vecs[0], K, pub)  # warm up
        lat, recall = [], []
        for v, t in zip(vecs, truth):
            a = time.perf_counter()
            ids = [h.chunk_id for h in store.vector_search(v, K, pub)]
            lat.append(time.perf_counter() - a)
            recall.append(len(set(ids) & set(t)) / K)
        rows.append(
            {"nprobes": nprobes, "recall_at_10": float(np.mean(recall)), "p50_ms": pct(lat, 50), "p95_ms": pct(lat, 95)}
        )
    store.ann_min_rows, store.ann_exact_below, store.ann_nprobes = saved
    return rows


def minilm_sets(bases: list[Path], n: int, n_queries: int, keep: Path | None, probes: list[int] = ()) -> dict:
    """Dense ANN vs exact on ``n`` MiniLM vectors of real corpora (``--minilm-base``).

    The base vectors are every chunk vector of the given MiniLM indexes (e.g. the ones
    ``citewise eval beir`` builds for SciFact and NFCorpus). Rows ``0..len(base)-1`` are the
    real vectors; the rest are copies of base row ``i % len(base)`` with Gaussian noise
    (:data:`PERTURB_SIGMA`, seed :data:`SEED`) renormalised. Every 100th row is readable by
    ``restricted`` only (1%). Queries: the first ``n_queries`` test queries of each base's BEIR
    dataset, embedded with MiniLM (real query vectors). Rows: :func:`dense_paths`.
    """
    from types import SimpleNamespace

    from citewise.core import Document
    from citewise.evaluation.beir import BeirDataset
    from citewise.ingest import Ingestor
    from citewise.models.embedders import MiniLMEmbedder
    from citewise.store.lance import LanceStore

    data = Path(__file__).resolve().parents[2] / "shared" / "data"
    base_vecs, qs = [], []
    for b in bases:
        st = LanceStore(b / "lance", 384)
        tbl = st._scan(["vector"])
        base_vecs.append(tbl.column("vector").combine_chunks().flatten().to_numpy().reshape(-1, 384))
        name = b.name.removesuffix("-minilm")
        folder = data / name if (data / name).is_dir() else data / f"beir-{name}"
        _, queries = BeirDataset(folder).load_split("test")
        qs += [queries[q] for q in sorted(queries)][:n_queries]
    base = np.concatenate(base_vecs).astype(np.float32)
    rng = np.random.default_rng(SEED)
    vecs = np.empty((n, base.shape[1]), dtype=np.float32)
    vecs[: min(n, len(base))] = base[: min(n, len(base))]
    for s in range(len(base), n, 10_000):
        e = min(n, s + 10_000)
        v = base[np.arange(s, e) % len(base)] + rng.normal(0, PERTURB_SIGMA, (e - s, base.shape[1])).astype(np.float32)
        vecs[s:e] = v / np.linalg.norm(v, axis=1, keepdims=True)
    qvecs = MiniLMEmbedder().embed(qs)
    emb = _FixedVectors(vecs, dict(zip(qs, qvecs)))
    tmp = Path(tempfile.mkdtemp(prefix=f"citewise-minilm-{n}-"))
    index = (keep / f"minilm-{n}") if keep else tmp / "index"
    try:
        if index.exists():
            shutil.rmtree(index)
        store = LanceStore(index / "lance", base.shape[1])
        docs = [
            Document(
                f"doc{i:07d}",
                f"vec{i}",
                f"vec{i}",
                f"synthetic/{i}",
                "text",
                f"h{i}",
                groups=("restricted",) if i % RESTRICTED_EVERY == 0 else ("public",),
            )
            for i in range(n)
        ]
        t = time.perf_counter()
        Ingestor(store, emb, units=None, keep_duplicates=True).ingest_documents(docs)
        build_s = time.perf_counter() - t
        rows = dense_paths(SimpleNamespace(store=store, embedder=emb), qs)
        sweep = probe_sweep(store, emb, qs, list(probes)) if probes and store.has_ann_index() else []
        return {
            "n": n,
            "base_vectors": len(base),
            "bases": [b.name for b in bases],
            "queries": len(qs),
            "sigma": PERTURB_SIGMA,
            "build_s": build_s,
            "ann_index": store.has_ann_index(),
            "nprobes": max((r["nprobes"] for r in rows), default=0),
            "rows": rows,
            "probe_sweep": sweep,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def print_minilm(res: dict) -> None:
    print(
        f"MiniLM vectors of {', '.join(res['bases'])} ({res['base_vectors']:,} real) enlarged to {res['n']:,} "
        f"(sigma {res['sigma']}), {res['queries']} real query vectors, nprobes {res['nprobes']}:"
    )
    print("| dense path | condition | taken | p50 ms | p95 ms | recall@10 vs exact | full top-10 |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in res["rows"]:
        print(
            f"| {r['path']} | {r['condition']} | {r['taken']} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} | "
            f"{r['recall_at_10']:.3f} | {r['full_top_k']}/{r['queries']} |"
        )
    if res.get("probe_sweep"):
        print("\n| IVF probes (ANN forced, public) | p50 ms | p95 ms | recall@10 vs exact |")
        print("|---:|---:|---:|---:|")
        for r in res["probe_sweep"]:
            print(f"| {r['nprobes']} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} | {r['recall_at_10']:.3f} |")


def print_table(results: list[dict]) -> None:
    print("| chunks | system | condition | p50 ms | p95 ms | q/s | full top-10 |")
    print("|---:|---|---|---:|---:|---:|---:|")
    for res in results:
        for r in res["citewise"]["rows"] + res["bm25s"]:
            sysname = r["retriever"] if r["retriever"] == "bm25s" else f"citewise {r['retriever']}"
            print(
                f"| {res['n']:,} | {sysname} | {r['condition']} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} | "
                f"{r['queries_per_s']:,.0f} | {r['full_top_k']}/{r['queries']} |"
            )
    print()
    print(
        "| chunks | build s | chunks/s | disk MB | fragments | re-ingest 1 doc s | query RSS MB | open s | BM25 q/s ÷ bm25s (public / 1%) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for res in results:
        b, c, ratio = res["build"], res["citewise"], res["bm25_ratio_vs_bm25s"]
        print(
            f"| {res['n']:,} | {b['build_s']:.1f} | {b['chunks_per_s']:,.0f} | {b['disk_mb']:.1f} | {b['fragments']} | "
            f"{b['reingest_one_doc_s']:.2f} | "
            f"{c['rss_mb']:.0f} | {c['open_s']:.2f} | {ratio['public']:.3f}× / {ratio['1% filter']:.3f}× |"
        )


def print_dense(results: list[dict]) -> None:
    print("| chunks | dense path | condition | taken | nprobes | p50 ms | p95 ms | recall@10 vs exact | full top-10 |")
    print("|---:|---|---|---|---:|---:|---:|---:|---:|")
    for res in results:
        for r in res["citewise"]["dense_paths"]:
            print(
                f"| {res['n']:,} | {r['path']} | {r['condition']} | {r['taken']} | {r.get('nprobes', 0)} | "
                f"{r['p50_ms']:.2f} | "
                f"{r['p95_ms']:.2f} | {r['recall_at_10']:.3f} | {r['full_top_k']}/{r['queries']} |"
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, nargs="+", default=[10_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--json", default=str(Path(__file__).with_name("scale.json")))
    ap.add_argument("--keep", default=None, help="keep the built indexes under this folder")
    ap.add_argument(
        "--minilm-base",
        nargs="*",
        default=None,
        help="MiniLM BEIR index folders (citewise eval beir): only the dense ANN recall run on their "
        "vectors enlarged to each --chunks size",
    )
    ap.add_argument(
        "--probes",
        type=int,
        nargs="*",
        default=[],
        help="with --minilm-base: also sweep the ANN path over these IVF probe counts (public)",
    )
    ap.add_argument("--_query-child", dest="query_child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.minilm_base:
        keep = Path(args.keep) if args.keep else None
        res = [
            minilm_sets([Path(b) for b in args.minilm_base], n, args.queries, keep, args.probes) for n in args.chunks
        ]
        Path(args.json).write_text(json.dumps({"minilm": res}, indent=2))
        for r in res:
            print_minilm(r)
        return 0
    if args.query_child:
        print(json.dumps(query_child(args.query_child, args.queries)))
        return 0
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    results = []
    for n in args.chunks:
        results.append(run_size(n, args.queries, keep))
        print(f"[{n:,} chunks done]", file=sys.stderr, flush=True)
    import lancedb

    meta = {
        "machine_cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "lancedb": lancedb.__version__,
        "k": K,
        "seed": SEED,
    }
    Path(args.json).write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    print_table(results)
    print()
    print_dense(results)
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
