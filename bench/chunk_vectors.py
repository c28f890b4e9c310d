"""Chunk vectors that see the whole chunk: dense nDCG@10 and embedding CPU of each way of making
them, on a BEIR set, in one run.

Run (data in ../shared/data; any embedder spec):

    python bench/chunk_vectors.py --data ../shared/data/beir-scifact --embedder minilm [--json]

The corpus is chunked by citewise's chunker and each chunk's answer units are planned as ingest
plans them (:data:`citewise.answer.units.ANSWER_UNITS`). Two embedding passes are timed (process
CPU, all threads) in the same run:

* ``chunk pass``: each chunk's indexed text (heading path + text), embedded once; MiniLM reads
  its first 256 word pieces only;
* ``unit pass``: each chunk's answer units (``title > heading: unit``), embedded once.

Rankings compared (dense only, exact NumPy cosine over every chunk; a document ranks where its
best chunk ranks, as ``citewise eval beir`` does; test queries, embedded as queries):

* ``chunk``: the chunk-pass vector (what ingest stored before, the ``chunk`` mode);
* ``units-mean``: the L2-normalised mean of the chunk's unit vectors (the ``mean`` mode);
* ``units-max``: a chunk scores its best unit's cosine;
* ``units-mean+max``: the mean of those two scores;
* ``chunk+units-mean``: the normalised sum of the chunk vector and the unit mean (needs both
  passes).

Vectors are cached under ``$CITEWISE_CACHE/bench-chunk-vectors/`` per dataset and embedder
(``--fresh`` recomputes and re-times them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from citewise.answer.units import ANSWER_UNITS
from citewise.core import cache_dir
from citewise.evaluation.beir import BeirDataset
from citewise.evaluation.metrics import evaluate
from citewise.models.embedders import make_embedder
from citewise.models.embedding import embed_queries, l2_normalise
from citewise.text.chunker import Chunker


def plan(ds: BeirDataset, keep: set[str] | None = None):
    """(doc ids per chunk, chunk texts, unit texts, unit owner chunk index); only the documents
    in ``keep`` when given."""
    chunker = Chunker()
    docs, chunk_texts, unit_texts, owner = [], [], [], []
    for d in ds.documents():
        if keep is not None and d.doc_id not in keep:
            continue
        for c in chunker.chunk(d.doc_id, d.title, d.text):
            i = len(chunk_texts)
            docs.append(d.doc_id)
            chunk_texts.append(c.indexed_text)
            for _, _, t in ANSWER_UNITS.embedding_units(d.title, c.text):
                unit_texts.append(t)
                owner.append(i)
    return docs, chunk_texts, unit_texts, np.asarray(owner, dtype=np.int64)


def timed_embed(emb, texts):
    t0 = time.process_time()
    vecs = emb.embed(texts)
    return np.asarray(vecs, dtype=np.float32), time.process_time() - t0


def rank(scores: np.ndarray, docs: list[str], depth: int = 100) -> list[str]:
    order = np.argsort(-scores, kind="stable")
    out, seen = [], set()
    for i in order.tolist():
        if docs[i] not in seen:
            seen.add(docs[i])
            out.append(docs[i])
            if len(out) == depth:
                break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data/beir-scifact"))
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--split", default="test")
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--subset", type=int, default=0,
                    help="Only N documents: every document judged for the split's queries, then others drawn "
                         "at random (seed 0) up to N (for slow embedders; compare embedders on the same N).")
    ap.add_argument("--max-queries", type=int, default=0,
                    help="Only the first N queries of the split (by id), and with --subset only their judged documents.")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    ds = BeirDataset(a.data)
    emb = make_embedder(a.embedder)
    qrels, queries = ds.load_split(a.split)
    if a.max_queries:
        kept = sorted(queries)[:a.max_queries]
        qrels = {q: qrels[q] for q in kept}
        queries = {q: queries[q] for q in kept}
    keep = None
    if a.subset:
        judged = sorted({d for q in qrels.values() for d in q})
        rest = sorted({json.loads(line)["_id"] for line in ds.corpus.open()} - set(judged))
        extra = np.random.default_rng(0).permutation(len(rest))[:max(0, a.subset - len(judged))]
        keep = set(judged) | {rest[i] for i in extra.tolist()}
    docs, chunk_texts, unit_texts, owner = plan(ds, keep)
    key = f"{ds.name}-{emb.name}{f'-{a.subset}' if a.subset else ''}{f'-q{a.max_queries}' if a.max_queries else ''}".replace("/", "_")
    cache = cache_dir() / "bench-chunk-vectors" / f"{key}.npz"
    if cache.exists() and not a.fresh:
        z = np.load(cache)
        cv, uv, t_chunk, t_unit = z["cv"], z["uv"], float(z["t_chunk"]), float(z["t_unit"])
    else:
        cv, t_chunk = timed_embed(emb, chunk_texts)
        uv, t_unit = timed_embed(emb, unit_texts)
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(cache, cv=cv, uv=uv, t_chunk=t_chunk, t_unit=t_unit)
    n = len(chunk_texts)
    sums = np.zeros((n, uv.shape[1]), dtype=np.float64)
    np.add.at(sums, owner, uv)
    mean = l2_normalise(sums)
    combo = l2_normalise(cv + mean)
    qids = sorted(queries)
    qv = np.asarray(embed_queries(emb, [queries[q] for q in qids]), dtype=np.float32)
    runs = {name: {} for name in ("chunk", "units-mean", "units-max", "units-mean+max", "chunk+units-mean")}
    for q, v in zip(qids, qv):
        s_chunk, s_mean, s_combo = cv @ v, mean @ v, combo @ v
        s_unit = uv @ v
        s_max = np.full(n, -np.inf, dtype=np.float32)
        np.maximum.at(s_max, owner, s_unit)
        s_max = np.where(np.isfinite(s_max), s_max, s_chunk)  # a chunk without units: its own vector
        for name, s in (("chunk", s_chunk), ("units-mean", s_mean), ("units-max", s_max),
                        ("units-mean+max", (s_mean + s_max) / 2), ("chunk+units-mean", s_combo)):
            runs[name][q] = rank(s, docs)
    result = {"dataset": ds.name + (f" ({len(set(docs))}-document subset)" if a.subset else ""), "embedder": emb.name, "chunks": n, "units": len(unit_texts),
              "docs": len(set(docs)), "queries": len(qids),
              "cpu_s": {"chunk pass": round(t_chunk, 1), "unit pass": round(t_unit, 1),
                        "unit / chunk": round(t_unit / max(t_chunk, 1e-9), 2)},
              "ndcg@10": {name: round(evaluate(qrels, run, ["ndcg@10"]).means["ndcg@10"], 4)
                          for name, run in runs.items()},
              "load": round(os.getloadavg()[0], 1)}
    if a.json:
        print(json.dumps(result))
        return
    print(f"{ds.name} · {emb.name} · {n} chunks, {len(unit_texts)} units, {len(qids)} queries · load {result['load']}")
    print(f"CPU s: chunk pass {t_chunk:.1f}, unit pass {t_unit:.1f} ({result['cpu_s']['unit / chunk']}x)")
    for name, v in result["ndcg@10"].items():
        print(f"  {name:18s} nDCG@10 {v:.4f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
