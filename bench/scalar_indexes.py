"""What the scalar indexes on the chunk table cost and save, by table size.

Run:

    python bench/scalar_indexes.py [--rows 1000 5000 10000 20000 50000] [--repeat 15]

For each size N, in this one process: N one-chunk documents (seed 12; 40-80 words from a
400-word vocabulary; every 10th readable by ``restricted`` only, every 20th with an older
version kept as history) are ingested with the hashing embedder (dim 64) into two fresh stores
that differ only in ``scalar_min_rows``: ``indexed`` (0: the scalar indexes of
``SCALAR_INDEXES`` are built) and ``scan`` (never built). Reported per store:

* ``upkeep``: CPU seconds (all threads) of the ``refresh_indexes`` that ends the ingest
  (compaction, FTS index, scalar indexes, postings);
* per-query median milliseconds (wall, ``--repeat`` runs, after one warm-up) of the store reads
  that evaluate a predicate on the indexed columns: ``get_chunks`` of 10 chunk ids (every
  search and ask runs it on its top-k), the row mask of a version filter (``version = '1'``, what
  a ``--version`` search computes once per table version; through LanceDB), ``documents()`` of
  one document id, and a one-document re-ingest (merge on ``chunk_id``, delete of the old
  version's rows, index upkeep; CPU seconds).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from citewise.core import Document, Filters
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store.lance import SCALAR_INDEXES, LanceStore, filter_sql

DIM = 64


def corpus(n: int, seed: int = 12) -> list[Document]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(400)]
    docs = []
    for i in range(n):
        body = " ".join(rng.choice(vocab) for _ in range(rng.randint(40, 80)))
        groups = ("restricted",) if i % 10 == 0 else ()
        docs.append(Document(f"d{i:06d}", f"Doc {i}", body, f"s/{i}", "text", f"h{i}", version="2", groups=groups))
        if i % 20 == 5:
            docs.append(
                Document(
                    f"d{i:06d}", f"Doc {i}", body + " old", f"s/{i}-v1", "text", f"o{i}", version="1", groups=groups
                )
            )
    return docs


def _median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def measure(path: Path, docs: list[Document], scalar_min_rows: int, repeat: int) -> dict[str, float]:
    store = LanceStore(path, DIM, scalar_min_rows=scalar_min_rows)
    ing = Ingestor(store, HashingEmbedder(DIM), batch_docs=512, workers=0)
    refresh = ing._refresh
    upkeep = [0.0]

    def timed_refresh() -> None:
        c0 = time.process_time()
        refresh()
        upkeep[0] += time.process_time() - c0

    ing._refresh = timed_refresh
    ing.ingest_documents(docs)
    n_idx = sum(1 for i in store._table.list_indices() if i.columns[0] in SCALAR_INDEXES)
    rng = random.Random(3)
    ids = [c.chunk_id for c in store.get_chunks([]).values()]  # empty: warms nothing
    all_ids = store._scan(["chunk_id"]).column("chunk_id").to_pylist()
    pick = rng.sample(all_ids, 10)
    where = filter_sql(Filters(version="1"))
    one = docs[len(docs) // 2].doc_id
    out = {
        "scalar indexes": float(n_idx),
        "upkeep CPU s": upkeep[0],
        "get_chunks(10) ms": _median_ms(lambda: store.get_chunks(pick), repeat),
        "version mask ms": _median_ms(lambda: store._scan(["chunk_id"], where=where), repeat),
        "documents(1 id) ms": _median_ms(lambda: store.documents([one]), repeat),
    }
    changed = docs[len(docs) // 3]
    new = Document(changed.doc_id, changed.title, changed.text + " changed", changed.source, "text", "x1", version="2")
    c0 = time.process_time()
    Ingestor(store, HashingEmbedder(DIM), workers=0).ingest_documents([new])
    out["re-ingest 1 doc CPU s"] = time.process_time() - c0
    del ids
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[1000, 5000, 10000, 20000, 50000])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    print(
        "| rows | store | scalar indexes | upkeep CPU s | get_chunks(10) ms | version mask ms | documents(1 id) ms | re-ingest 1 doc CPU s |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n in args.rows:
        docs = corpus(n)
        for name, min_rows in (("indexed", 0), ("scan", 10**12)):
            with tempfile.TemporaryDirectory(prefix="cw-scalar-") as tmp:
                r = measure(Path(tmp) / "s", docs, min_rows, args.repeat)
            print(
                f"| {n:,} | {name} | {r['scalar indexes']:.0f} | {r['upkeep CPU s']:.3f} | {r['get_chunks(10) ms']:.2f} "
                f"| {r['version mask ms']:.2f} | {r['documents(1 id) ms']:.2f} | {r['re-ingest 1 doc CPU s']:.3f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
