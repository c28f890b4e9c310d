"""Cold ``ask`` with answer-unit vectors embedded at query time (before) vs stored at ingest (after).

Issue 10 item 11: embedding answer units (sentences, list items, table rows) at query time was
82% of a cold ``ask``. Since then ingestion embeds them once and stores them on the chunk rows
(:mod:`citewise.answer.units`, :mod:`citewise.ingest`).

What is measured, with the real MiniLM embedder (int8 ONNX) on one corpus (default: the bundled
sample corpus):

* ingest: a full ingest into a fresh index without unit vectors (``units=False``, as before) and
  with them (``units=True``, the default now): process CPU seconds (all threads) and wall.
* ask: for each question, a *cold* ask — a fresh answerer with an empty unit cache, the embedding
  model already loaded — on the index with stored unit vectors:

  - before: units embedded at query time (``UnitCache`` without a store; question embedded by the
    retriever and again for the evidence score, as before);
  - after: ``Index.answerer`` as shipped (stored unit vectors, question embedded once).

  Reported: CPU and wall of the whole ask, and of the ask beyond retrieval (the retriever's own
  CPU / wall, measured around ``search``, subtracted), mean and max over the questions, and
  whether both answers are identical (text, outcome, citations).

The machine is shared: CPU seconds are the figure to trust; wall varies with other people's load.

Usage::

    /work/venv/bin/python bench/ask_latency.py                     # sample corpus, 10 golden questions
    /work/venv/bin/python bench/ask_latency.py --questions 40 --json
    /work/venv/bin/python bench/ask_latency.py --corpus DIR --question "How do I ...?" ...
    # a big corpus: time only the one ingest the ask needs (with unit vectors)
    /work/venv/bin/python bench/ask_latency.py --corpus ~/.cache/citewise/realdocs/nodejs --no-ingest-compare \
        --question "How do I read a file line by line?"
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

from citewise.answer.pipeline import Answerer
from citewise.answer.unit_cache import UnitCache
from citewise.demo import sample_dir
from citewise.index import Index
from citewise.models.embedders import QueryMemo
from citewise.retrieval.retrievers import make_retriever


class TimedRetriever:
    """Wraps a retriever and adds up the CPU and wall seconds spent in ``search``."""

    def __init__(self, inner):
        self.inner = inner
        self.cpu = self.wall = 0.0

    def search(self, *args, **kw):
        c, w = time.process_time(), time.perf_counter()
        try:
            return self.inner.search(*args, **kw)
        finally:
            self.cpu += time.process_time() - c
            self.wall += time.perf_counter() - w


def timed_ingest(corpus: Path, units: bool, embedder) -> dict:
    """Ingest ``corpus`` into a fresh temporary index; CPU / wall seconds and counts."""
    tmp = Path(tempfile.mkdtemp(prefix="ask-latency-"))
    try:
        idx = Index.open(tmp, embedder="minilm")
        idx.embedder = embedder
        c, w = time.process_time(), time.perf_counter()
        report = idx.ingestor(units=units).ingest_folder(corpus)
        return {
            "cpu_s": time.process_time() - c,
            "wall_s": time.perf_counter() - w,
            "chunks_embedded": report.chunks_embedded,
            "units_embedded": report.units_embedded,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cold_ask(idx: Index, question: str, stored: bool) -> dict:
    """One ask with an empty unit cache; ``stored``: as shipped, else query-time unit embedding."""
    if stored:
        memo = QueryMemo(idx.embedder)
        retriever = TimedRetriever(make_retriever("shipped", idx.store, memo))
        units = UnitCache(idx.embedder, store=idx.store)
        answerer = Answerer(retriever, idx.store, memo, threshold=idx.abstain_threshold, units=units)
    else:
        retriever = TimedRetriever(make_retriever("shipped", idx.store, idx.embedder))
        units = UnitCache(idx.embedder)
        answerer = Answerer(retriever, idx.store, idx.embedder, threshold=idx.abstain_threshold, units=units)
    c, w = time.process_time(), time.perf_counter()
    ans = answerer.answer(question)
    cpu, wall = time.process_time() - c, time.perf_counter() - w
    return {
        "cpu_s": cpu,
        "wall_s": wall,
        "cpu_beyond_s": cpu - retriever.cpu,
        "wall_beyond_s": wall - retriever.wall,
        "units_embedded_chunks": units.embedded_chunks,
        "stored_chunks": units.stored_hits,
        "key": (ans.text, ans.outcome, tuple(c.doc_id for c in ans.citations)),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=None, help="folder to ingest (default: the sample corpus)")
    ap.add_argument("--question", action="append", default=[], help="question to ask (repeatable)")
    ap.add_argument("--questions", type=int, default=10, help="sample golden questions when no --question")
    ap.add_argument(
        "--no-ingest-compare",
        action="store_true",
        help="skip the two timed ingests; time the ask index's ingest (with unit vectors) only",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    corpus = args.corpus or sample_dir() / "corpus"
    questions = list(args.question)
    if not questions:
        golden = (sample_dir() / "golden.jsonl").read_text().splitlines()
        questions = [json.loads(line)["text"] for line in golden if line.strip()][: args.questions]

    from citewise.models.embedders import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.embed(["warm up the session"])
    ingest = {}
    if not args.no_ingest_compare:
        ingest = {
            "before (no unit vectors)": timed_ingest(corpus, False, embedder),
            "after (unit vectors stored)": timed_ingest(corpus, True, embedder),
        }

    tmp = Path(tempfile.mkdtemp(prefix="ask-latency-"))
    try:
        idx = Index.open(tmp, embedder="minilm")
        idx.embedder = embedder
        c, w = time.process_time(), time.perf_counter()
        report = idx.ingest(corpus)
        if args.no_ingest_compare:
            ingest["after (unit vectors stored)"] = {
                "cpu_s": time.process_time() - c,
                "wall_s": time.perf_counter() - w,
                "chunks_embedded": report.chunks_embedded,
                "units_embedded": report.units_embedded,
            }
        runs = {"before": [], "after": []}
        for q in questions:  # alternate, so load changes hit both arms alike
            runs["before"].append(cold_ask(idx, q, stored=False))
            runs["after"].append(cold_ask(idx, q, stored=True))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    identical = sum(b["key"] == a["key"] for b, a in zip(runs["before"], runs["after"]))
    summary = {}
    for arm, rs in runs.items():
        summary[arm] = {
            f"{m}_{agg.__name__}": round(agg(r[m] for r in rs), 4)
            for m in ("cpu_s", "wall_s", "cpu_beyond_s", "wall_beyond_s")
            for agg in (statistics.fmean, max)
        }
        summary[arm]["chunks_embedded_at_query_time"] = sum(r["units_embedded_chunks"] for r in rs)
    result = {
        "corpus": str(corpus),
        "questions": len(questions),
        "identical_answers": identical,
        "ingest": {k: {m: round(v, 3) if isinstance(v, float) else v for m, v in d.items()} for k, d in ingest.items()},
        "ask": summary,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"corpus: {corpus}\n")
    print("| ingest | CPU s | wall s | chunks embedded | units embedded |")
    print("|---|---|---|---|---|")
    for k, d in ingest.items():
        print(f"| {k} | {d['cpu_s']:.2f} | {d['wall_s']:.2f} | {d['chunks_embedded']} | {d['units_embedded']} |")
    if "before (no unit vectors)" in ingest:
        b, a = ingest["before (no unit vectors)"], ingest["after (unit vectors stored)"]
        print(
            f"\nunit vectors add {a['cpu_s'] - b['cpu_s']:.2f} CPU s to the ingest "
            f"({(a['cpu_s'] / b['cpu_s'] - 1) * 100:.0f}%)"
        )
    print()
    print(f"cold ask, {len(questions)} questions (mean / max seconds):\n")
    print("| ask | CPU | wall | CPU beyond retrieval | wall beyond retrieval | chunks embedded at query time |")
    print("|---|---|---|---|---|---|")
    for arm, label in (("before", "before: units embedded at query time"), ("after", "after: stored unit vectors")):
        s = summary[arm]
        print(
            f"| {label} | {s['cpu_s_fmean']:.3f} / {s['cpu_s_max']:.3f} | {s['wall_s_fmean']:.3f} / {s['wall_s_max']:.3f} "
            f"| {s['cpu_beyond_s_fmean']:.3f} / {s['cpu_beyond_s_max']:.3f} "
            f"| {s['wall_beyond_s_fmean']:.3f} / {s['wall_beyond_s_max']:.3f} | {s['chunks_embedded_at_query_time']} |"
        )
    print(f"\nidentical answers (text, outcome, citations): {identical} of {len(questions)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
