"""Load on ``citewise serve``: latency (p50, p95) and throughput (q/s) of ``POST /v1/search`` and
``POST /v1/ask`` at 1, 8 and 32 concurrent clients, against the same calls made in process
(``Index.search`` / the service's ask path, one caller, no HTTP) measured in the same run.

The server is a real ``citewise serve`` process (uvicorn, rate limit off) on a free localhost port
over the sample corpus indexed with MiniLM (built into a temporary folder unless ``--index`` names
one). Clients are ``httpx.AsyncClient`` tasks, each sending its next request as soon as the last
one answered; the questions are the sample golden set's, in order, so every level sees the same mix.
Each level starts after one warm-up pass (the model and caches loaded), as a long-running server
would be. The server remembers recent embedding batches (``BatchMemo``), so a repeated question
skips its embedding: by default every measured request's text is made unique (`` #<n>`` appended,
n counting requests) so none is answered from that memo; ``--repeat`` sends the golden questions
as they are (a popular-questions workload).

Latency percentiles are linear-interpolated (numpy's default). q/s = requests / wall seconds of the
level. The machine is shared (2 cores for several people): compare rows of one run, not runs.

Usage::

    nice -n 10 /work/venv/bin/python bench/serve_load.py                    # 96 requests per level
    nice -n 10 /work/venv/bin/python bench/serve_load.py --requests 192 --levels 1,8,32 --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from citewise.demo import sample_dir  # noqa: E402
from citewise.index import Index  # noqa: E402


def questions() -> list[str]:
    return [
        json.loads(line)["text"] for line in (sample_dir() / "golden.jsonl").read_text().splitlines() if line.strip()
    ]


def stats(lat: list[float], wall: float) -> dict:
    a = np.array(lat) * 1000
    return {
        "n": len(lat),
        "p50_ms": round(float(np.percentile(a, 50)), 1),
        "p95_ms": round(float(np.percentile(a, 95)), 1),
        "qps": round(len(lat) / wall, 1),
    }


async def level(url: str, path: str, bodies: list[dict], clients: int) -> dict:
    """Send ``bodies`` with ``clients`` concurrent senders; returns latency stats and errors."""
    lat: list[float] = []
    errors = 0
    pending = list(reversed(bodies))
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=httpx.Limits(max_connections=clients)) as c:

        async def sender():
            nonlocal errors
            while pending:
                body = pending.pop()
                t = time.perf_counter()
                r = await c.post(path, json=body)
                lat.append(time.perf_counter() - t)
                errors += r.status_code != 200

        t0 = time.perf_counter()
        await asyncio.gather(*(sender() for _ in range(clients)))
        wall = time.perf_counter() - t0
    return {**stats(lat, wall), "errors": errors}


def texts(qs: list[str], n: int, start: int, repeat: bool) -> list[str]:
    """``n`` request texts cycling through ``qs``; unique unless ``repeat`` (see module docstring)."""
    return [qs[i % len(qs)] if repeat else f"{qs[i % len(qs)]} #{start + i}" for i in range(n)]


def in_process(index: Path, qs: list[str], n: int, repeat: bool) -> dict:
    """The peer: the service's own search and ask calls in this process, one caller, no HTTP."""
    from citewise.core import Principal
    from citewise.service.app import Service

    svc = Service(
        index,
        require_auth=False,
        jwt=None,
        db=None,
        generator="extractive",
        request_timeout_s=120,
        rate=0,
        burst=1,
        pool_size=1,
        ingest_roots=None,
        max_query_chars=2000,
    )
    anon = Principal()
    out = {}
    for name, call in (
        ("search", lambda q: svc.search(q, 10, "shipped", anon, None)),
        ("ask", lambda q: svc.ask(q, 5, "shipped", anon, None)),
    ):
        for q in qs:  # warm-up pass
            call(q)
        lat = []
        t0 = time.perf_counter()
        for q in texts(qs, n, 10_000_000, repeat):
            t = time.perf_counter()
            call(q)
            lat.append(time.perf_counter() - t)
        out[name] = {**stats(lat, time.perf_counter() - t0), "errors": 0}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, help="A MiniLM index of the sample corpus (default: built in a temp folder).")
    ap.add_argument("--requests", type=int, default=96, help="Requests per endpoint and level.")
    ap.add_argument("--levels", default="1,8,32", help="Concurrent clients, comma-separated.")
    ap.add_argument("--repeat", action="store_true", help="Send the golden questions as they are (memo hits allowed).")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    qs = questions()
    tmp = None
    index = args.index
    if index is None:
        tmp = tempfile.TemporaryDirectory(prefix="serve-load-")
        index = Path(tmp.name) / "index"
        t = time.perf_counter()
        Index.open(index, embedder="minilm").ingest(sample_dir() / "corpus")
        print(f"indexed the sample corpus in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    from svc_server import Server

    rows = []
    server = Server(index, "--rate", "0", "--timeout", "120")
    try:
        for path, make in (("/v1/search", lambda q: {"query": q, "k": 10}), ("/v1/ask", lambda q: {"question": q})):
            asyncio.run(level(server.url, path, [make(q) for q in qs], 4))  # warm-up: every question once
            for li, n in enumerate(levels):
                bodies = [make(t) for t in texts(qs, args.requests, (li + 1) * 100_000, args.repeat)]
                rows.append({"endpoint": path, "clients": n, **asyncio.run(level(server.url, path, bodies, n))})
                print(f"{path} x{n}: {rows[-1]}", file=sys.stderr)
    finally:
        server.stop()
    peer = in_process(index, qs, args.requests, args.repeat)
    for name, r in peer.items():
        rows.append({"endpoint": f"in-process {name} (peer, no HTTP)", "clients": 1, **r})
    if tmp is not None:
        tmp.cleanup()
    if args.json:
        print(
            json.dumps(
                {"cpus": os.cpu_count(), "requests": args.requests, "repeat": args.repeat, "rows": rows}, indent=2
            )
        )
        return
    print(f"{'endpoint':<36} {'clients':>7} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'q/s':>7} {'errors':>6}")
    for r in rows:
        print(
            f"{r['endpoint']:<36} {r['clients']:>7} {r['n']:>5} {r['p50_ms']:>8} {r['p95_ms']:>8} {r['qps']:>7} {r['errors']:>6}"
        )


if __name__ == "__main__":
    main()
