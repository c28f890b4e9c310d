"""Re-derive the dev/held-out split of the real-docs question set.

Usage: python split_questions.py questions-all.jsonl [outdir]
(or pass both questions-dev.jsonl and questions-heldout.jsonl to check that the
committed split matches the rule).

Rule: group questions by stratum (corpus, kind); within each stratum sort the ids,
shuffle them with random.Random(42).shuffle, and put the first half (rounded down)
in dev and the rest in held-out.
"""

import json
import random
import sys
from collections import defaultdict
from pathlib import Path


def split(questions):
    strata = defaultdict(list)
    for q in questions:
        strata[(q["corpus"], q["kind"])].append(q["id"])
    dev_ids = set()
    for key in sorted(strata):
        ids = sorted(strata[key])
        random.Random(42).shuffle(ids)
        dev_ids.update(ids[: len(ids) // 2])
    dev = [q for q in questions if q["id"] in dev_ids]
    held = [q for q in questions if q["id"] not in dev_ids]
    return dev, held


def main(argv):
    questions = []
    for p in argv[1:]:
        if p.endswith(".jsonl"):
            questions += [json.loads(l) for l in Path(p).read_text().splitlines() if l.strip()]
    questions.sort(key=lambda q: q["id"])
    ids = [q["id"] for q in questions]
    assert len(ids) == len(set(ids)), "duplicate ids"
    dev, held = split(questions)
    out = Path(argv[-1]) if not argv[-1].endswith(".jsonl") else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
        for name, qs in (("questions-dev.jsonl", dev), ("questions-heldout.jsonl", held)):
            (out / name).write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs))
    print(f"dev={len(dev)} heldout={len(held)}")
    return dev, held


if __name__ == "__main__":
    main(sys.argv)
