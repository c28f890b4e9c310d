"""A read-by-hand audit of navigation and page furniture in chunks, beside measure.py's flags.

``sample`` draws a fixed-seed random sample of chunks per corpus (a corpus is the first folder of
the document id) from the checkout on ``PYTHONPATH``, chunked as ingest chunks them (the
checkout's ``load_folder`` and ``Chunker``, as measure.py does). It writes one JSON line per chunk
with an empty label and the lines measure.py flags in it, and a text file with each chunk's text
to read. A person reads each chunk and fills in ``label``, ``lines`` and ``note``. ``flags``
re-annotates such a file with the lines measure.py flags now (for a revised measure), and
``report`` prints the shares.

Labels (one per chunk; fixed before any chunk was read, and the same for every format):

* ``navigation``: the chunk holds a block (a line, a list, a table, a paragraph) whose only
  content is pointers to other pages or sections, there to move about the document: a table of
  contents or node/chapter menu (section titles, with or without numbers, links, dot leaders or
  page numbers), index entries (terms with their pages or links), prev/next/up/home bars,
  breadcrumbs, "back to top" / "back to contents" links, "[Contents][Index]" links. A
  cross-reference written into the text ("see section 3.2", a sentence pointing to the
  installation instructions, an entry's "See also" line naming related entries) is content: it
  says how this text relates to another.
* ``furniture``: text made by the page layout or the site's template, not by the writing:
  running headers and footers (a title, chapter name, version or date repeated at the top or
  bottom of pages), page-number lines and page numbers fused into the text, footnote markers
  fused to words (``word1``), end-of-line hyphenation left in words (``exam- ple``), site chrome
  repeated on the pages of a site (banners, "edit this page", cookie notices, template footers).
* ``both``: navigation and furniture.
* ``content``: anything the document says for its own sake, however often it repeats: headings,
  prose, code, tables, field lines (``default: no``, ``context: http, server``), a license or
  copyright section written in the document, cross-references in the text. Extraction defects
  that are not layout (dropped ligatures, odd math symbols) are content; ``note`` says so.

``lines`` holds the offending line(s) of a navigation/furniture chunk as they appear in the
chunk text (abridged with ``...`` where long). ``tree`` names the build a record was sampled from
(``audit-2026-12-06.jsonl``: ``before`` the structure work, ``after`` it, ``fixed`` with the
audit's own fixes); ``measure`` holds measure.py's flags under its rules at labelling time,
``measure_revised`` (from ``flags``) under its present rules.

Usage::

    PYTHONPATH=CHECKOUT/src python bench/structure/audit.py sample CORPUS_DIR --tree after \\
        --n 40 --seed 20261206 --out DRAFT.jsonl --text DRAFT.txt
    PYTHONPATH=CHECKOUT/src python bench/structure/audit.py flags CORPUS_DIR AUDIT.jsonl --tree after
    python bench/structure/audit.py report bench/structure/audit-2026-12-06.jsonl

``report`` prints, per corpus and tree, the share of sampled chunks labelled navigation or
furniture with its 95% Wilson score interval (Wilson 1927, "Probable inference, the law of
succession, and statistical inference", JASA 22: 209-212), and how measure.py's flags agree with
the labels: precision (flagged chunks that hold navigation or furniture) and recall (chunks
holding it that are flagged), for the flags of the sample (``measure``) and, where present, of
the revised measure (``measure_revised``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import defaultdict
from pathlib import Path

LABELS = ("content", "navigation", "furniture", "both")
Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval ``(low, high)`` of ``k`` successes in ``n`` trials (``(0, 1)``
    when ``n`` is 0)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z / den * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, mid - half), min(1.0, mid + half)


def _chunks(root: Path) -> list[tuple[str, object, object, dict[str, list[str]]]]:
    """``(corpus, document, chunk, {kind: [flagged lines]})`` for every chunk below ``root``, in
    document-id then chunk order."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from measure import chunk_flags

    from citewise.text.chunker import Chunker
    from citewise.text.loaders import load_folder

    docs = sorted((d for d in load_folder(root) if hasattr(d, "text")), key=lambda d: d.doc_id)
    per_doc = [(d, Chunker().chunk(d.doc_id, d.title, d.text)) for d in docs]
    order = {c.chunk_id: i for i, (_, chunks) in enumerate(per_doc) for c in chunks}
    out = []
    for d, c, flags in chunk_flags(per_doc):
        by_kind: dict[str, list[str]] = defaultdict(list)
        for kind, ln in flags:
            by_kind[kind].append(ln.strip())
        out.append((d.doc_id.split("/")[0], d, c, dict(by_kind)))
    out.sort(key=lambda t: (t[1].doc_id, order[t[2].chunk_id]))
    return out


