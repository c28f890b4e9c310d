"""Multi-hop ("across sections") recall per retriever: recall@10 and the share of questions with
*every* needed section in the top 10 (all-needed@10), with paired p-values vs the first arm.

    python bench/structure/multihop.py bench/structure/multihop_sample.jsonl --index IDX \
        --retrievers hybrid,bm25,dense,shipped,hierarchical,raptor-collapsed,raptor-tree
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from citewise.evaluation.harness import compare_golden, parse_retrievers
from citewise.evaluation.significance import randomization_test
from citewise.index import Index


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("golden")
    ap.add_argument("--index", required=True)
    ap.add_argument("--retrievers", default="hybrid,bm25,dense,shipped,hierarchical")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    idx = Index.open(a.index)
    arms = parse_retrievers(a.retrievers)
    t0 = time.perf_counter()
    c = compare_golden(idx, a.golden, arms, metrics=["recall@10", "ndcg@10"], permutations=10_000)
    qids = sorted(c.per_query[arms[0]])
    allk = {arm: np.array([float(c.per_query[arm][q]["recall@10"] == 1.0) for q in qids]) for arm in arms}
    rows = []
    for arm in arms:
        p_all = None if arm == arms[0] else float(randomization_test(allk[arms[0]], allk[arm])[0])
        rows.append(
            {
                "retriever": arm,
                "recall@10": c.means[arm]["all"]["recall@10"],
                "all_needed@10": float(allk[arm].mean()),
                "ndcg@10": c.means[arm]["all"]["ndcg@10"],
                "p_recall@10": None if arm == arms[0] else c.deltas[arm]["all"]["recall@10"]["p"],
                "p_all_needed@10": p_all,
            }
        )
    if a.json:
        print(
            json.dumps(
                {
                    "golden": a.golden,
                    "index": a.index,
                    "embedder": idx.embedder.name,
                    "queries": len(qids),
                    "rows": rows,
                    "seconds": round(time.perf_counter() - t0, 1),
                }
            )
        )
        return
    print(f"{a.golden} · {len(qids)} questions · {idx.embedder.name} · p vs {arms[0]} (paired randomisation)")
    print(f"{'retriever':18s} {'recall@10':>9s} {'p':>7s} {'all-needed@10':>13s} {'p':>7s} {'nDCG@10':>8s}")
    for r in rows:
        fmt = lambda p: "" if p is None else f"{p:.3f}"  # noqa: E731
        print(
            f"{r['retriever']:18s} {r['recall@10']:9.3f} {fmt(r['p_recall@10']):>7s} {r['all_needed@10']:13.3f} "
            f"{fmt(r['p_all_needed@10']):>7s} {r['ndcg@10']:8.3f}"
        )


if __name__ == "__main__":
    main()
