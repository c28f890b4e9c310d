"""Sanity-check the t1 training question set against its two corpora (no system code involved).

For every question, each expected_answer span must occur (after the grader's normalisation:
lowercase, drop `` ` * _ [ ] ( ) { } ``, collapse whitespace) in the rendered text of at least one
expected document, within a single line of that text (no span crosses a line break) and in ASCII
only (no curly quotes or other typographic characters); a span also found in a document outside
expected_docs is reported as a note.
It also checks ids are unique, kinds are in_scope, categories are known and spans are 3-12 words.

Rendering (the same as ``bench/unseen/check_spans.py``): ``.txt`` as is; ``.html`` with
BeautifulSoup's ``get_text`` over ``<body>`` (block elements end a line, table cells are followed
by `` | ``).  The corpora are ``libpng/`` and ``pcre2/`` under the shared training root
(default ``~/.cache/citewise/train``, laid out by ``fetch.py``); other training sets' folders
under the same root are not read.

Usage: python3 check_spans.py [corpus_root]             (needs bs4)
       python3 check_spans.py --grep WORD [corpus_root]  (which documents contain WORD, normalised)
       python3 check_spans.py --dump DOC [corpus_root]   (print a document's rendered text)
"""

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent
DEFAULT_ROOT = Path.home() / ".cache/citewise/train"
CORPORA = ("libpng", "pcre2")
CATEGORIES = {"option", "default", "code", "table", "definition", "prose", "identifier"}


def norm(s):
    s = s.lower()
    for ch in "`*_[](){}":
        s = s.replace(ch, "")
    return re.sub(r"\s+", " ", s).strip()


def render(path):
    if path.suffix == ".txt":
        return path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":
        import bs4

        soup = bs4.BeautifulSoup(path.read_text(encoding="utf-8", errors="replace"), "html.parser")
        body = soup.find("body") or soup
        for t in body.find_all(["p", "li", "h1", "h2", "h3", "h4", "h5", "pre", "tr", "dt", "dd", "br", "div"]):
            t.append("\n")
        for t in body.find_all(["td", "th"]):
            t.append(" | ")
        return body.get_text()
    raise ValueError(f"unknown document type: {path}")


def documents(root):
    for corpus in CORPORA:
        for p in sorted((root / corpus).rglob("*.*")):
            if p.is_file() and p.suffix in (".txt", ".html"):
                yield p.relative_to(root).with_suffix("").as_posix(), p


def main(argv):
    mode = None
    if argv[:1] in (["--grep"], ["--dump"]):
        mode, arg, argv = argv[0], argv[1], argv[2:]
    root = Path(argv[0]) if argv else DEFAULT_ROOT
    paths = dict(documents(root))
    if mode == "--dump":
        print(render(paths[arg]))
        return 0
    rendered = {d: render(p) for d, p in paths.items()}
    text = {d: norm(t) for d, t in rendered.items()}
    lines = {d: {norm(l) for l in t.splitlines() if l.strip()} for d, t in rendered.items()}
    if mode == "--grep":
        w = norm(arg)
        hits = [d for d, t in text.items() if w in t]
        print(f"{arg!r}: {len(hits)} docs", *hits[:20], sep="\n  ")
        return 0
    qs = [json.loads(l) for l in (HERE / "questions-t1.jsonl").read_text().splitlines() if l.strip()]
    bad = notes = 0
    ids = set()
    for q in qs:
        if q["id"] in ids:
            bad += 1
            print("DUPLICATE ID", q["id"])
        ids.add(q["id"])
        if q.get("kind") != "in_scope" or q.get("category") not in CATEGORIES or q.get("corpus") not in CORPORA:
            bad += 1
            print("BAD KIND, CATEGORY OR CORPUS", q["id"])
        if not q["expected_docs"] or not q["expected_answer"] or not q["text"].strip():
            bad += 1
            print("NO TEXT, DOCS OR SPANS", q["id"])
        for d in q["expected_docs"]:
            if d not in text:
                bad += 1
                print("UNKNOWN DOC", q["id"], d)
        for a in q["expected_answer"]:
            n = len(a.split())
            if not 3 <= n <= 12:
                bad += 1
                print("SPAN OF", n, "WORDS", q["id"], repr(a))
            if not a.isascii():
                bad += 1
                print("SPAN NOT ASCII", q["id"], repr(a))
            hits = {d for d, t in text.items() if norm(a) in t}
            if not hits & set(q["expected_docs"]):
                bad += 1
                print("SPAN NOT FOUND", q["id"], repr(a))
            elif not any(norm(a) in l for d in hits & set(q["expected_docs"]) for l in lines[d]):
                bad += 1
                print("SPAN CROSSES A LINE BREAK", q["id"], repr(a))
            elif hits - set(q["expected_docs"]):
                notes += 1
                print("note: span also in", q["id"], repr(a), sorted(hits - set(q["expected_docs"])))
    print(f"{len(qs)} questions, {len(text)} documents, {bad} problems, {notes} notes")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
