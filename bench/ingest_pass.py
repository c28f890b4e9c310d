"""Ingest CPU of the one embedding pass (units-mean) against a chunk-only pass and the old two
passes, same corpus, same run.

Run:

    python bench/ingest_pass.py [--corpus DIR] [--embedder minilm] [--rounds 1] [--json]

Each row ingests ``--corpus`` (default: the bundled sample corpus) into a fresh index with the
given embedder, in this process, and reports the process CPU seconds (all threads) of the ingest
and the texts embedded:

* ``chunk-only pass``: chunk vectors from each chunk's own text, no answer units (what a
  retrieval-only ingest embeds: the peer);
* ``two passes (before)``: chunk texts, and separately every answer unit (``chunk_vectors="chunk"``);
* ``one pass (units-mean)``: every answer unit once; a chunk's vector is the mean of its units'.

``--rounds`` repeats the three in a rotating order; the fastest round of each counts.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from citewise.index import Index


def ingest(corpus: Path, spec: str, mode: str, units: bool) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        idx = Index.open(Path(tmp) / "i", embedder=spec)
        idx.settings.chunk_vectors = mode
        t0 = time.process_time()
        from citewise.answer.units import ANSWER_UNITS
        from citewise.ingest import Ingestor

        ing = Ingestor(idx.store, idx.embedder, units=ANSWER_UNITS if units else None, chunk_vectors=mode)
        report = ing.ingest_folder(corpus)
        return time.process_time() - t0, report.chunks_embedded, report.units_embedded


def main() -> None:
    from citewise.demo import sample_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=sample_dir() / "corpus")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = [("chunk-only pass", "chunk", False), ("two passes (before)", "chunk", True),
            ("one pass (units-mean)", "units-mean", True)]
    best: dict[str, tuple[float, int, int]] = {}
    for r in range(a.rounds):
        for name, mode, units in rows[r % 3:] + rows[:r % 3]:
            got = ingest(a.corpus, a.embedder, mode, units)
            if name not in best or got[0] < best[name][0]:
                best[name] = got
    base = best["chunk-only pass"][0]
    result = {"corpus": str(a.corpus), "embedder": a.embedder, "load": round(os.getloadavg()[0], 1),
              "rows": {n: {"cpu_s": round(c, 2), "x chunk-only": round(c / base, 2), "chunks": ch, "units": u}
                       for n, (c, ch, u) in best.items()}}
    if a.json:
        print(json.dumps(result))
        return
    print(f"{a.corpus} · {a.embedder} · load {result['load']}")
    for n, m in result["rows"].items():
        print(f"  {n:24s} CPU {m['cpu_s']:7.2f} s  x{m['x chunk-only']:.2f} chunk-only  "
              f"({m['chunks']} chunks, {m['units']} units embedded)")


if __name__ == "__main__":
    main()