def sample(args: argparse.Namespace) -> None:
    by_corpus: dict[str, list] = defaultdict(list)
    for row in _chunks(args.corpus):
        by_corpus[row[0]].append(row)
    with open(args.out, "w") as out, open(args.text, "w") as txt:
        for corpus, rows in sorted(by_corpus.items()):
            rng = random.Random(f"{args.seed}/{corpus}")
            picked = sorted(rng.sample(range(len(rows)), min(args.n, len(rows))))
            for i in picked:
                _, d, c, flags = rows[i]
                rec = {
                    "tree": args.tree,
                    "corpus": corpus,
                    "format": d.format,
                    "chunk_id": c.chunk_id,
                    "label": None,
                    "lines": [],
                    "note": "",
                    "measure": flags,
                }
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                txt.write(f"\n===== {args.tree} {c.chunk_id}  path={' > '.join(c.heading_path)}  measure={flags}\n")
                for n, ln in enumerate(c.text.split("\n"), 1):
                    txt.write(f"{n:4} | {ln}\n")
            print(f"{corpus}: {len(picked)} of {len(rows)} chunks", file=sys.stderr)


def flags(args: argparse.Namespace) -> None:
    now = {c.chunk_id: f for _, _, c, f in _chunks(args.corpus)}
    recs = [json.loads(ln) for ln in open(args.audit) if ln.strip()]
    missing = [r["chunk_id"] for r in recs if r["tree"] == args.tree and r["chunk_id"] not in now]
    if missing:
        sys.exit(
            f"{args.audit}: {len(missing)} chunk ids of tree {args.tree!r} not in this checkout, e.g. {missing[0]}"
        )
    with open(args.audit, "w") as out:
        for r in recs:
            if r["tree"] == args.tree:
                r["measure_revised"] = now[r["chunk_id"]]
            out.write(json.dumps(r, ensure_ascii=False) + "\n")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def report(args: argparse.Namespace) -> None:
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for n, ln in enumerate(open(args.audit), 1):
        if not ln.strip():
            continue
        r = json.loads(ln)
        if r.get("label") not in LABELS:
            sys.exit(f"{args.audit}:{n}: label {r.get('label')!r} is not one of {', '.join(LABELS)}")
        groups[(r["corpus"], r["tree"])].append(r)
    trees = sorted({t for _, t in groups}, key=lambda t: (t != "before", t))
    head = f"{'corpus':<10} {'tree':<7} {'n':>3} {'nav':>4} {'furn':>4} {'share':>6}  {'95% Wilson':<15}"
    print(head + "  measure: flagged, precision, recall   revised: flagged, precision, recall")
    for corpus in sorted({c for c, _ in groups}):
        for tree in trees:
            rs = groups.get((corpus, tree), [])
            if not rs:
                continue
            pos = [r["label"] != "content" for r in rs]
            nav = sum(r["label"] in ("navigation", "both") for r in rs)
            furn = sum(r["label"] in ("furniture", "both") for r in rs)
            k = sum(pos)
            lo, hi = wilson(k, len(rs))
            line = f"{corpus:<10} {tree:<7} {len(rs):>3} {nav:>4} {furn:>4} {_pct(k / len(rs)):>6}  {_pct(lo)}–{_pct(hi):<8}"
            for key in ("measure", "measure_revised"):
                if not all(key in r for r in rs):
                    continue
                flagged = [bool(r[key]) for r in rs]
                tp = sum(f and p for f, p in zip(flagged, pos, strict=True))
                prec = f"{tp}/{sum(flagged)}" if any(flagged) else "–"
                rec = f"{tp}/{k}" if k else "–"
                line += f"  {sum(flagged):>3}, {prec:>7}, {rec:>7}"
            print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample", help="draw the sample of the checkout on PYTHONPATH")
    s.add_argument("corpus", type=Path)
    s.add_argument("--tree", required=True, help="a name for the checkout: before, after")
    s.add_argument("--n", type=int, default=40, help="chunks per corpus (default 40)")
    s.add_argument("--seed", default="20261206")
    s.add_argument("--out", type=Path, required=True, help="the JSONL of records to label")
    s.add_argument("--text", type=Path, required=True, help="the chunk texts to read")
    f = sub.add_parser("flags", help="add measure.py's present flags (measure_revised) to a tree's records")
    f.add_argument("corpus", type=Path)
    f.add_argument("audit", type=Path)
    f.add_argument("--tree", required=True)
    r = sub.add_parser("report", help="print the shares of a labelled file")
    r.add_argument("audit", type=Path)
    args = ap.parse_args()
    {"sample": sample, "flags": flags, "report": report}[args.cmd](args)


if __name__ == "__main__":
    main()
