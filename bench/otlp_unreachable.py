"""How long a process waits at exit when its OTLP collector is unreachable: citewise's
``telemetry.configure`` against the OpenTelemetry SDK's defaults (the peer: what ``configure`` did
before, ``BatchSpanProcessor(OTLPSpanExporter())`` with a 10 s timeout, retries backing off 1, 2,
4 s and the SDK's exit hook).

Two collectors: ``refused`` (a closed local port) and ``silent`` (a local socket that accepts the
connection into its backlog and never answers, like a collector behind a dead proxy). Each arm is a
fresh Python process that installs the exporter, ends one span, prints ``time.time()`` and exits;
the exit wait is the parent's clock when the process has ended minus that stamp. Arms are
interleaved round by round, so the shared machine's load falls on both alike. Printed: median and
maximum exit wait per arm and collector, and the stderr lines of the last run.

Usage::

    /work/venv/bin/python bench/otlp_unreachable.py               # 3 rounds
    /work/venv/bin/python bench/otlp_unreachable.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

CITEWISE = """
import sys, time
from citewise import telemetry
assert telemetry.configure(sys.argv[1])
with telemetry.tracer().start_as_current_span("x"):
    pass
print(time.time(), flush=True)
"""

SDK_DEFAULTS = """
import sys, time
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=sys.argv[1] + "/v1/traces")))
trace.set_tracer_provider(provider)
with trace.get_tracer("bench").start_as_current_span("x"):
    pass
print(time.time(), flush=True)
"""


def run(script: str, kind: str) -> tuple[float, list[str]]:
    listener = None
    if kind == "refused":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    else:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    try:
        res = subprocess.run(
            [sys.executable, "-c", script, f"http://127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            env={**env, "PYTHONPATH": str(SRC)},
            timeout=120,
        )
        ended = time.time()
    finally:
        if listener is not None:
            listener.close()
    if res.returncode != 0:
        raise SystemExit(f"arm failed: {res.stderr}")
    return ended - float(res.stdout.strip()), res.stderr.splitlines()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    arms = {"citewise configure": CITEWISE, "SDK defaults (peer)": SDK_DEFAULTS}
    waits: dict[tuple[str, str], list[float]] = {}
    lines: dict[tuple[str, str], list[str]] = {}
    for _ in range(args.rounds):
        for kind in ("refused", "silent"):
            for name, script in arms.items():
                w, err = run(script, kind)
                waits.setdefault((name, kind), []).append(w)
                lines[(name, kind)] = err
    print(
        f"exit wait on an unreachable collector, seconds ({args.rounds} rounds, arms interleaved; "
        f"load average {os.getloadavg()[0]:.1f})"
    )
    print(f"| {'arm':<20} | {'collector':<9} | {'median s':>8} | {'max s':>6} | {'stderr lines':>12} |")
    print(f"|{'-' * 22}|{'-' * 11}|{'-' * 9}:|{'-' * 7}:|{'-' * 13}:|")
    for (name, kind), ws in waits.items():
        print(
            f"| {name:<20} | {kind:<9} | {statistics.median(ws):>8.2f} | {max(ws):>6.2f} | "
            f"{len(lines[(name, kind)]):>12} |"
        )
    for (name, kind), err in lines.items():
        print(f"\n{name}, {kind}: " + ("\n  " + "\n  ".join(e[:160] for e in err) if err else "(nothing)"))


if __name__ == "__main__":
    main()
