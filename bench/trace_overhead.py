"""Cost of the OpenTelemetry instrumentation on a warm ``ask``: before it existed, with tracing off
(the default: the API's no-op tracer) and with tracing on (SDK, spans kept in memory).

Three arms, each in its own Python process on the same index, interleaved round by round so the
shared machine's load falls on all of them alike:

* ``before``: the source tree of a commit without instrumentation (default: the merge base of
  this branch with ``main``, extracted with ``git archive``; ``--before-src DIR`` to give one);
* ``off``: this tree, no tracer provider (what every user gets unless an OTLP endpoint is set);
* ``on``: this tree with an SDK tracer provider and an in-memory exporter (every span recorded;
  the OTLP exporter's network cost is not included).

Each process opens the index, asks every question once to warm up (model loaded, unit vectors
cached), then asks the whole set ``--repeats`` times and reports the per-ask CPU time (process
CPU, all threads) and wall time. Printed: median over rounds of the mean per ask, and the
difference to ``before``. Also printed: the cost of one no-op span (``start_as_current_span`` +
exit) measured in this process.

Usage::

    /work/venv/bin/python bench/trace_overhead.py                         # demo index, 20 golden questions
    /work/venv/bin/python bench/trace_overhead.py --index IDX --rounds 5 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import timeit
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
mode, index, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
questions = json.loads(sys.stdin.read())
if mode == "on":
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
from citewise.index import Index
idx = Index.open(index)
for q in questions:
    idx.ask(q)
c0, w0 = time.process_time(), time.perf_counter()
for _ in range(repeats):
    for q in questions:
        idx.ask(q)
n = repeats * len(questions)
out = {"cpu_ms": 1000 * (time.process_time() - c0) / n, "wall_ms": 1000 * (time.perf_counter() - w0) / n}
if mode == "on":
    out["spans_per_ask"] = len(exporter.get_finished_spans()) / (n + len(questions))
print(json.dumps(out))
"""


def before_tree(rev: str | None, dest: Path) -> tuple[Path, str]:
    """Extract ``src/`` of ``rev`` (default: merge base with main) into ``dest``; returns (src, rev)."""
    if rev is None:
        rev = subprocess.run(
            ["git", "-C", str(REPO), "merge-base", "HEAD", "main"], capture_output=True, text=True, check=True
        ).stdout.strip()
    tar = dest / "src.tar"
    with open(tar, "wb") as fh:
        subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], stdout=fh, check=True)
    with tarfile.open(tar) as t:
        t.extractall(dest, filter="data")
    return dest / "src", rev[:12]


def run_arm(mode: str, src: Path, index: Path, questions: list[str], repeats: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    for k in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        env.pop(k, None)
    run = subprocess.run(
        [sys.executable, "-c", CHILD, "off" if mode == "before" else mode, str(index), str(repeats)],
        input=json.dumps(questions),
        env=env,
        capture_output=True,
        text=True,
    )
    if run.returncode:
        sys.exit(f"{mode}: child failed:\n{run.stderr[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def noop_span_us(n: int = 200_000) -> float:
    sys.path.insert(0, str(REPO / "src"))
    from citewise.telemetry import tracer

    def one():
        with tracer().start_as_current_span("x"):
            pass

    return min(timeit.repeat(one, number=n, repeat=3)) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--index",
        type=Path,
        default=Path.home() / ".local/share/citewise/demo",
        help="An index of the sample corpus (default: the demo's; run 'citewise demo' first).",
    )
    ap.add_argument(
        "--before-src", type=Path, help="src/ of the uninstrumented build (default: git archive of --before-rev)."
    )
    ap.add_argument("--before-rev", help="Commit to compare with (default: merge base with main).")
    ap.add_argument("--questions", type=int, default=20, help="First N questions of the sample golden set.")
    ap.add_argument("--repeats", type=int, default=3, help="Passes over the questions per process.")
    ap.add_argument("--rounds", type=int, default=3, help="Processes per arm (interleaved).")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not (args.index / "index.json").exists():
        sys.exit(f"{args.index}: no index; run 'citewise demo' (or pass --index)")
    golden = REPO / "src/citewise/sample/golden.jsonl"
    questions = [json.loads(line)["text"] for line in golden.read_text().splitlines() if line.strip()][: args.questions]
    with tempfile.TemporaryDirectory() as tmp:
        if args.before_src:
            before_src, rev = args.before_src, str(args.before_src)
        else:
            before_src, rev = before_tree(args.before_rev, Path(tmp))
        arms = {"before": before_src, "off": REPO / "src", "on": REPO / "src"}
        results: dict[str, list[dict]] = {a: [] for a in arms}
        for _ in range(args.rounds):
            for arm, src in arms.items():
                results[arm].append(run_arm(arm, src, args.index, questions, args.repeats))
    span_us = noop_span_us()
    summary = {
        arm: {
            "cpu_ms": statistics.median(r["cpu_ms"] for r in rs),
            "wall_ms": statistics.median(r["wall_ms"] for r in rs),
            "spans_per_ask": rs[0].get("spans_per_ask"),
        }
        for arm, rs in results.items()
    }
    report = {
        "before": rev,
        "index": str(args.index),
        "questions": len(questions),
        "repeats": args.repeats,
        "rounds": args.rounds,
        "arms": summary,
        "runs": results,
        "noop_span_us": span_us,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    base = summary["before"]
    print(
        f"warm ask, {len(questions)} questions x {args.repeats} passes, median of {args.rounds} processes per arm "
        f"(before = {rev})"
    )
    print(f"{'arm':<8} {'CPU ms/ask':>11} {'vs before':>10} {'wall ms/ask':>12} {'vs before':>10} {'spans/ask':>10}")
    for arm, s in summary.items():
        dc = 100 * (s["cpu_ms"] / base["cpu_ms"] - 1)
        dw = 100 * (s["wall_ms"] / base["wall_ms"] - 1)
        spans = f"{s['spans_per_ask']:.1f}" if s["spans_per_ask"] is not None else "-"
        print(f"{arm:<8} {s['cpu_ms']:>11.2f} {dc:>+9.1f}% {s['wall_ms']:>12.2f} {dw:>+9.1f}% {spans:>10}")
    print(f"one no-op span (tracing off): {span_us:.2f} us")


if __name__ == "__main__":
    main()
