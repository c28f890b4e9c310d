"""Measure how a citewise checkout reads a corpus's structure: headings and navigation per format.

Runs the checkout's loaders and chunker over a folder (nothing is ingested, no index is made) and
prints, per document format: documents, chunks, the share of chunks whose heading path goes deeper
than the document title (a heading repeating the one above it counts once), and the share of chunks that contain navigation or page furniture.

Furniture is detected here, independently of the loaders' own rules, from the chunk texts:

* ``navbar``: a line of at most 12 words holding two different navigation words (Prev,
  Previous, Next, Up, Home, Top, Contents, Index) or three arrows (``<<``, ``<``, ``>``, ``>>``),
  and little else; table pipes and brackets ignored: ``Prev | Up | Next``, ``[ << ] [ < ] [ Up ] [ > ]``,
  ``Next: Foo, Previous: Bar, Up: Baz``;
* ``selflink``: a list item, or a line standing alone between blank lines, that is only links to
  places in the same document: ``[Back to TOC](#table-of-contents)``, ``* [Installation](#installation)``;
* ``breadcrumb``: three or more short segments joined by ``>``, ``›``, ``»`` or ``/``;
* ``pagenum``: a line that is only a page number (``12``, ``xiv``, ``Page 3``, ``3 of 40``), not
  a table row;
* ``toc``: a dot-leader line (``Installing ....... 12``), three consecutive lines that are only a
  section number and a short title, or one line holding three or more numbered titles;
* ``repeated``: page chrome, a line of two or more words that repeats *in place*: found at the
  same place among the first or last :data:`EDGE_LINES` such lines of at least half of a format's
  documents (three or more), as a site's header and footer lines are; or, with only its digits
  changing (three or more forms: a running header with its page number), in at least 5 chunks
  and 10% of the chunks of one paged document (PDF). Never counted: lines in code and HTML
  comments, headings (``#`` and setext), table rules, and the lines of a field list (two or more
  adjacent ``key: value`` lines, ``**default:** *no*``, ``:Revision: 1.2``), which a document
  repeats for its own sake wherever they stand.

The ``repeated`` rule counts a line only where documents repeat it in the same place because
content repeats too (a directive's ``**context:** *http, server*``, "For instance,", a licence):
labelled by hand, such lines are content (``bench/structure/audit.py``).

Usage (any checkout: put its ``src`` first on the path)::

    PYTHONPATH=/path/to/checkout/src python bench/structure/measure.py CORPUS_DIR [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

NAV_WORDS = {"prev", "previous", "next", "up", "home", "top", "contents", "index", "<<", "<", ">", ">>"}
_BREADCRUMB = re.compile(r"^[^.!?]{1,40}(?:\s[>›»/]\s[^.!?]{1,40}){2,}$")
_PAGENUM = re.compile(r"^[\s\-–—]*(?:page\s+)?(?:[0-9]{1,5}|[ivxl]{1,6})(?:\s*(?:of|/)\s*[0-9]{1,5})?[\s\-–—]*$", re.I)
_LEADERS = re.compile(r"(?:\.\s?){5,}\s*(?:[0-9]+|[ivxlc]+)\s*$", re.I)
_SECTION_LINE = re.compile(r"^[\s\-*]*(?:chapter\s+)?(?:[0-9]{1,3}(?:\.[0-9]{1,3})*|[A-Z](?:\.[0-9]{1,3})+)\.?\s+[A-Z]")
_NUMBERED_TITLE = re.compile(r"(?:^|[\s/*(])(?:[0-9]{1,3}\.(?:[0-9]{1,3}\.?)*)\s+[A-Z]")
_FENCE = re.compile(r"^\s*(```|~~~)")
#: A line (or list item) made only of links to fragments of the same document.
_SELFLINK = re.compile(r"^(?:[-*+]\s+|\d{1,3}[.)]\s+)?(?:\[[^\]]+\]\(#[^)\s]*\)[\s,;|·•–-]*)+$")
#: A field line: a short key, a colon, a value (``**default:** *no*``, ``:Revision: 1.2``, ``Port: 80``).
_FIELD = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__|:)?[A-Za-z][\w .()/-]{0,30}?(?::\*\*|:__|:)\s*\S")
#: A setext heading's underline.
_UNDERLINE = re.compile(r"^\s{0,3}(?:=+|-+)\s*$")
#: How many lines at each end of a document the ``repeated`` rule looks at.
EDGE_LINES = 3


def _lines(text: str) -> list[tuple[str, bool]]:
    """(line, inside a fenced code block or an HTML comment) for each line: such lines are
    neither navigation nor text (Node's ``<!-- YAML`` history blocks)."""
    out, code, comment = [], False, False
    for ln in text.split("\n"):
        if not code and (comment or ln.lstrip().startswith("<!--")):
            comment = "-->" not in ln
            out.append((ln, True))
            continue
        if _FENCE.match(ln):
            code = not code
            out.append((ln, True))
            continue
        out.append((ln, code))
    return out


def _depth(path) -> int:
    """Headings in a heading path, a heading that repeats the one above it (a page whose
    ``<h1>`` repeats its title) counted once."""
    out: list[str] = []
    for h in path:
        if h and (not out or " ".join(h.split()).casefold() != out[-1]):
            out.append(" ".join(h.split()).casefold())
    return len(out)


def _plain_lines(text: str) -> list[str]:
    """Lines of two or more words outside code, headings (``#`` and setext), table separator
    lines and field lists (two or more adjacent field lines)."""
    lines = _lines(text)
    nonblank = [i for i, (ln, _) in enumerate(lines) if ln.strip()]
    field = {i for i in nonblank if not lines[i][1] and _FIELD.match(lines[i][0])}
    in_list = {
        i
        for k, i in enumerate(nonblank)
        if i in field and {nonblank[k - 1] if k else -1, nonblank[k + 1] if k + 1 < len(nonblank) else -1} & field
    }
    out = []
    for i, (ln, code) in enumerate(lines):
        if code or len(ln.split()) < 2 or ln.lstrip().startswith("#") or re.fullmatch(r"[\s|:-]*", ln):
            continue
        if i + 1 < len(lines) and _UNDERLINE.match(lines[i + 1][0]) or i in in_list:
            continue
        out.append(ln)
    return out


def _norm(line: str) -> str:
    s = re.sub(r"^[#>\s*|-]+", "", line)
    s = re.sub(r"\d+", "#", " ".join(s.replace("|", " ").split())).casefold()
    return s


def line_flags(text: str) -> list[tuple[str, str]]:
    """``(kind, line)`` for each line of one chunk text that a line rule flags (see the module
    docstring; ``repeated`` needs the other documents and is not here)."""
    flags: list[tuple[str, str]] = []
    run = 0
    lines = _lines(text)
    for i, (ln, code) in enumerate(lines):
        s = ln.strip().strip("|").strip()
        if code or not s:
            run = 0
            continue
        words = s.split()
        toks = [w.strip("[](),:;|*").lower() for w in words]
        nav = sum(t in NAV_WORDS for t in toks)
        named = len({t for t in toks if t in NAV_WORDS and t.isalpha()})
        if (
            len(words) <= 12
            and (named >= 2 or nav - named >= 3)
            and nav * 2 >= len([t for t in toks if t.isalpha()]) - 6
        ):
            flags.append(("navbar", ln))
        elif _SELFLINK.match(s) and (
            re.match(r"\s*(?:[-*+]|\d{1,3}[.)])\s", ln)  # a list item
            or not ((i and lines[i - 1][0].strip()) or (i + 1 < len(lines) and lines[i + 1][0].strip()))
        ):  # or a paragraph of its own, not a line of a longer one
            flags.append(("selflink", ln))
        elif _BREADCRUMB.match(s) and len(words) <= 12:
            flags.append(("breadcrumb", ln))
        elif _PAGENUM.match(s) and not ln.lstrip().startswith("|"):
            flags.append(("pagenum", ln))
        elif _LEADERS.search(s):
            flags.append(("toc", ln))
        elif len(_NUMBERED_TITLE.findall(s)) >= 3 and not s.endswith("."):
            flags.append(("toc", ln))
        if _SECTION_LINE.match(s) and len(words) <= 10 and not s.endswith((".", ":", ",")) and not ln.startswith("#"):
            run += 1
            if run == 3:
                flags.append(("toc", ln))
        else:
            run = 0
    return flags


def line_kinds(text: str) -> Counter:
    """Furniture kinds found in one chunk text (see module docstring; ``repeated`` is not here)."""
    return Counter(kind for kind, _ in line_flags(text))


def measure(root: Path) -> dict:
    """Per format: documents, chunks, deep and furniture shares, furniture kinds, seconds."""
    from citewise.text.chunker import Chunker
    from citewise.text.loaders import load_folder

    t0 = time.perf_counter()
    docs = [d for d in load_folder(root) if hasattr(d, "text")]
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    per_doc = [(d, Chunker().chunk(d.doc_id, d.title, d.text)) for d in docs]
    chunk_s = time.perf_counter() - t0
    return {"corpus": str(root), "formats": figures(per_doc), "load_s": round(load_s, 1), "chunk_s": round(chunk_s, 1)}


def chunk_flags(per_doc: list) -> list[tuple[object, object, list[tuple[str, str]]]]:
    """``(document, chunk, [(kind, line), ...])`` for every chunk of ``[(document, its chunks),
    ...]`` (documents need ``doc_id``, ``format``, ``text`` and ``pages``; chunks ``text``); an empty list
    when the measure flags nothing in the chunk. ``repeated`` is judged among the documents of
    the chunk's format."""
    by_format: dict[str, list] = defaultdict(list)
    for d, chunks in per_doc:
        by_format[d.format].append((d, chunks))
    out = []
    for _fmt, items in sorted(by_format.items()):
        # lines found in the same place near the start or end of at least half of this format's
        # documents (three or more)
        placed: Counter = Counter()
        for d, _ in items:
            got = [_norm(ln) for ln in _plain_lines(d.text)]
            placed.update(
                {(k, "start", i) for i, k in enumerate(got[:EDGE_LINES])}
                | {(k, "end", i) for i, k in enumerate(reversed(got[-EDGE_LINES:]))}
            )
        need = max(3, len(items) / 2)
        common = {k for (k, _, _), n in placed.items() if n >= need} if len(items) >= 3 else set()
        for d, chunks in items:
            # a line repeated through one (paged) document with only its digits changing: a running
            # header or footer with its page number
            in_chunks: Counter = Counter()
            forms: dict[str, set[str]] = defaultdict(set)
            for c in chunks:
                got = _plain_lines(c.text)
                in_chunks.update({_norm(ln) for ln in got})
                for ln in got:
                    forms[_norm(ln)].add(ln.strip())
            heavy = {
                k for k, n in in_chunks.items() if n >= 5 and n >= 0.1 * len(chunks) and len(forms[k]) >= 3 and d.pages
            }
            for c in chunks:
                flags = line_flags(c.text)
                flags += [("repeated", ln) for ln in _plain_lines(c.text) if _norm(ln) in common or _norm(ln) in heavy]
                out.append((d, c, flags))
    return out


def figures(per_doc: list) -> dict:
    """The per-format figures of ``[(document, its chunks), ...]`` (documents need ``doc_id``,
    ``format`` and ``pages``; chunks ``text`` and ``heading_path``)."""
    rows: dict[str, dict] = {}
    docs: dict[str, set] = defaultdict(set)
    for d, c, flags in chunk_flags(per_doc):
        r = rows.setdefault(d.format, {"chunks": 0, "deep": 0, "furnished": 0, "kinds": Counter(), "examples": {}})
        docs[d.format].add(d.doc_id)
        r["chunks"] += 1
        r["deep"] += _depth(c.heading_path) > 1
        if flags:
            r["furnished"] += 1
            for kind in dict.fromkeys(k for k, _ in flags):
                r["kinds"][kind] += 1
                r["examples"].setdefault(kind, next(ln for k, ln in flags if k == kind).strip()[:80])
    for d, _ in per_doc:  # a document without chunks still counts as a document
        docs[d.format].add(d.doc_id)
        rows.setdefault(d.format, {"chunks": 0, "deep": 0, "furnished": 0, "kinds": Counter(), "examples": {}})
    out = {}
    for fmt, r in sorted(rows.items()):
        n = r["chunks"]
        out[fmt] = {
            "documents": len(docs[fmt]),
            "chunks": n,
            "deeper_than_title": round(r["deep"] / n, 3) if n else 0.0,
            "with_furniture": round(r["furnished"] / n, 3) if n else 0.0,
            "chunks_by_kind": dict(sorted(r["kinds"].items())),
            "examples": r["examples"],
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args()
    res = measure(args.corpus)
    if args.json:
        print(json.dumps(res, indent=1, ensure_ascii=False))
        return
    print(f"{res['corpus']} (load {res['load_s']} s, chunk {res['chunk_s']} s)")
    print(f"{'format':<10} {'docs':>5} {'chunks':>7} {'deeper':>7} {'furniture':>9}  kinds (chunks)")
    for fmt, r in res["formats"].items():
        kinds = ", ".join(f"{k} {v}" for k, v in r["chunks_by_kind"].items())
        print(
            f"{fmt:<10} {r['documents']:>5} {r['chunks']:>7} {r['deeper_than_title']:>7.1%} "
            f"{r['with_furniture']:>9.1%}  {kinds}"
        )
        for k, ex in r["examples"].items():
            print(f"{'':<10}   e.g. {k}: {ex}")


if __name__ == "__main__":
    sys.exit(main())
