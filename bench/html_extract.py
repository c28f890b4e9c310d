"""Measure HTML main-content extraction on an mdBook site (default: the rustc book from
bench/realdocs/fetch.py): boilerplate chunks left, main text kept, headings, tables, code blocks.

    python bench/html_extract.py [SITE_DIR] [--old-ref COMMIT] [--trafilatura]

Boilerplate markers are mdBook chrome strings that never belong to a page's content (menu title,
theme list, search box, "Keyboard shortcuts" help). Text kept = share of the word tokens of the
page's ``<main>`` (scripts removed) found in the extracted text (multiset).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from bs4 import BeautifulSoup

from citewise.text.chunker import Chunker

MARKERS = [
    "Keyboard shortcuts",
    "Light (default)",
    "Toggle Table of Contents",
    "Search this book",
    "Print this book",
    "Previous chapter",
    "Next chapter",
]


def main_words(html: str) -> Counter:
    soup = BeautifulSoup(html, "lxml")
    for t in soup(["script", "style"]):
        t.decompose()
    m = soup.find("main") or soup.body
    return Counter(re.findall(r"\w+", m.get_text(" ").lower()))


def measure(name, convert, pages, chunker):
    boiler = chunks = 0
    kept = total = 0
    heads = heads_ref = tables = tables_ref = pres = pres_ref = 0
    for p in pages:
        html = p.read_text()
        text = convert(html)
        soup = BeautifulSoup(html, "lxml")
        main = soup.find("main") or soup.body
        heads_ref += len(main.find_all(re.compile(r"^h[1-6]$")))
        tables_ref += len(main.find_all("table"))
        pres_ref += len([x for x in main.find_all("pre") if x.find_parent("pre") is None])
        prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
        heads += len(re.findall(r"^#{1,6} ", prose, re.M))
        tables += len(re.findall(r"^\|[ :-]*-{3,}", text, re.M))
        pres += len(re.findall(r"^```", text, re.M)) // 2
        ref = main_words(html)
        got = Counter(re.findall(r"\w+", text.lower()))
        total += sum(ref.values())
        kept += sum(min(c, got[w]) for w, c in ref.items())
        for c in chunker.chunk(p.stem, p.stem, text):
            chunks += 1
            if any(mk.lower() in c.indexed_text.lower() for mk in MARKERS):
                boiler += 1
    print(
        f"{name:12s} chunks {chunks:4d}  boilerplate chunks {boiler:3d}  main text kept {kept / total:.3f}  "
        f"headings {heads}/{heads_ref}  tables {tables}/{tables_ref}  code blocks {pres}/{pres_ref}"
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("site", nargs="?", default=str(Path.home() / ".cache/citewise/realdocs/rustc"))
    ap.add_argument("--trafilatura", action="store_true")
    ap.add_argument("--old", help="path to a module file holding the old html_to_markdown")
    args = ap.parse_args()
    pages = sorted(Path(args.site).rglob("*.html"))
    chunker = Chunker()
    from citewise.text.html import html_to_markdown

    if args.old:
        import importlib.util

        spec = importlib.util.spec_from_file_location("old_loaders", args.old)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        measure("old loader", lambda h: mod.html_to_markdown(h)[0], pages, chunker)
    measure("bs4 walk", lambda h: html_to_markdown(h)[0], pages, chunker)
    if args.trafilatura:
        import trafilatura

        measure(
            "trafilatura",
            lambda h: (
                trafilatura.extract(
                    h,
                    output_format="markdown",
                    include_tables=True,
                    include_formatting=True,
                    favor_recall=True,
                    include_comments=False,
                )
                or ""
            ),
            pages,
            chunker,
        )
    print(f"{len(pages)} pages", file=sys.stderr)


if __name__ == "__main__":
    main()
