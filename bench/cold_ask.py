"""CPU of a cold ``citewise ask`` against a cold ``citewise search`` on the same index, same run.

Run:

    python bench/cold_ask.py [--index DIR] [--runs 5] [--baseline SRC] [--json]

``--index``: an index to query (default: one built here from the bundled sample corpus with the
MiniLM embedder, in a temporary folder). Each round starts one fresh process of each command,
in a rotating order, and waits for it; the CPU (user + system, all threads) of each child is
read from ``getrusage(RUSAGE_CHILDREN)``. Printed: the median CPU seconds and wall seconds per
command over ``--runs`` rounds, and the ratio ask / search (CPU).

Commands (``python -m citewise.cli``, what the ``citewise`` script runs): ``search "QUERY"`` and
``ask "QUESTION"`` (default retriever, extractive answer, no records database). ``--baseline
SRC`` (repeatable) adds both commands run from another source tree (its ``src`` on
``PYTHONPATH``, e.g. ``git archive main src | tar -x -C /tmp/main``) in the same rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = "How long is the refund window?"


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", action="append", default=[])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    index = a.index
    if index is None:
        from citewise.demo import sample_dir
        from citewise.index import Index

        index = Path(tempfile.mkdtemp(prefix="cold-ask-")) / "index"
        Index.open(index, embedder="minilm").ingest(sample_dir() / "corpus")
    here = str(Path(__file__).resolve().parent.parent / "src")
    trees = [("", here)] + [(f" ({Path(b).name})", str(Path(b).resolve() / "src")) for b in a.baseline]
    cmds = []
    for label, src in trees:
        env = {**os.environ, "PYTHONPATH": src}
        cmds.append(
            (f"search{label}", [sys.executable, "-m", "citewise.cli", "search", QUERY, "--index", str(index)], env)
        )
        cmds.append((f"ask{label}", [sys.executable, "-m", "citewise.cli", "ask", QUERY, "--index", str(index)], env))
    cpu: dict[str, list[float]] = {c[0]: [] for c in cmds}
    wall: dict[str, list[float]] = {c[0]: [] for c in cmds}
    for r in range(a.runs):
        order = cmds[r % len(cmds) :] + cmds[: r % len(cmds)]
        for name, argv, env in order:
            c0, t0 = child_cpu(), time.perf_counter()
            subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(child_cpu() - c0)
    med = {n: (statistics.median(cpu[n]), statistics.median(wall[n])) for n in cpu}
    ratios = {label or "this tree": round(med[f"ask{label}"][0] / med[f"search{label}"][0], 2) for label, _ in trees}
    result = {
        "index": str(index),
        "runs": a.runs,
        "load": round(os.getloadavg()[0], 1),
        "cpu_s": {n: round(v[0], 3) for n, v in med.items()},
        "wall_s": {n: round(v[1], 3) for n, v in med.items()},
        "ask/search cpu": ratios,
    }
    if a.json:
        print(json.dumps(result))
        return
    print(f"median over {a.runs} rounds, load {result['load']}")
    for n, (c, w) in med.items():
        print(f"  {n:28s} CPU {c:6.3f} s  wall {w:6.3f} s")
    for label, ratio in ratios.items():
        print(f"  ask / search CPU ({label}): {ratio}x")


if __name__ == "__main__":
    main()
