"""Real-path ingest throughput with the hashing embedder, next to same-run peers (issue 12).

Run::

    python bench/ingest_speed.py [--docs N] [--repeats 3] [--units] [--json out.json]
    python bench/ingest_speed.py --digest [--docs N]   # fingerprint of what an ingest writes

Corpus: BEIR SciFact (``../shared/data/beir-scifact/corpus.jsonl``; all 5,183 documents unless
``--docs``). Each repeat, in this one process, one after the other:

* **citewise**: ``Index.open(fresh, embedder="hashing").ingestor(units=False).ingest_documents(docs)``
  — the real path: chunker, analyzer, hashing embedder, LanceDB ``merge_insert`` commits of 256
  documents (per-document atomic replace), then compaction, FTS/scalar index upkeep and the
  BM25 postings. ``--units`` adds a second row with answer units (the ``citewise ingest`` default).
* **peer lancedb**: the very rows the citewise run wrote (read back from its table beforehand,
  outside the timing) written into a fresh LanceDB table by a bare loop: ``create_table`` with the
  first batch, ``Table.add`` for the others (batches of the same row counts), then one
  ``optimize()``. No chunking, analysis, embedding or replace semantics: the storage floor.
* **peer bm25s**: ``bm25s.tokenize`` (its own English tokenizer with stop words) + ``BM25.index``
  on the same chunk texts (``indexed_text``): a lexical-only indexer for scale.

chunks/s = chunks written / wall seconds; CPU s is process CPU time (all threads), less disturbed
by other people's jobs than wall time. The fastest repeat of each row is printed, with the
1-minute load average sampled at the start of that run. Nothing here is a pass/fail test.

``--digest`` prints a SHA-256 over everything the ingest stored (every column of every row but
``indexed_at``, rows in chunk-id order, vectors as float32 bytes) and over the BM25 and hybrid
top-10 (ids and scores, ``repr`` of the floats) of the first 100 SciFact test queries, so two
versions of the code can be compared with ``PYTHONPATH=... python bench/ingest_speed.py --digest``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir-scifact"


def load_docs(n: int | None):
    from citewise.text.loaders import load_beir_corpus

    docs = list(load_beir_corpus(DATA / "corpus.jsonl"))
    return docs[:n] if n else docs


def citewise_ingest(docs, folder: Path, units: bool) -> dict:
    from citewise.index import Index

    idx = Index.open(folder, embedder="hashing")
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    rep = idx.ingestor(units=units).ingest_documents(docs)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return {"chunks": rep.chunks_embedded, "wall_s": wall, "cpu_s": cpu, "load": load, "idx": idx}


def lancedb_peer(table_rows, batch_sizes: list[int], folder: Path) -> dict:
    import lancedb

    db = lancedb.connect(folder)
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    tbl, off = None, 0
    for n in batch_sizes:
        part = table_rows.slice(off, n)
        off += n
        if tbl is None:
            tbl = db.create_table("chunks", data=part)
        else:
            tbl.add(part)
    tbl.optimize()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return {"chunks": table_rows.num_rows, "wall_s": wall, "cpu_s": cpu, "load": load}


def bm25s_peer(texts: list[str]) -> dict:
    import bm25s

    load = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    toks = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    bm25s.BM25().index(toks, show_progress=False)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return {"chunks": len(texts), "wall_s": wall, "cpu_s": cpu, "load": load}


def digest(docs) -> dict:
    """SHA-256 of the stored rows and of BM25/hybrid top-10s (see module docstring)."""
    from citewise.evaluation.beir import BeirDataset

    tmp = Path(tempfile.mkdtemp(prefix="citewise-digest-"))
    try:
        r = citewise_ingest(docs, tmp / "index", units=False)
        idx = r["idx"]
        tbl = idx.store._scan_table(idx.store._table, None).sort_by("chunk_id")
        rows = hashlib.sha256()
        for name in tbl.schema.names:
            if name == "indexed_at":
                continue
            col = tbl.column(name)
            if name == "vector":
                rows.update(np.asarray(col.combine_chunks().flatten(), dtype=np.float32).tobytes())
            else:
                rows.update(name.encode() + json.dumps(col.to_pylist(), sort_keys=True).encode())
        _, queries = BeirDataset(DATA).load_split("test")
        qs = [queries[q] for q in sorted(queries)][:100]
        out = {"chunks": tbl.num_rows, "rows_sha256": rows.hexdigest()}
        for name in ("bm25", "hybrid"):
            h = hashlib.sha256()
            ret = idx.retriever(name)
            for q in qs:
                h.update(repr([(x.chunk_id, x.score) for x in ret.search(q, 10)]).encode())
            out[f"{name}_top10_sha256"] = h.hexdigest()
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=None, help="first N SciFact documents (default: all)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--units", action="store_true", help="also time an ingest with answer units")
    ap.add_argument("--digest", action="store_true", help="print the fingerprint of an ingest and exit")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if not (DATA / "corpus.jsonl").is_file():
        print(f"{DATA}/corpus.jsonl not found (BEIR SciFact, see ../shared/data)", file=sys.stderr)
        return 2
    docs = load_docs(args.docs)
    if args.digest:
        print(json.dumps(digest(docs), indent=2))
        return 0
    best: dict[str, dict] = {}

    def keep(name: str, res: dict) -> None:
        res.pop("idx", None)
        if name not in best or res["wall_s"] < best[name]["wall_s"]:
            best[name] = res

    for _ in range(args.repeats):
        tmp = Path(tempfile.mkdtemp(prefix="citewise-ingest-speed-"))
        try:
            r = citewise_ingest(docs, tmp / "index", units=False)
            store = r["idx"].store
            rows = store._scan_table(store._table, None).sort_by("doc_id")
            texts = rows.column("text").to_pylist()
            sizes = [256] * (rows.num_rows // 256) + ([rows.num_rows % 256] if rows.num_rows % 256 else [])
            keep("citewise ingest (hashing, no units)", r)
            if args.units:
                keep("citewise ingest (hashing, answer units)", citewise_ingest(docs, tmp / "index-units", units=True))
            keep("peer: bare LanceDB writes of the same rows + optimize", lancedb_peer(rows, sizes, tmp / "peer"))
            keep("peer: bm25s tokenize + index of the same texts", bm25s_peer(texts))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"SciFact, {len(docs):,} documents, best of {args.repeats} repeats (same process, interleaved); "
          f"{os.cpu_count()} CPUs")
    print("| system | chunks | wall s | CPU s | chunks/s | load avg (1 min) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in best.items():
        print(f"| {name} | {r['chunks']:,} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['chunks'] / r['wall_s']:,.0f} | "
              f"{r['load']:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps(best, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
