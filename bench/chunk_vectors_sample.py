"""Chunk vectors on the bundled sample corpus: the eval gate, the adversarial permission queries
and the extractive answers, per way of making chunk vectors, in one run.

Run:

    python bench/chunk_vectors_sample.py [--depth 50] [--json]

Arms (each a fresh MiniLM index of the sample corpus, ingested and configured as ``citewise
demo`` does; the ingest's process CPU is printed):

* ``chunk``: each chunk's own text embedded, besides its answer units (two passes);
* ``units-mean``: a chunk's vector is the normalised mean of its unit vectors (one pass);
* ``units-mean + best unit``: the ``units-mean`` index, its dense search re-scoring the top
  ``max(k, --depth)`` chunks by their best unit's cosine with the query (the unit vectors of
  those chunks only, :meth:`citewise.store.base.Store.get_units`), so every dense leg (``dense``,
  ``hybrid``, ``shipped``, the answer layer's retrieval) ranks by it.

Printed per arm:

* the gate of ``src/citewise/sample/floors.yaml`` on ``golden.jsonl`` for ``shipped`` (the
  retriever CI gates, ``tests/test_gate.py``), ``dense`` and ``hybrid``: breached floors and the
  per-slice nDCG@10 / MAP;
* the adversarial permission queries of ``tests/test_permissions.py`` (an insider in every
  group; how many of them get a restricted document in the top 5; the test asks >= 35);
* extractive ``ask`` on the golden set (answered with a citation of a relevant document) and on
  ``out_of_scope.jsonl`` (abstained), as ``tests/test_answer_sample.py`` counts them;
* the dense search's CPU per query (ms, median of the golden queries, k = 10, query vectors
  embedded beforehand; best of 3 rounds).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from citewise.answer.calibrate import read_questions
from citewise.core import Principal
from citewise.demo import configure_sample_records, sample_dir
from citewise.evaluation.gate import load_floors
from citewise.evaluation.harness import run_gate
from citewise.index import Index

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_permissions as perms  # noqa: E402 - the test's own query set


class BestUnitStore:
    """A read-only store proxy whose ``vector_search`` re-scores the first stage's top
    ``max(k, depth)`` by best unit cosine (a chunk without units keeps its score); ties by id."""

    def __init__(self, store, depth: int):
        self._store, self.depth = store, depth

    def vector_search(self, vector, k, filters=None):
        hits = self._store.vector_search(vector, max(k, self.depth), filters)
        units = self._store.get_units([h.chunk_id for h in hits])
        q = np.asarray(vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        out = []
        for h in hits:
            u = units.get(h.chunk_id)
            s = float(np.max(u.vectors @ q)) if u is not None and len(u.vectors) else h.score
            out.append(dataclasses.replace(h, score=s))
        out.sort(key=lambda h: (-h.score, h.chunk_id))
        return out[:k]

    def __getattr__(self, name):
        return getattr(self._store, name)


def dense_ms(idx: Index, texts: list[str]) -> float:
    """Median CPU ms of ``idx.store.vector_search`` (k = 10, public) over ``texts``' vectors."""
    from citewise.core import Filters

    vectors = idx.question_embedder.embed(texts)
    best = []
    for v in vectors:
        times = []
        for _ in range(3):
            t0 = time.process_time()
            idx.store.vector_search(v, 10, Filters(groups=("public",)))
            times.append(time.process_time() - t0)
        best.append(min(times))
    return round(1000 * float(np.median(best)), 2)


def measure(idx: Index, ingest_cpu: float) -> dict:
    s = sample_dir()
    floors = load_floors(s / "floors.yaml")
    out: dict = {"ingest CPU s": round(ingest_cpu, 1)}
    for name in ("shipped", "dense", "hybrid"):
        c, breaches = run_gate(idx, floors, s / "golden.jsonl", name, resamples=200)
        means = c.means[name]
        out[name] = {
            "breaches": [str(b) for b in breaches],
            "ndcg@10": {sl: round(m["ndcg@10"], 4) for sl, m in means.items()},
            "map": {sl: round(m["map"], 4) for sl, m in means.items()},
        }
    insider = Principal("insider", ("finance", "support", "security"))
    out["adversarial (of 36)"] = {
        name: sum(
            any(perms._group(h.doc_id) for h in idx.search(q, perms.K, retriever=name, principal=insider))
            for q in perms.ADVERSARIAL
        )
        for name in perms.RETRIEVERS
    }
    gold, oos = read_questions(s / "golden.jsonl", True), read_questions(s / "out_of_scope.jsonl", False)
    good = 0
    for q in gold:
        a = idx.ask(q.text)
        good += a.outcome != "abstained" and any(q.relevant.get(c.doc_id, 0) >= 1 for c in a.citations)
    abstained = [q.qid for q in oos if idx.ask(q.text).outcome == "abstained"]
    out["dense CPU ms/query"] = dense_ms(idx, [q.text for q in gold])
    out["answers"] = {
        "in scope": f"{good}/{len(gold)}",
        "out of scope abstained": f"{len(abstained)}/{len(oos)}",
        "answered out of scope": sorted({q.qid for q in oos} - set(abstained)),
    }
    return out


def build(root: Path, mode: str) -> tuple[Index, float]:
    t0 = time.process_time()
    idx = Index.open(root / mode, embedder="minilm", chunk_vectors=mode)
    report = idx.ingest(sample_dir() / "corpus")
    if report.errors:
        raise SystemExit(f"ingest errors: {report.errors}")
    configure_sample_records(idx.path)
    return idx, time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--depth", type=int, default=50, help="First-stage chunks re-scored by best unit.")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        chunk, t_chunk = build(Path(tmp), "chunk")
        result["chunk"] = measure(chunk, t_chunk)
        mean, t_mean = build(Path(tmp), "units-mean")
        result["units-mean"] = measure(mean, t_mean)
        rescored = Index.open(mean.path)  # a new object: answerers are cached per Index
        rescored.store = BestUnitStore(rescored.store, a.depth)
        result[f"units-mean + best unit (top {a.depth})"] = measure(rescored, t_mean)
    if a.json:
        print(json.dumps(result))
        return
    for arm, r in result.items():
        print(f"{arm} · ingest CPU {r['ingest CPU s']} s")
        for name in ("shipped", "dense", "hybrid"):
            g = r[name]
            print(f"  {name:8s} nDCG@10 {g['ndcg@10']}  MAP {g['map']}")
            print(f"  {'':8s} breaches ({len(g['breaches'])}): {'; '.join(g['breaches']) or '-'}")
        print(f"  adversarial queries with a restricted document in the top 5: {r['adversarial (of 36)']}")
        print(f"  answers: {r['answers']}")
        print(f"  dense search CPU ms per query (median): {r['dense CPU ms/query']}")


if __name__ == "__main__":
    main()
