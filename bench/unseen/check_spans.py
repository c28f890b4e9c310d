"""Sanity-check the unseen question set against its four corpora (no system code involved).

For every in-scope question, each expected_answer span must occur (after the grader's
normalisation) in the rendered text of at least one expected doc.  For every question it also
reports documents outside expected_docs that contain a span.  Out-of-scope and false-premise
questions have no spans; their names were grepped by hand (see README) and ``--grep`` helps.

Rendering (the same as for the real-docs set): ``.txt`` as is; ``.md`` with link targets
(``](...)``, ``][...]``) removed; ``.html`` with BeautifulSoup's ``get_text`` over ``<body>``
(block elements end a line, table cells are followed by `` | ``); ``.pdf`` with pypdf, pages
joined by a newline.

Usage: python check_spans.py [corpus_root]            (needs bs4 and pypdf)
       python check_spans.py --grep WORD [corpus_root] (which documents contain WORD, normalised)
"""

import json
import logging
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent
DEFAULT_ROOT = Path.home() / ".cache/citewise/unseen"


def norm(s):
    s = s.lower()
    for ch in "`*_[](){}":
        s = s.replace(ch, "")
    return re.sub(r"\s+", " ", s).strip()


def render(path):
    suffix = path.suffix
    if suffix == ".txt":
        return path.read_text(encoding="utf-8", errors="replace")
    if suffix == ".md":
        t = path.read_text(encoding="utf-8", errors="replace")
        t = re.sub(r"\]\[[^\]]*\]", "]", t)
        return re.sub(r"\]\([^)]*\)", "]", t)
    if suffix == ".html":
        import bs4

        soup = bs4.BeautifulSoup(path.read_text(encoding="utf-8", errors="replace"), "html.parser")
        body = soup.find("body") or soup
        for t in body.find_all(["p", "li", "h1", "h2", "h3", "h4", "h5", "pre", "tr", "dt", "dd", "br", "div"]):
            t.append("\n")
        for t in body.find_all(["td", "th"]):
            t.append(" | ")
        return body.get_text()
    if suffix == ".pdf":
        import pypdf

        logging.disable(logging.WARNING)  # pypdf's font warnings
        return "\n".join(p.extract_text() or "" for p in pypdf.PdfReader(str(path)).pages)
    raise ValueError(f"unknown document type: {path}")


def load_corpus(root):
    docs = {}
    for p in sorted(root.rglob("*.*")):
        if p.is_file() and p.suffix in (".txt", ".md", ".html", ".pdf"):
            docs[p.relative_to(root).with_suffix("").as_posix()] = norm(render(p))
    return docs


def main(argv, here=HERE, default_root=DEFAULT_ROOT):
    """Check the question files ``here/questions-*.jsonl`` against ``argv[0]`` (or
    ``default_root``); returns the exit status (1 when a span is missing)."""
    grep = None
    if argv[:1] == ["--grep"]:
        grep, argv = argv[1], argv[2:]
    root = Path(argv[0]) if argv else default_root
    text = load_corpus(root)
    if grep is not None:
        w = norm(grep)
        hits = [d for d, t in text.items() if w in t]
        print(f"{grep!r}: {len(hits)} docs", *hits[:20], sep="\n  ")
        return 0
    qs = []
    for f in sorted(here.glob("questions-*.jsonl")):
        qs += [json.loads(l) for l in f.read_text().splitlines() if l.strip()]
    bad = notes = 0
    ids = set()
    for q in qs:
        if q["id"] in ids:
            bad += 1
            print("DUPLICATE ID", q["id"])
        ids.add(q["id"])
        if q["kind"] == "in_scope" and (not q["expected_docs"] or not q["expected_answer"]):
            bad += 1
            print("IN-SCOPE WITHOUT DOCS OR SPANS", q["id"])
        if q["kind"] != "in_scope" and (q["expected_docs"] or q["expected_answer"]):
            bad += 1
            print("NOT IN SCOPE BUT HAS DOCS OR SPANS", q["id"])
        for d in q["expected_docs"]:
            if d not in text:
                bad += 1
                print("UNKNOWN DOC", q["id"], d)
        for a in q["expected_answer"]:
            n = len(a.split())
            if not 3 <= n <= 12:
                print("note: span of", n, "words", q["id"], repr(a))
            hits = {d for d, t in text.items() if norm(a) in t}
            if not hits & set(q["expected_docs"]):
                bad += 1
                print("SPAN NOT FOUND", q["id"], repr(a))
            elif hits - set(q["expected_docs"]):
                notes += 1
                print("note: span also in", q["id"], repr(a), sorted(hits - set(q["expected_docs"])))
    print(f"{len(qs)} questions, {len(text)} documents, {bad} problems, {notes} notes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
