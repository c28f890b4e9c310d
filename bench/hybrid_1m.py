"""Hybrid p50/p95 on a large kept index, two checkouts side by side, fresh process each.

Run (an index kept by ``python bench/scale.py --chunks 1000000 --keep DIR``):

    python bench/hybrid_1m.py --index DIR/<size> --code A=/path/to/checkout/src --code B=... \
        [--queries 50] [--rounds 2]

For each round and each ``--code`` (in alternating order, so load drifts hit both alike) a fresh
Python process with ``PYTHONPATH`` set to that checkout opens the index read-only and runs
``hybrid`` (k = 10, the scale bench's queries, :func:`scale.queries`) with the public and the 1%
(``restricted``) filter: the store's ``warm()`` where the checkout has it (what ``citewise serve``
does before accepting requests), one warm-up query, then every query timed. A ``NAME`` ending in ``+cap`` runs with
``LanceStore.ann_cap_probes = True``, ``+capN`` also with ``ann_nprobes = N``, ``+open`` with
``ann_cap_probes = False`` (LanceDB's open probe maximum at every depth: the default before the
twelfth session). Printed per checkout: p50 / p95
ms over all rounds, the load average at the start of each process, how many of the top-10
lists (ids and scores) equal the first checkout's, query by query, and the mean overlap of the
top-10 ids with the first checkout's (|A ∩ B| / 10).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parent
K = 10


def child(index: str, n: int, cap: str) -> dict:
    """In a fresh process: time hybrid public / 1% filter; top-10 (ids, scores) per query.
    ``cap``: "" or "+cap" (set ``LanceStore.ann_cap_probes``: probe exactly the configured IVF
    partitions) or "+capN" (and ``ann_nprobes = N``) or "+open" (``ann_cap_probes = False``)."""
    sys.path.insert(0, str(BENCH))
    import scale
    from citewise.core import Filters, Principal
    from citewise.index import Index

    idx = Index.open(index, read_only=True)
    if cap == "+open":
        idx.store.ann_cap_probes = False
    elif cap:
        idx.store.ann_cap_probes = True
        if cap[len("+cap") :]:
            idx.store.ann_nprobes = int(cap[len("+cap") :])
    qs = scale.queries(n)
    conds = {"public": (None, None), "1% filter": (Principal("r", ("restricted",)), Filters(groups=("restricted",)))}
    t = time.perf_counter()
    if hasattr(idx.store, "warm"):  # what ``citewise serve`` does before accepting requests
        idx.store.warm()
    warm_s = time.perf_counter() - t
    r = idx.retriever("hybrid")
    out = {}
    for cond, (pr, f) in conds.items():
        r.search("warm up " + qs[0], K, principal=pr, filters=f)
        lat, tops = [], []
        for q in qs:
            t = time.perf_counter()
            hits = r.search(q, K, principal=pr, filters=f)
            lat.append(time.perf_counter() - t)
            tops.append([(h.chunk_id, round(h.score, 9)) for h in hits])
        out[cond] = {"lat": lat, "tops": tops, "warm_s": warm_s}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", required=True)
    ap.add_argument(
        "--code",
        action="append",
        required=True,
        help="NAME=path/to/src (PYTHONPATH); a NAME ending in +cap, +capN or +open sets ann_cap_probes",
    )
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._child:
        name = a.code[0].split("=", 1)[0]
        print(json.dumps(child(a.index, a.queries, name[name.index("+") :] if "+" in name else "")))
        return 0
    codes = [c.split("=", 1) for c in a.code]
    res: dict[str, dict] = {name: {} for name, _ in codes}
    loads: dict[str, list] = {name: [] for name, _ in codes}
    for rnd in range(a.rounds):
        for name, src in codes if rnd % 2 == 0 else codes[::-1]:
            loads[name].append(os.getloadavg()[0])
            env = dict(os.environ, PYTHONPATH=src)
            p = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--_child",
                    "--index",
                    a.index,
                    "--queries",
                    str(a.queries),
                    "--code",
                    f"{name}={src}",
                ],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            out = json.loads(p.stdout.strip().splitlines()[-1])
            for cond, d in out.items():
                agg = res[name].setdefault(cond, {"lat": [], "tops": d["tops"], "warm_s": []})
                agg["lat"] += d["lat"]
                agg["warm_s"].append(d["warm_s"])
            print(f"round {rnd + 1} {name} done (load {loads[name][-1]:.1f})", file=sys.stderr, flush=True)
    ref = codes[0][0]
    print(
        f"| hybrid, k={K}, {a.queries} queries x {a.rounds} fresh processes | p50 ms | p95 ms | top-10 = {ref} "
        f"| top-10 overlap with {ref} |"
    )
    print("|---|---:|---:|---:|---:|")
    for cond in ("public", "1% filter"):
        for name, _ in codes:
            lat = np.array(res[name][cond]["lat"]) * 1e3
            pairs = list(zip(res[name][cond]["tops"], res[ref][cond]["tops"]))
            same = sum(x == y for x, y in pairs)
            overlap = np.mean([len({c for c, _ in x} & {c for c, _ in y}) / K for x, y in pairs])
            print(
                f"| {name}, {cond} | {np.percentile(lat, 50):.1f} | {np.percentile(lat, 95):.1f} | {same}/{a.queries} "
                f"| {overlap:.3f} |"
            )
    for name, _ in codes:
        print(
            f"load average (1 min) at each {name} process start: {', '.join(f'{x:.1f}' for x in loads[name])}; "
            f"store warm-up (Store.warm, as serve does) s: "
            f"{', '.join(f'{x:.1f}' for x in res[name]['public']['warm_s'])}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
