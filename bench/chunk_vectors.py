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

``--realdocs DIR`` (a corpus ``bench/realdocs/fetch.py`` laid out, e.g.
``~/.cache/citewise/realdocs/rustc``) instead of ``--data``: the corpus is loaded as ``citewise
ingest`` loads it (``print.html`` whole-book copies left out) and the in-scope questions of
``bench/realdocs/questions-*.jsonl`` for that corpus are asked; printed per ranking: doc
recall@5 (an expected document among the top 5 documents) and span recall@5 (one of the top 5
chunks holds an ``expected_answer`` span, whitespace and case folded).

Vectors are cached under ``$CITEWISE_CACHE/bench-chunk-vectors/`` per dataset and embedder
(``--fresh`` recomputes and re-times them; a cache whose row counts differ from the current
chunking is recomputed).
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


def plan_docs(documents):
    """:func:`plan` over loaded documents; also each chunk's plain text (for span checks)."""
    chunker = Chunker()
    docs, chunk_texts, unit_texts, owner, raw = [], [], [], [], []
    for d in documents:
        for c in chunker.chunk(d.doc_id, d.title, d.text):
            i = len(chunk_texts)
            docs.append(d.doc_id)
            chunk_texts.append(c.indexed_text)
            raw.append(" ".join(c.text.split()).lower())
            for _, _, t in ANSWER_UNITS.embedding_units(d.title, c.text):
                unit_texts.append(t)
                owner.append(i)
    return docs, chunk_texts, unit_texts, np.asarray(owner, dtype=np.int64), raw


def realdocs(a, emb) -> dict:
    """Doc and span recall@5 per ranking on one real-docs corpus (see module docstring)."""
    from citewise.core import Document
    from citewise.text.loaders import load_folder

    root = a.realdocs.expanduser()
    name = root.name
    from dataclasses import replace

    # ids as the question sets name them: corpus/relative path without extension
    documents = [
        replace(d, doc_id=f"{name}/{d.doc_id}")
        for d in load_folder(root)
        if isinstance(d, Document) and not d.source.endswith("print.html")
    ]
    docs, chunk_texts, unit_texts, owner, raw = plan_docs(documents)
    here = Path(__file__).parent / "realdocs"
    qs = [
        q
        for f in sorted(here.glob("questions-*.jsonl"))
        for q in map(json.loads, f.read_text().splitlines())
        if q.get("corpus") == name and q.get("kind") == "in_scope"
    ]
    qs = list({q["id"]: q for q in qs}.values())
    key = f"realdocs-{name}-{emb.name}".replace("/", "_")
    cv, uv, t_chunk, t_unit = cached_vectors(key, emb, chunk_texts, unit_texts, a)
    rankings = score_all(cv, uv, owner, np.asarray(embed_queries(emb, [q["text"] for q in qs]), dtype=np.float32))
    out = {}
    for rname, per_q in rankings.items():
        doc_hits = span_hits = 0
        for q, order in zip(qs, per_q):
            top_docs = rank_ids(order, docs, 5)
            doc_hits += any(d in q["expected_docs"] for d in top_docs)
            spans = [" ".join(s.split()).lower() for s in q.get("expected_answer", [])]
            span_hits += any(sp in raw[i] for i in order[:5].tolist() for sp in spans)
        out[rname] = {"doc recall@5": round(doc_hits / len(qs), 3), "span recall@5": round(span_hits / len(qs), 3)}
    return {
        "corpus": name,
        "embedder": emb.name,
        "documents": len(documents),
        "chunks": len(chunk_texts),
        "units": len(unit_texts),
        "questions": len(qs),
        "cpu_s": {"chunk pass": round(t_chunk, 1), "unit pass": round(t_unit, 1)},
        "recall": out,
    }


def cached_vectors(key, emb, chunk_texts, unit_texts, a):
    cache = cache_dir() / "bench-chunk-vectors" / f"{key}.npz"
    if cache.exists() and not a.fresh:
        z = np.load(cache)
        if z["cv"].shape[0] == len(chunk_texts) and z["uv"].shape[0] == len(unit_texts):
            return z["cv"], z["uv"], float(z["t_chunk"]), float(z["t_unit"])
    cv, t_chunk = timed_embed(emb, chunk_texts)
    uv, t_unit = timed_embed(emb, unit_texts)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, cv=cv, uv=uv, t_chunk=t_chunk, t_unit=t_unit)
    return cv, uv, t_chunk, t_unit


def score_all(cv, uv, owner, qv):
    """Per ranking name, per query, the chunk positions best first."""
    n = len(cv)
    sums = np.zeros((n, uv.shape[1]), dtype=np.float64)
    np.add.at(sums, owner, uv)
    mean = l2_normalise(sums)
    out = {"chunk": [], "units-mean": [], "units-max": [], "units-mean, top 50 by max": []}
    for v in qv:
        s_chunk = cv @ v
        s_max = np.full(n, -np.inf, dtype=np.float32)
        np.maximum.at(s_max, owner, uv @ v)
        s_max = np.where(np.isfinite(s_max), s_max, s_chunk)
        s_mean = mean @ v
        for name, s in (("chunk", s_chunk), ("units-mean", s_mean), ("units-max", s_max)):
            out[name].append(np.argsort(-s, kind="stable"))
        top = out["units-mean"][-1]
        head = top[:50][np.argsort(-s_max[top[:50]], kind="stable")]
        out["units-mean, top 50 by max"].append(np.concatenate([head, top[50:]]))
    return out


