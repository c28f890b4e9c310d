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
* ``one pass (units-mean)``: every answer unit once; a chunk's vector is the mean of its units'
  (also the ingest of "units-mean + best unit": re-scoring by best unit happens at query time,
  ``bench/chunk_vectors_sample.py``).

``--rounds`` repeats the three in a rotating order; the fastest round of each counts.

Then the embedding calls alone, on the same chunks (CPU seconds of ``embed``): ``chunk texts``
(windowed: MiniLM reads the first 256 word pieces), ``window pieces`` (each chunk's indexed text
cut at word boundaries into pieces of at most the model's window in word pieces, every piece
embedded: a chunk-only pass that reads the whole chunk) and ``answer units`` (the one pass),
with the one pass's ratio to each of the two chunk-only peers.
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


def embedding_only(corpus: Path, spec: str) -> dict[str, tuple[float, int]]:
    """CPU seconds and texts of the three embedding passes over ``corpus``'s chunks."""
    from citewise.answer.units import ANSWER_UNITS
    from citewise.core import Document
    from citewise.models.embedders import make_embedder
    from citewise.text.chunker import Chunker
    from citewise.text.loaders import load_folder

    emb = make_embedder(spec)
    chunks = [
        (d.title, c)
        for d in load_folder(corpus)
        if isinstance(d, Document)
        for c in Chunker().chunk(d.doc_id, d.title, d.text)
    ]
    window = getattr(emb, "window", None) or 512
    tok = getattr(emb, "_tokenizer", None)
    pieces = []
    for _, c in chunks:
        cur, n = [], 2  # [CLS] and [SEP]
        for w in c.indexed_text.split():
            k = len(tok.encode(w, add_special_tokens=False).ids) if tok is not None else 1
            if cur and n + k > window:
                pieces.append(" ".join(cur))
                cur, n = [], 2
            cur.append(w)
            n += k
        if cur:
            pieces.append(" ".join(cur))
    units = [t for title, c in chunks for _, _, t in ANSWER_UNITS.embedding_units(title, c.text)]
    out = {}
    for name, texts in (
        ("chunk texts (windowed)", [c.indexed_text for _, c in chunks]),
        ("window pieces (whole chunk)", pieces),
        ("answer units (one pass)", units),
    ):
        emb.embed(texts[:4])
        t0 = time.process_time()
        emb.embed(texts)
        out[name] = (time.process_time() - t0, len(texts))
    return out


def main() -> None:
    from citewise.demo import sample_dir

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=sample_dir() / "corpus")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = [
        ("chunk-only pass", "chunk", False),
        ("two passes (before)", "chunk", True),
        ("one pass (units-mean)", "units-mean", True),
    ]
    best: dict[str, tuple[float, int, int]] = {}
    for r in range(a.rounds):
        for name, mode, units in rows[r % 3 :] + rows[: r % 3]:
            got = ingest(a.corpus, a.embedder, mode, units)
            if name not in best or got[0] < best[name][0]:
                best[name] = got
    base = best["chunk-only pass"][0]
    emb_only = embedding_only(a.corpus, a.embedder)
    result = {
        "corpus": str(a.corpus),
        "embedder": a.embedder,
        "load": round(os.getloadavg()[0], 1),
        "rows": {
            n: {"cpu_s": round(c, 2), "x chunk-only": round(c / base, 2), "chunks": ch, "units": u}
            for n, (c, ch, u) in best.items()
        },
        "embedding_only": {n: {"cpu_s": round(c, 2), "texts": k} for n, (c, k) in emb_only.items()},
    }
    one = emb_only["answer units (one pass)"][0]
    result["one pass x peer"] = {
        "chunk texts (first window)": round(one / emb_only["chunk texts (windowed)"][0], 2),
        "window pieces (whole chunk)": round(one / emb_only["window pieces (whole chunk)"][0], 2),
    }
    if a.json:
        print(json.dumps(result))
        return
    print(f"{a.corpus} · {a.embedder} · load {result['load']}")
    for n, m in result["rows"].items():
        print(
            f"  {n:24s} CPU {m['cpu_s']:7.2f} s  x{m['x chunk-only']:.2f} chunk-only  "
            f"({m['chunks']} chunks, {m['units']} units embedded)"
        )
    print("  embedding calls alone:")
    for n, m in result["embedding_only"].items():
        print(f"    {n:30s} CPU {m['cpu_s']:7.2f} s  ({m['texts']} texts)")
    for n, x in result["one pass x peer"].items():
        print(f"  one pass / chunk-only pass over {n}: x{x:.2f}")


if __name__ == "__main__":
    main()
