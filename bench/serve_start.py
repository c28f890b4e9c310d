"""How long a ``citewise serve`` user waits: to its first line, to "ready", to the first answer.

Run:

    python bench/serve_start.py --index DIR [--peer-src ../main/src] [--rounds 3]

Each round starts ``python -m citewise.cli serve --index DIR --port 0`` once with this checkout's
``src`` and once with ``--peer-src`` (another checkout, e.g. ``main``; same index, rotating
order, so both see the same load), and measures from process start:

* ``first line``: the first line on stderr (this checkout: "listening on URL"; main: "serving
  on URL", printed after the service imports);
* ``ready line``: the line saying the model is loaded ("... ready, N documents"), if any;
* ``first search``: ``POST /v1/search`` {"query": "refund window"} answered 200, sent as soon as
  the URL is known (its wait includes the model load wherever that happens).

The table gives the median and the minimum per checkout and column (seconds). ``--index``: a
MiniLM index (e.g. ``citewise ingest src/citewise/sample/corpus --index DIR``).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

SRC = Path(__file__).resolve().parents[1] / "src"


def one_start(src: Path, index: Path) -> dict[str, float | None]:
    """Start one server from ``src``; seconds to first line, ready line, first search answer."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "citewise.cli", "serve", "--index", str(index), "--port", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    got: dict[str, float | None] = {"first line": None, "ready line": None, "first search": None}
    url: list[str] = []
    seen = threading.Event()

    def read() -> None:
        for line in proc.stderr:
            now = time.perf_counter() - t0
            if got["first line"] is None:
                got["first line"] = now
            if ": ready, " in line and got["ready line"] is None:
                got["ready line"] = now
            m = re.search(r"http://[\d.]+:\d+", line)
            if m and not url:
                url.append(m.group(0))
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not seen.wait(120):
            raise RuntimeError(f"{src}: no URL on stderr within 120 s")
        r = httpx.post(url[0] + "/v1/search", json={"query": "refund window", "k": 5}, timeout=120)
        r.raise_for_status()
        got["first search"] = time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(30)
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--peer-src", type=Path, default=SRC.parents[1] / "main" / "src")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    arms = {"this checkout": SRC, f"peer ({args.peer_src})": args.peer_src.resolve()}
    runs: dict[str, list[dict]] = {name: [] for name in arms}
    names = list(arms)
    for r in range(args.rounds):
        for name in names[r % 2 :] + names[: r % 2]:
            runs[name].append(one_start(arms[name], args.index))
    cols = ["first line", "ready line", "first search"]
    print(
        f"| serve start, {args.rounds} rounds (same run) | " + " | ".join(f"{c}: median / min s" for c in cols) + " |"
    )
    print("|---|" + "---:|" * len(cols))
    for name, rs in runs.items():
        cells = []
        for c in cols:
            vals = [x[c] for x in rs if x[c] is not None]
            cells.append(f"{statistics.median(vals):.2f} / {min(vals):.2f}" if vals else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
