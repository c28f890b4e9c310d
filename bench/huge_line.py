"""Peak memory of ``citewise ingest`` on one huge single-line file, beside the same text in lines.

Issue 37: a 50 MB file holding one line took ingest to 2.6 GB of memory. This script writes a
file of ``--mb`` MB of words (a fixed seed, a full stop every ~20 words, as prose; ``--no-stops``:
no punctuation at all) twice — once as a single line, once broken into lines of ~80 characters
(the peer: the same words and bytes apart from the line breaks) — and ingests each into a fresh
index (hashing embedder, or ``--embedder minilm``) in a child process, reading the child's peak resident set size
(``ru_maxrss`` of ``RUSAGE_CHILDREN``) and wall time.

Usage::

    .venv/bin/python bench/huge_line.py --mb 50
    .venv/bin/python bench/huge_line.py --mb 50 --no-stops
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "invoice refund export webhook payment currency ledger account customer balance report tax "
    "schedule approval limit retry signature token session archive"
).split()


def write_text(path: Path, mb: float, stops: bool, line_chars: int | None, seed: int = 7) -> int:
    rng = random.Random(seed)
    target = int(mb * 1_000_000)
    written = 0
    col = 0
    with open(path, "w", encoding="utf-8") as fh:
        while written < target:
            n = rng.randint(12, 28)
            words = [rng.choice(WORDS) for _ in range(n)]
            piece = " ".join(words) + ("." if stops else "") + " "
            if line_chars and col + len(piece) > line_chars:
                fh.write("\n")
                written += 1
                col = 0
            fh.write(piece)
            written += len(piece)
            col += len(piece)
    return written


_WRAPPER = """import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(r.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)
print(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else "")
"""


def peak_ingest(path: Path, embedder: str = "hashing") -> tuple[float, float, int]:
    """(peak RSS in MB, wall seconds, exit status) of ``citewise ingest`` of ``path``, run by a
    fresh wrapper process so that ``RUSAGE_CHILDREN`` holds that one child's peak."""
    with tempfile.TemporaryDirectory(prefix="cw-huge-") as tmp:
        t0 = time.perf_counter()
        r = subprocess.run(
            [
                sys.executable,
                "-c",
                _WRAPPER,
                sys.executable,
                "-c",
                "from citewise.cli import main; main()",
                "ingest",
                str(path),
                "--index",
                str(Path(tmp) / "index"),
                "--embedder",
                embedder,
            ],
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - t0
        head, _, last = r.stdout.partition("\n")
        kb, rc = (int(x) for x in head.split())
        print(f"  {last.strip()[:160]}" if rc == 0 else f"  exit {rc}: {r.stderr.strip()[-300:]}")
        return kb / 1024, wall, rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--no-stops", action="store_true", help="no full stops: one sentence of --mb MB")
    ap.add_argument("--ext", default="txt", help="file type: txt (default) | md | html")
    ap.add_argument("--embedder", default="hashing", help="hashing (default) | minilm")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cw-huge-text-") as tmp:
        lines, one = Path(tmp) / "lines" / f"lines.{args.ext}", Path(tmp) / "one" / f"one-line.{args.ext}"
        lines.parent.mkdir()
        one.parent.mkdir()
        n = write_text(lines, args.mb, not args.no_stops, 80)
        write_text(one, args.mb, not args.no_stops, None)
        rows = []
        for name, path in (("lines of ~80 chars (peer)", lines), ("one line", one)):
            print(f"{name}: {path.stat().st_size / 1e6:.1f} MB")
            rows.append((name, *peak_ingest(path, args.embedder)))
    print(
        f"\n{args.mb:g} MB of words ({n:,} bytes, .{args.ext}), "
        f"{'no full stops' if args.no_stops else 'a full stop every ~20 words'}; "
        f"citewise ingest --embedder {args.embedder}, one child process each"
    )
    print("| file | peak RSS (MB) | wall (s) | exit |\n|---|---|---|---|")
    for name, peak, wall, rc in rows:
        print(f"| {name} | {peak:,.0f} | {wall:.1f} | {rc} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
