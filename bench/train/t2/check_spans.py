"""Sanity-check training set t2 (``questions-t2.jsonl``) against its two corpora (no system code).

For every in-scope question, each expected_answer span must occur (after the grader's
normalisation) in the rendered text of at least one expected doc, be 3-12 words long and lie on
one line of that rendered text.  It also reports documents outside expected_docs that contain a
span (the shared root ``~/.cache/citewise/train`` may hold other training sets' corpora too;
all of them are searched).

Rendering (as ``bench/unseen/check_spans.py`` and the real-docs grader): ``.txt`` as is; ``.md``
with link targets (``](...)``, ``][...]``) removed; ``.html`` with BeautifulSoup's ``get_text``
over ``<body>`` (block elements end a line, table cells are followed by `` | ``); ``.pdf`` with
pypdf, pages joined by a newline.  Normalisation: lowercase, drop `` ` * _ [ ] ( ) { } ``,
collapse whitespace.

Usage: python check_spans.py [corpus_root]            (needs bs4 and pypdf)
       python check_spans.py --grep WORD [corpus_root] (which documents contain WORD, normalised)
       python check_spans.py --dump DOC [corpus_root]  (print a document's rendered text)
"""

import json
import logging
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent
DEFAULT_ROOT = Path.home() / ".cache/citewise/train"
CORPORA = ("graphviz", "mercurial")
CATEGORIES = {"option", "default", "code", "table", "definition", "prose", "identifier"}


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
    """doc id -> rendered text (not normalised)."""
    docs = {}
    for p in sorted(root.rglob("*.*")):
        if p.is_file() and p.suffix in (".txt", ".md", ".html", ".pdf"):
            docs[p.relative_to(root).with_suffix("").as_posix()] = render(p)
    return docs


def main(argv):
    grep = dump = None
    if argv[:1] == ["--grep"]:
        grep, argv = argv[1], argv[2:]
    elif argv[:1] == ["--dump"]:
        dump, argv = argv[1], argv[2:]
    root = Path(argv[0]) if argv else DEFAULT_ROOT
    raw = load_corpus(root)
    if dump is not None:
        print(raw[dump])
        return 0
    text = {d: norm(t) for d, t in raw.items()}
    lines = {d: [norm(l) for l in t.splitlines()] for d, t in raw.items()}
    if grep is not None:
        w = norm(grep)
        hits = [d for d, t in text.items() if w in t]
        print(f"{grep!r}: {len(hits)} docs", *hits[:20], sep="\n  ")
        return 0
    qs = [json.loads(l) for l in (HERE / "questions-t2.jsonl").read_text().splitlines() if l.strip()]
    bad = notes = 0
    ids = set()
    for q in qs:
        if q["id"] in ids:
            bad += 1
            print("DUPLICATE ID", q["id"])
        ids.add(q["id"])
        if q["kind"] != "in_scope" or q["category"] not in CATEGORIES or q["corpus"] not in CORPORA:
            bad += 1
            print("BAD KIND/CATEGORY/CORPUS", q["id"])
        if not q["expected_docs"] or not q["expected_answer"]:
            bad += 1
            print("IN-SCOPE WITHOUT DOCS OR SPANS", q["id"])
        for d in q["expected_docs"]:
            if d not in text:
                bad += 1
                print("UNKNOWN DOC", q["id"], d)
            elif not d.startswith(q["corpus"] + "/"):
                bad += 1
                print("DOC OUTSIDE CORPUS", q["id"], d)
        for a in q["expected_answer"]:
            n = len(a.split())
            if not 3 <= n <= 12:
                bad += 1
                print("SPAN OF", n, "WORDS", q["id"], repr(a))
            if any(ch in a for ch in "\u2018\u2019\u201c\u201d\ufb00\ufb01\ufb02\ufb03\ufb04"):
                bad += 1
                print("CURLY QUOTE OR LIGATURE IN SPAN", q["id"], repr(a))
            na = norm(a)
            hits = {d for d, t in text.items() if na in t}
            if not hits & set(q["expected_docs"]):
                bad += 1
                print("SPAN NOT FOUND", q["id"], repr(a))
                continue
            if not any(na in l for d in q["expected_docs"] if d in lines for l in lines[d]):
                bad += 1
                print("SPAN CROSSES A LINE BREAK", q["id"], repr(a))
            if hits - set(q["expected_docs"]):
                notes += 1
                print("note: span also in", q["id"], repr(a), sorted(hits - set(q["expected_docs"])))
    print(f"{len(qs)} questions, {len(text)} documents, {bad} problems, {notes} notes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
