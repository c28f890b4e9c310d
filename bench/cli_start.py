"""Wall time of a ``citewise search`` process on a small index, against same-run peers.

Run:

    python bench/cli_start.py [--index DIR] [--runs 10] [--json]

``--index``: a small MiniLM index (default: one built here from the bundled sample corpus,
``src/citewise/sample/corpus``, as ``citewise ingest`` builds it, in a temporary folder). Each round starts, in a rotating order, one fresh process of each command below and
waits for it (what a shell user waits for); ``--runs`` rounds; the table gives the median and
the minimum wall time per command. The machine's 2 cores are shared, so the peers
(``python -c pass``: the interpreter alone; ``python -c "import lancedb"``: the import that
used to dominate) are measured in the same rounds and their ratios printed.

Commands (``python -m citewise.cli`` is what the ``citewise`` script runs):

* ``search (shipped)``: ``citewise search "refund window" --index DIR`` (default retriever:
  hybrid + pinning, MiniLM query embedding);
* ``search (bm25)``: the same with ``--retriever bm25`` (no model);
* ``python -c pass`` and ``python -c "import lancedb"``.

``--baseline SRC`` (repeatable) adds the shipped search run from another source tree (its ``src``
folder on ``PYTHONPATH``, e.g. ``git archive main src | tar -x -C /tmp/main``), in the same
rounds: a before/after comparison on a shared machine needs both in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = "refund window"


def build_small(folder: Path) -> Path:
    """A MiniLM index of the sample corpus in ``folder``, as ``citewise ingest`` builds it."""
    from citewise.demo import sample_dir
    from citewise.index import Index

    Index.open(folder, embedder="minilm").ingest(sample_dir() / "corpus")
    return folder


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default=None)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="SRC",
        help="also time the shipped search with SRC first on PYTHONPATH",
    )
    args = ap.parse_args()
    tmp = None
    if args.index:
        index = Path(args.index)
    else:
        tmp = tempfile.TemporaryDirectory()
        index = build_small(Path(tmp.name) / "small")
    py = sys.executable
    cmds = {
        "citewise search (shipped, MiniLM)": [py, "-m", "citewise.cli", "search", QUERY, "--index", str(index)],
        "citewise search --retriever bm25": [
            py,
            "-m",
            "citewise.cli",
            "search",
            QUERY,
            "--index",
            str(index),
            "--retriever",
            "bm25",
        ],
        "python -c pass": [py, "-c", "pass"],
        'python -c "import lancedb"': [py, "-c", "import lancedb"],
    }
    # as on a user's machine: Python caches compiled modules (this sandbox sets
    # PYTHONDONTWRITEBYTECODE, which made every run recompile ~20 of citewise's modules, ~0.05 s),
    # and one untimed run of each command writes those caches before the timed rounds
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    envs = {n: env for n in cmds}
    for src in args.baseline:
        name = f"search (shipped) from {src}"
        cmds[name] = cmds["citewise search (shipped, MiniLM)"]
        envs[name] = {
            **env,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(src).resolve()), env.get("PYTHONPATH")])),
        }
    for name, cmd in cmds.items():
        subprocess.run(cmd, env=envs[name], capture_output=True)
    times: dict[str, list[float]] = {n: [] for n in cmds}
    names = list(cmds)
    load0 = os.getloadavg()
    for r in range(args.runs):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            t = time.perf_counter()
            p = subprocess.run(cmds[name], env=envs[name], capture_output=True, text=True)
            times[name].append(time.perf_counter() - t)
            if p.returncode:
                raise SystemExit(f"{name} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    load1 = os.getloadavg()
    rows = [{"command": n, "median_s": statistics.median(v), "min_s": min(v), "runs": len(v)} for n, v in times.items()]
    result = {"index": str(index), "load_before": load0, "load_after": load1, "rows": rows}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{args.runs} rounds, rotating order; load avg {load0[0]:.1f} -> {load1[0]:.1f} (2 cores)")
    wide = max(40, *(len(n) for n in cmds))
    print(f"{'command':{wide}} {'median s':>9} {'min s':>7}")
    for row in rows:
        print(f"{row['command']:{wide}} {row['median_s']:9.3f} {row['min_s']:7.3f}")
    by = {row["command"]: row for row in rows}
    s, lance = by["citewise search (shipped, MiniLM)"], by['python -c "import lancedb"']
    print(
        f"search (shipped) / import lancedb, same rounds: x{s['median_s'] / lance['median_s']:.2f} by median, "
        f"x{s['min_s'] / lance['min_s']:.2f} by min"
    )
    b = by["citewise search --retriever bm25"]
    print(f"search (shipped) - search (bm25), the query model's share: {s['median_s'] - b['median_s']:.3f} s by median")
    return 0


if __name__ == "__main__":
    sys.exit(main())
