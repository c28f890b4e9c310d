"""Shingle overlap on an HTML site (default: the rustc book): which documents find_duplicates
flags, the coverage of each page by the smaller pages that lie inside it, and the highest Jaccard
between two distinct pages, to show how far the thresholds in citewise.text.dedup are from both.

    python bench/dedup_rustc.py [SITE_DIR]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from citewise.text.dedup import PART_CONTAINMENT, find_duplicates, shingles
from citewise.text.loaders import load_folder


def main():
    site = Path(sys.argv[1] if len(sys.argv) > 1 else Path.home() / ".cache/citewise/realdocs/rustc")
    docs = [d for d in load_folder(site) if not isinstance(d, Exception)]
    t = time.perf_counter()
    dups = find_duplicates(docs)
    took = time.perf_counter() - t
    for d in dups:
        print(d.line()[:200])
    sets = {d.doc_id: shingles(d.text) for d in docs}
    cov, jac = [], []
    for a, sa in sets.items():
        covered = set()
        for b, sb in sets.items():
            if a != b and len(sb) < len(sa) and len(sa & sb) >= PART_CONTAINMENT * len(sb):
                covered |= sa & sb
            if a < b and sa and sb:
                jac.append((len(sa & sb) / len(sa | sb), a, b))
        cov.append((len(covered) / max(1, len(sa)), a))
    cov.sort(reverse=True)
    jac.sort(reverse=True)
    print(f"{len(docs)} documents, find_duplicates {took:.3f}s")
    print("coverage by smaller parts, top 3:", [(round(c, 3), a) for c, a in cov[:3]])
    print("Jaccard, top 3 pairs:", [(round(j, 3), a, b) for j, a, b in jac[:3]])


if __name__ == "__main__":
    main()
