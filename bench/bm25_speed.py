"""BM25 throughput on BEIR SciFact: citewise vs bm25s vs rank-bm25, plus hybrid latency.

Run (needs ../shared/data/beir-scifact and the bench extra: pip install -e '.[bench]'):

    python bench/bm25_speed.py [--data ../shared/data/beir-scifact] [--index DIR] [--json]

What is timed, all in this one process on the same queries (SciFact test, 300 queries, k=10):

* citewise bm25 retriever: ``BM25Retriever.search`` per query (analyzer + postings + the
  anonymous principal's permission filter).
* Same tokens (our analyzer's query terms; the chunks' stored ``lexical`` terms, so every
  system scores the same chunks from the same terms): ``LanceStore.lexical_search`` (NumPy
  postings, filter inside), ``LanceStore.fts_search`` (LanceDB's FTS, the path it replaced),
  ``bm25s.BM25(k1=1.2, b=0.75).retrieve`` unfiltered and with a ``weight_mask`` filter. The
  issue 12 target is the first at >= 1.0x the q/s of bm25s unfiltered, with nDCG@10 within 0.002.
* bm25s: ``bm25s.BM25.retrieve`` per query (its own tokenizer with PyStemmer and English stop
  words), and once batched over all queries (its best case).
* rank-bm25: ``BM25Okapi.get_scores`` + top-k per query over the same analyzer's tokens.
* citewise hybrid (hashing embedder + BM25 + RRF, and MiniLM + BM25 + RRF): per-query latency
  p50 / p95, query embedding included.

Each system runs all queries ROUNDS (10) times and the fastest round is reported. nDCG@10 of
each BM25 is printed beside its speed so speed is never bought with quality. Index
build time is not part of the query figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from citewise.evaluation.beir import BeirDataset, read_queries
from citewise.evaluation.metrics import evaluate
from citewise.evaluation.trec import read_qrels
from citewise.index import Index, default_index_dir
from citewise.retrieval.retrievers import effective_filters, make_retriever
from citewise.text.analyzer import analyze


#: Rounds over all queries per system; the fastest round is reported (as ``timeit`` does): the
#: 2 cores are shared, and another process's burst would otherwise decide the ratio.
ROUNDS = 10


def timed(fn, queries, rounds: int = ROUNDS):
    """Run ``fn`` on every query ``rounds`` times; the runs and per-query latencies (s) of the
    fastest round."""
    best = None
    for _ in range(rounds):
        lat, runs = [], {}
        for qid, text in queries.items():
            t = time.perf_counter()
            runs[qid] = fn(text)
            lat.append(time.perf_counter() - t)
        if best is None or sum(lat) < sum(best[1]):
            best = (runs, lat)
    return best


def race(systems: dict, queries, rounds: int = ROUNDS) -> dict:
    """:func:`timed` for several systems, interleaved round by round (so a burst of load on the
    shared cores hits one round of each rather than all rounds of one); name -> (runs, lat)."""
    best: dict = {}
    for _ in range(rounds):
        for name, fn in systems.items():
            runs, lat = timed(fn, queries, rounds=1)
            if name not in best or sum(lat) < sum(best[name][1]):
                best[name] = (runs, lat)
    return best


def row(name, runs, lat, qrels, total=None):
    total = total if total is not None else sum(lat)
    ndcg = evaluate(qrels, runs, ["ndcg@10"]).means["ndcg@10"]
    return {
        "system": name,
        "queries_per_s": len(runs) / total,
        "p50_ms": statistics.median(lat) * 1e3 if lat else None,
        "p95_ms": float(np.percentile(lat, 95)) * 1e3 if lat else None,
        "ndcg@10": ndcg,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "beir-scifact"))
    ap.add_argument(
        "--index", default=None, help="MiniLM index of SciFact (default: the one 'citewise eval beir' builds)"
    )
    ap.add_argument(
        "--no-minilm", action="store_true", help="skip the MiniLM hybrid row (building its index takes minutes)"
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    ds = BeirDataset(Path(args.data))
    ds.check("test")
    qrels = read_qrels(ds.qrels_path("test"))
    queries = {q: t for q, t in sorted(read_queries(ds.root / "queries.jsonl").items()) if q in qrels}
    docs = list(ds.documents())
    k = 10
    rows = []

    # citewise BM25 (hashing-embedder index: BM25 does not use vectors; building it is fast)
    import bm25s

    tmpdir = tempfile.TemporaryDirectory()
    idx = Index.open(Path(tmpdir.name) / "i", embedder="hashing")
    idx.ingestor(units=False).ingest_documents(docs)
    store = idx.store
    bm25 = make_retriever("bm25", idx.store, idx.embedder)
    bm25.search("warm up", k)

    # the same tokens for everyone: our analyzer's query terms and the chunks' indexed terms
    qterms = {qid: analyze(text) for qid, text in queries.items()}
    anon = effective_filters(None, None)  # the anonymous principal's permission filter
    store.lexical_search(["warm"], k, anon)
    lex = store._scan(["doc_id", "lexical"])
    chunk_docs = lex.column("doc_id").to_pylist()
    chunk_tokens = [t.split() for t in lex.column("lexical").to_pylist()]
    same = bm25s.BM25(k1=1.2, b=0.75)  # LanceDB's and our parameters
    same.index(chunk_tokens, show_progress=False)
    mask = np.ones(len(chunk_docs), dtype=bool)

    def same_one(q, mask=None):
        res, _ = same.retrieve([qterms[q]], k=k, show_progress=False, n_threads=1, weight_mask=mask)
        return [chunk_docs[i] for i in res[0]]

    same_one(next(iter(queries)))
    text = {q: q for q in queries}  # these systems take the query id and look its terms up
    systems = {
        "citewise bm25 retriever (analyzer+filter)": (lambda q: [h.doc_id for h in bm25.search(queries[q], k)]),
        "citewise postings, filtered (same tokens)": (
            lambda q: [h.doc_id for h in store.lexical_search(qterms[q], k, anon)]
        ),
        "LanceDB FTS, filtered (same tokens)": (lambda q: [h.doc_id for h in store.fts_search(qterms[q], k, anon)]),
        "bm25s, unfiltered (same tokens)": same_one,
        "bm25s, weight_mask filter (same tokens)": (lambda q: same_one(q, mask)),
    }
    for name, (runs, lat) in race(systems, text).items():
        rows.append(row(name, runs, lat, qrels))
    hashing_hybrid = make_retriever("hybrid", store, idx.embedder)
    hashing_hybrid.search("warm up", k)
    runs, lat = timed(lambda q: [h.doc_id for h in hashing_hybrid.search(q, k)], queries)
    rows.append(row("citewise hybrid (hashing+BM25, RRF)", runs, lat, qrels))

    # bm25s with its own tokenizer
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    ids = [d.doc_id for d in docs]
    corpus_text = [f"{d.title} {d.text}" for d in docs]
    retr = bm25s.BM25()
    retr.index(bm25s.tokenize(corpus_text, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)

    def bm25s_one(q):
        res, _ = retr.retrieve(
            bm25s.tokenize([q], stopwords="en", stemmer=stemmer, show_progress=False), k=k, show_progress=False
        )
        return [ids[i] for i in res[0]]

    runs, lat = timed(bm25s_one, queries)
    rows.append(row("bm25s own tokenizer (per query)", runs, lat, qrels))
    t = time.perf_counter()
    qtok = bm25s.tokenize(list(queries.values()), stopwords="en", stemmer=stemmer, show_progress=False)
    res, _ = retr.retrieve(qtok, k=k, show_progress=False, n_threads=1)
    total = time.perf_counter() - t
    batch_runs = {qid: [ids[i] for i in res[j]] for j, qid in enumerate(queries)}
    rows.append(row("bm25s own tokenizer (one batch)", batch_runs, [], qrels, total=total))

    # rank-bm25 over our analyzer's tokens
    from rank_bm25 import BM25Okapi

    okapi = BM25Okapi([analyze(t) for t in corpus_text])

    def okapi_one(q):
        scores = okapi.get_scores(analyze(q))
        top = np.argsort(-scores, kind="stable")[:k]
        return [ids[i] for i in top]

    runs, lat = timed(okapi_one, queries, rounds=1)
    rows.append(row("rank-bm25 BM25Okapi", runs, lat, qrels))

    # citewise hybrid latency with the real MiniLM index
    if not args.no_minilm:
        minilm_hybrid(args, ds, docs, queries, qrels, k, rows)
    return report(args, ds, queries, k, rows)


def minilm_hybrid(args, ds, docs, queries, qrels, k, rows) -> None:
    """Append the MiniLM hybrid row (builds the SciFact MiniLM index once, minutes on 2 cores)."""
    index_dir = Path(args.index) if args.index else default_index_dir().parent / "beir" / f"{ds.name}-minilm"
    idx = Index.open(index_dir, embedder="minilm")
    idx.ingestor(units=False).ingest_documents(docs)  # no-op when already built
    hybrid = make_retriever("hybrid", idx.store, idx.embedder)
    hybrid.search("warm up", k)
    runs, lat = timed(lambda q: [h.doc_id for h in hybrid.search(q, k)], queries)
    rows.append(row("citewise hybrid (MiniLM+BM25, RRF)", runs, lat, qrels))


def report(args, ds, queries, k, rows) -> int:
    """Print the table (or JSON) and the issue 12 ratio."""
    if args.json:
        print(json.dumps({"dataset": ds.name, "queries": len(queries), "k": k, "rows": rows}, indent=2))
        return 0
    print(f"{ds.name} test, {len(queries)} queries, k={k}, one process, {sys.platform}")
    print(f"{'system':42} {'q/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'nDCG@10':>8}")
    for r in rows:
        p50 = f"{r['p50_ms']:.2f}" if r["p50_ms"] is not None else "-"
        p95 = f"{r['p95_ms']:.2f}" if r["p95_ms"] is not None else "-"
        print(f"{r['system']:42} {r['queries_per_s']:8.1f} {p50:>8} {p95:>8} {r['ndcg@10']:8.4f}")
    by = {r["system"]: r for r in rows}
    peer = by["bm25s, unfiltered (same tokens)"]
    ours = by["citewise postings, filtered (same tokens)"]
    print(
        f"citewise filtered / bm25s unfiltered, same tokens: x{ours['queries_per_s'] / peer['queries_per_s']:.2f} q/s "
        f"(fastest round), x{peer['p50_ms'] / ours['p50_ms']:.2f} by p50 latency, "
        f"nDCG@10 {ours['ndcg@10']:.4f} vs {peer['ndcg@10']:.4f} (LanceDB FTS {by['LanceDB FTS, filtered (same tokens)']['ndcg@10']:.4f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
