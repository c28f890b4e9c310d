"""Sanity-check the real-docs question set against the corpus (no system code involved).

For every in-scope question, each expected_answer span must occur (after the grader's
normalisation) in the rendered text of at least one expected doc.  For every question
it also reports canonical docs outside expected_docs that contain a span, and for
false-premise questions nothing is checked automatically (see README: names were
grepped by hand).

Usage: python check_spans.py [corpus_root]   (needs bs4 and pypdf)
"""

import glob
import json
import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path.home() / ".cache/citewise/realdocs")
HERE = Path(__file__).parent


def norm(s):
    s = s.lower()
    for ch in "`*_[](){}":
        s = s.replace(ch, "")
    return re.sub(r"\s+", " ", s).strip()


def render(doc):
    if doc.startswith("nodejs/"):
        t = (ROOT / f"{doc}.md").read_text()
        t = re.sub(r"\]\[[^\]]*\]", "]", t)
        return re.sub(r"\]\([^)]*\)", "]", t)
    if doc.startswith("rustc/"):
        import bs4

        soup = bs4.BeautifulSoup((ROOT / f"{doc}.html").read_text(), "html.parser")
        main = soup.find("main") or soup
        for t in main.find_all(["p", "li", "h1", "h2", "h3", "h4", "h5", "pre", "tr", "dt", "dd", "br"]):
            t.append("\n")
        for t in main.find_all(["td", "th"]):
            t.append(" | ")
        return main.get_text()
    import pypdf

    return "\n".join(p.extract_text() or "" for p in pypdf.PdfReader(str(ROOT / f"{doc}.pdf")).pages)


def main():
    qs = []
    for f in sorted(p.name for p in HERE.glob("questions-*.jsonl")):
        qs += [json.loads(l) for l in (HERE / f).read_text().splitlines() if l.strip()]
    docs = sorted(
        str(Path(p).relative_to(ROOT).with_suffix(""))
        for p in glob.glob(str(ROOT / "**/*.*"), recursive=True)
        if not p.endswith("print.html")
    )
    text = {d: norm(render(d)) for d in docs}
    bad = 0
    for q in qs:
        for d in q["expected_docs"]:
            if d not in text:
                bad += 1
                print("UNKNOWN DOC", q["id"], d)
        for a in q["expected_answer"]:
            hits = {d for d in docs if norm(a) in text[d]}
            if not hits & set(q["expected_docs"]):
                bad += 1
                print("SPAN NOT FOUND", q["id"], repr(a))
            elif hits - set(q["expected_docs"]):
                print("note: span also in", q["id"], sorted(hits - set(q["expected_docs"])))
    print(f"{len(qs)} questions, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