def rank_ids(order, docs, depth):
    out = []
    for i in order.tolist():
        if docs[i] not in out:
            out.append(docs[i])
            if len(out) == depth:
                break
    return out


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
    ap.add_argument("--realdocs", type=Path, default=None, help="A real-docs corpus folder instead of --data.")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--split", default="test")
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument(
        "--subset",
        type=int,
        default=0,
        help="Only N documents: every document judged for the split's queries, then others drawn "
        "at random (seed 0) up to N (for slow embedders; compare embedders on the same N).",
    )
    ap.add_argument(
        "--max-queries",
        type=int,
        default=0,
        help="Only the first N queries of the split (by id), and with --subset only their judged documents.",
    )
    ap.add_argument(
        "--no-chunk-pass",
        action="store_true",
        help="Skip the chunk pass (slow embedders): only the unit-based rankings are printed.",
    )
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    emb = make_embedder(a.embedder)
    if a.realdocs:
        r = realdocs(a, emb)
        if a.json:
            print(json.dumps(r))
            return
        print(
            f"realdocs {r['corpus']} · {r['embedder']} · {r['documents']} documents, {r['chunks']} chunks, "
            f"{r['units']} units, {r['questions']} in-scope questions; CPU s {r['cpu_s']}"
        )
        for name, m in r["recall"].items():
            print(f"  {name:26s} doc recall@5 {m['doc recall@5']:.3f}  span recall@5 {m['span recall@5']:.3f}")
        return
    ds = BeirDataset(a.data)
    qrels, queries = ds.load_split(a.split)
    if a.max_queries:
        kept = sorted(queries)[: a.max_queries]
        qrels = {q: qrels[q] for q in kept}
        queries = {q: queries[q] for q in kept}
    keep = None
    if a.subset:
        judged = sorted({d for q in qrels.values() for d in q})
        rest = sorted({json.loads(line)["_id"] for line in ds.corpus.open()} - set(judged))
        extra = np.random.default_rng(0).permutation(len(rest))[: max(0, a.subset - len(judged))]
        keep = set(judged) | {rest[i] for i in extra.tolist()}
    docs, chunk_texts, unit_texts, owner = plan(ds, keep)
    key = f"{ds.name}-{emb.name}{f'-{a.subset}' if a.subset else ''}{f'-q{a.max_queries}' if a.max_queries else ''}".replace(
        "/", "_"
    )
    cache = cache_dir() / "bench-chunk-vectors" / f"{key}.npz"
    z = np.load(cache) if cache.exists() and not a.fresh else None
    if z is not None and z["cv"].shape[0] == len(chunk_texts) and z["uv"].shape[0] == len(unit_texts):
        cv, uv, t_chunk, t_unit = z["cv"], z["uv"], float(z["t_chunk"]), float(z["t_unit"])
    else:
        if a.no_chunk_pass:
            cv, t_chunk = np.zeros((len(chunk_texts), emb.dim), np.float32), float("nan")
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
    names = (
        ("units-mean", "units-max", "units-mean+max", "units-mean, top 50 by max")
        if a.no_chunk_pass
        else ("chunk", "units-mean", "units-max", "units-mean+max", "chunk+units-mean", "units-mean, top 50 by max")
    )
    runs = {name: {} for name in names}
    for q, v in zip(qids, qv):
        s_chunk, s_mean, s_combo = cv @ v, mean @ v, combo @ v
        s_unit = uv @ v
        s_max = np.full(n, -np.inf, dtype=np.float32)
        np.maximum.at(s_max, owner, s_unit)
        s_max = np.where(np.isfinite(s_max), s_max, s_chunk)  # a chunk without units: its own vector
        top = np.argsort(-s_mean, kind="stable")[:50]
        s_rescored = s_mean - 10.0  # below every rescored candidate
        s_rescored[top] = s_max[top]
        for name, s in (
            ("chunk", s_chunk),
            ("units-mean", s_mean),
            ("units-max", s_max),
            ("units-mean+max", (s_mean + s_max) / 2),
            ("chunk+units-mean", s_combo),
            ("units-mean, top 50 by max", s_rescored),
        ):
            if name in runs:
                runs[name][q] = rank(s, docs)
    result = {
        "dataset": ds.name + (f" ({len(set(docs))}-document subset)" if a.subset else ""),
        "embedder": emb.name,
        "chunks": n,
        "units": len(unit_texts),
        "docs": len(set(docs)),
        "queries": len(qids),
        "cpu_s": {
            "chunk pass": round(t_chunk, 1),
            "unit pass": round(t_unit, 1),
            "unit / chunk": round(t_unit / t_chunk, 2) if t_chunk == t_chunk else None,
        },
        "ndcg@10": {name: round(evaluate(qrels, run, ["ndcg@10"]).means["ndcg@10"], 4) for name, run in runs.items()},
        "load": round(os.getloadavg()[0], 1),
    }
    if a.json:
        print(json.dumps(result))
        return
    print(f"{ds.name} · {emb.name} · {n} chunks, {len(unit_texts)} units, {len(qids)} queries · load {result['load']}")
    print(
        f"CPU s: chunk pass {t_chunk:.1f}, unit pass {t_unit:.1f} ({result['cpu_s']['unit / chunk']}x)"
        if not a.no_chunk_pass
        else f"CPU s: unit pass {t_unit:.1f} (chunk pass skipped)"
    )
    for name, v in result["ndcg@10"].items():
        print(f"  {name:26s} nDCG@10 {v:.4f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
