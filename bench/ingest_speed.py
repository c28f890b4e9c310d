"""Real-path ingest throughput with the hashing embedder, next to same-run peers (issue 12).

Run::

    python bench/ingest_speed.py [--docs N] [--repeats 3] [--units] [--json out.json]
    python bench/ingest_speed.py --digest [--docs N]   # fingerprint of what an ingest writes

Corpus: BEIR SciFact (``../shared/data/beir-scifact/corpus.jsonl``; all 5,183 documents unless
``--docs``). Each repeat runs in a fresh child process (no analyzer/embedder memo carried over;
the o200k vocabulary is loaded before the timing, a per-process cost of ~1 s), and times, one
after the other:

* **citewise**: ``Index.open(fresh, embedder="hashing").ingestor(units=False).ingest_documents(docs)``
  — the real path: chunker, analyzer, hashing embedder (in forked prepare workers, one per CPU,
  while the process writes: ``Ingestor(workers=...)``), one LanceDB commit per 256 documents
  (``Table.add`` when none of them has rows yet, else ``merge_insert``: per-document atomic
  replace), then compaction, FTS/scalar index upkeep and the BM25 postings. ``--units`` adds a second row with answer units (the ``citewise ingest`` default).
  A ``workers=0`` row times the same ingest in one process (the path before the workers).
* **peer lancedb**: the very rows the citewise run wrote (read back from its table beforehand,
  outside the timing) written into a fresh LanceDB table by a bare loop: ``create_table`` with the
  first batch, ``Table.add`` for the others (batches of the same row counts), then one
  ``optimize()``. No chunking, analysis, embedding or replace semantics: the storage floor.
* **peer bm25s**: ``bm25s.tokenize`` (its own English tokenizer with stop words) + ``BM25.index``
  on the same chunk texts (``Chunk.indexed_text``: heading path + text, as citewise analyzes and
  embeds them): a lexical-only indexer for scale.

``--baseline-src DIR`` alternates each repeat with one of the citewise code in ``DIR`` (a child with
``PYTHONPATH=DIR``; e.g. the main branch's ``src``), printed as ``[baseline]`` rows.

chunks/s = chunks written / wall seconds; CPU s is process CPU time (all threads, and the prepare
workers'), less disturbed by other people's jobs than wall time. The fastest repeat of each row is printed, with the
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
import subprocess
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


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def citewise_ingest(docs, folder: Path, units: bool, workers: int | None = None) -> dict:
    """One ingest; CPU s counts this process and its prepare workers (joined at the end)."""
    from citewise.index import Index

    idx = Index.open(folder, embedder="hashing")
    load = os.getloadavg()[0]
    t, c, cc = time.perf_counter(), time.process_time(), _children_cpu()
    kw = {} if workers is None else {"workers": workers}  # a --baseline-src older than the workers
    rep = idx.ingestor(units=units, **kw).ingest_documents(docs)
    wall = time.perf_counter() - t
    cpu = time.process_time() - c + _children_cpu() - cc
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


def one_repeat(docs, units: bool) -> dict:
    """One repeat (in a child process): citewise, then the peers on what citewise wrote."""
    import inspect

    from citewise.ingest import Ingestor
    from citewise.text.tokens import count_tokens

    count_tokens("warm")  # loading the o200k vocabulary (~1 s) is a per-process cost, not per chunk
    out = {}
    tmp = Path(tempfile.mkdtemp(prefix="citewise-ingest-speed-"))
    try:
        r = citewise_ingest(docs, tmp / "index", units=False)
        store = r.pop("idx").store
        rows = store._scan_table(store._table, None).sort_by("doc_id")
        texts = [
            (" > ".join(h for h in hp if h) + "\n" + t) if any(hp) else t
            for hp, t in zip(rows.column("heading_path").to_pylist(), rows.column("text").to_pylist())
        ]
        sizes = [256] * (rows.num_rows // 256) + ([rows.num_rows % 256] if rows.num_rows % 256 else [])
        out["citewise ingest (hashing, no units)"] = r
        if "workers" in inspect.signature(Ingestor).parameters:
            serial = citewise_ingest(docs, tmp / "index-serial", units=False, workers=0)
            serial.pop("idx")
            out["citewise ingest (hashing, no units), workers=0: one process"] = serial
        if units:
            u = citewise_ingest(docs, tmp / "index-units", units=True)
            u.pop("idx")
            out["citewise ingest (hashing, answer units)"] = u
        out["peer: bare LanceDB writes of the same rows + optimize"] = lancedb_peer(rows, sizes, tmp / "peer")
        out["peer: bm25s tokenize + index of the same texts"] = bm25s_peer(texts)
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
    ap.add_argument(
        "--baseline-src",
        default=None,
        help="a citewise src folder (e.g. another worktree's src) timed in alternation with this one",
    )
    ap.add_argument("--_repeat", dest="repeat", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not (DATA / "corpus.jsonl").is_file():
        print(f"{DATA}/corpus.jsonl not found (BEIR SciFact, see ../shared/data)", file=sys.stderr)
        return 2
    docs = load_docs(args.docs)
    if args.repeat:
        print(json.dumps(one_repeat(docs, args.units)))
        return 0
    if args.digest:
        print(json.dumps(digest(docs), indent=2))
        return 0
    best: dict[str, dict] = {}
    sources = [("", None)] + ([(" [baseline]", args.baseline_src)] if args.baseline_src else [])
    for _ in range(args.repeats):  # each repeat in a fresh process: no memo or cache carried over
        for label, src in sources:  # with --baseline-src: this code and the baseline alternate
            cmd = (
                [sys.executable, __file__, "--_repeat"]
                + (["--units"] if args.units else [])
                + (["--docs", str(args.docs)] if args.docs else [])
            )
            env = dict(os.environ, PYTHONPATH=src) if src else None
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if done.returncode:
                print(done.stderr[-3000:], file=sys.stderr)
                return 1
            for name, res in json.loads(done.stdout.strip().splitlines()[-1]).items():
                if label and name.startswith("peer"):
                    continue  # the peers do not depend on citewise's code: timed once per repeat
                name += label
                if name not in best or res["wall_s"] < best[name]["wall_s"]:
                    best[name] = res
    print(
        f"SciFact, {len(docs):,} documents, best of {args.repeats} repeats (each a fresh process, rows interleaved); "
        f"{os.cpu_count()} CPUs"
    )
    print("| system | chunks | wall s | CPU s | chunks/s | load avg (1 min) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in best.items():
        print(
            f"| {name} | {r['chunks']:,} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['chunks'] / r['wall_s']:,.0f} | "
            f"{r['load']:.2f} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(best, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
