"""Extractive answers per way of making chunk vectors: one corpus, answer sets graded as
``citewise eval answers`` grades them, in one run.

Run (the real-docs corpora of ``bench/realdocs/fetch.py``):

    python bench/chunk_vectors_answers.py --corpus ~/.cache/citewise/realdocs \\
        --set bench/realdocs/questions-heldout21.jsonl --set bench/realdocs/questions-heldout22.jsonl

Arms, as in ``bench/chunk_vectors_sample.py``: a fresh MiniLM index of ``--corpus`` with ``chunk``
chunk vectors, one with ``units-mean``, and the ``units-mean`` index searched with the top
``max(k, --depth)`` dense candidates re-scored by their best unit. Printed per arm and set: in
scope correct and cited / in scope, out of scope abstained / out of scope (the figures of
docs/benchmarks.md "Answer quality"), and the ingest's process CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from citewise.api import AskOptions, Citewise
from citewise.evaluation.answer_set import compile_patterns, grade_set, read_answer_set
from citewise.index import Index
from citewise.settings import load_settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chunk_vectors_sample import BestUnitStore  # noqa: E402


def grade(idx: Index, sets: list[Path]) -> dict:
    idx.record_usage = False
    cw = Citewise(idx, load_settings(idx.path, {}))
    out = {}
    for path in sets:
        questions = read_answer_set(path, idx.store.documents().keys())
        s = grade_set(lambda q: cw.ask(q, None, AskOptions()), questions, compile_patterns(())).summary()["overall"]
        out[path.name] = {
            "in scope correct": f"{s['correct']}/{s['in_scope']}",
            "out of scope abstained": f"{s['abstained_ok']}/{s['no_answer']}",
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--set", type=Path, action="append", required=True, dest="sets")
    ap.add_argument("--depth", type=int, default=50, help="First-stage chunks re-scored by best unit.")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        built = {}
        for mode in ("chunk", "units-mean"):
            t0 = time.process_time()
            idx = Index.open(Path(tmp) / mode, embedder="minilm", chunk_vectors=mode)
            idx.ingest(a.corpus.expanduser())
            built[mode] = idx.path
            result[mode] = {"ingest CPU s": round(time.process_time() - t0, 1), **grade(idx, a.sets)}
            print(mode, json.dumps(result[mode]), file=sys.stderr, flush=True)
        idx = Index.open(built["units-mean"])
        idx.store = BestUnitStore(idx.store, a.depth)
        arm = f"units-mean + best unit (top {a.depth})"
        result[arm] = grade(idx, a.sets)
    if a.json:
        print(json.dumps(result))
        return
    for arm, r in result.items():
        print(arm, " · ".join(f"{k}: {v}" for k, v in r.items()))


if __name__ == "__main__":
    main()
