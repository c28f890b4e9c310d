"""PDF files (pypdf, text layer only)."""

from __future__ import annotations

import io
import logging
import re
from pathlib import Path

from citewise.core import Document, InputError
from citewise.text import notes
from citewise.text.loaders.common import _norm, _one_line, _read_bytes, content_hash, doc_id_for
from citewise.text.loaders.pdf_layout import (
    CODE_MARK,
    _TERM_LINE,
    _definitions,
    _fence_code,
    _is_code,
    _page_with_code_marks,
    layout_roles,
)


def _pdf_outline(reader) -> list[tuple[int, int, str]]:
    """Outline entries as (page index, depth 1.., title), in outline order; [] when absent."""
    out: list[tuple[int, int, str]] = []

    def walk(items, depth):
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            title = " ".join(str(getattr(item, "title", "") or "").split())
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # a bookmark pointing nowhere is skipped, not fatal
                page = None
            if title and page is not None and page >= 0:
                out.append((page, depth, title))

    walk(reader.outline or [], 1)
    return out


def _page_text(text: str) -> list[str]:
    """Lines of one extracted page: trailing spaces stripped, runs of blank lines collapsed."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    out: list[str] = []
    for ln in lines:
        if not ln.strip() and (not out or not out[-1].strip()):
            continue
        out.append(ln)
    while out and not out[-1].strip():
        out.pop()
    return out


#: A table-of-contents or index line: a run of dot leaders (``Redirections . . . . . 38``).
_LEADERS = re.compile(r"(?:\.\s?){6,}")
#: A line of glyph codes only (``/x4D /x4C``): what pypdf writes for glyphs its font's encoding
#: does not map to characters (a decorative title font); it holds no text to name a document by.
_UNMAPPED = re.compile(r"(?:/x[0-9A-Fa-f]{2}\s*)+")
#: A section number in front of a heading line: ``4.3.2``, ``Chapter 4:``, ``Appendix C``, ``A.1``.
_SECTION_NO = re.compile(r"^(?:(?:chapter|appendix)\s+)?(?:[0-9]+|[A-Z])(?:\.[0-9]+)*[.:]?\s+", re.I)

#: A line that starts or ends at least this many pages (and at least
#: ``RUNNING_MIN_SHARE`` of them), digits ignored, is a running header or footer.
RUNNING_MIN_PAGES = 3
RUNNING_MIN_SHARE = 0.02


def _running_lines(pages: list[list[str]]) -> set[str]:
    """Normalised running headers/footers: the first or last non-blank line of a page that
    repeats (digits ignored: page numbers) on many pages (:data:`RUNNING_MIN_PAGES`)."""
    from collections import Counter

    counts: Counter[str] = Counter()
    for lines in pages:
        body = [ln for ln in lines if ln.strip()]
        for ln in {*body[:1], *body[-1:]}:
            counts[_digitless(ln)] += 1
    need = max(RUNNING_MIN_PAGES, int(RUNNING_MIN_SHARE * len(pages)))
    return {k for k, n in counts.items() if n >= need and k.strip("# ")}


def _digitless(line: str) -> str:
    return re.sub(r"\d+", "#", _norm(line))


#: A page whose non-blank lines are at least this share dot-leader lines (and at least
#: ``CONTENTS_MIN_LINES`` of them) is a contents or index page.
CONTENTS_SHARE = 0.5
CONTENTS_MIN_LINES = 5


def _contents_page(lines: list[str]) -> bool:
    """Whether a page is a table of contents or an index: mostly dot-leader lines
    (``Redirections . . . . . 38``). Dropping only those lines left the page's title, its roman
    page number and cut entries ("i Table of Contents ii." was quoted as an answer)."""
    body = [ln for ln in lines if ln.strip()]
    leaders = sum(1 for ln in body if _LEADERS.search(ln) and not _is_code(ln))
    return leaders >= CONTENTS_MIN_LINES and leaders >= CONTENTS_SHARE * len(body)


#: A page-number line: ``12``, ``xiv``, ``Page 3``, ``3 of 40``, ``- 7 -``.
_PAGE_NUMBER = re.compile(
    r"^[\s\-–—]*(?:page\s+)?(?:[0-9]{1,5}|[ivxlcdm]{1,8})(?:\s*(?:of|/)\s*[0-9]{1,5})?[\s\-–—]*$", re.I
)
#: A line that is only a section number (``4.3.2``, ``A.1``): the title is on the next line.
_BARE_SECTION_NO = re.compile(r"^(?:[0-9]{1,3}(?:\.[0-9]{1,3})*|[A-Z](?:\.[0-9]{1,3})+)\.?$")


def _clean_page(lines: list[str], running: set[str], page: str = "") -> list[str]:
    """Drop running headers/footers, page-number lines at the top or bottom of the page and
    dot-leader (contents/index) lines; join words hyphenated across a line break
    (``metachar-`` + ``acters``) and a section number alone on its line with the title after it
    (``4.3.2`` / ``The Shopt Builtin``). What is dropped is told to :mod:`citewise.text.notes`
    (``page`` names the page there)."""
    body = [i for i, ln in enumerate(lines) if ln.strip()]
    edge = set(body[:2] + body[-2:])
    ends = set(body[:1] + body[-1:])
    out: list[str] = []
    for i, ln in enumerate(lines):
        why = (
            "running header or footer"
            if i in ends and _digitless(ln) in running
            else "page number"
            if i in edge and _PAGE_NUMBER.match(ln) and not _is_code(ln)
            else "contents or index line (dot leaders)"
            if _LEADERS.search(ln) and not _is_code(ln)
            else ""
        )
        if why:
            notes.dropped(page, "", why, ln)
            continue
        if out and not _is_code(out[-1]) and re.search(r"[a-z]-$", out[-1]) and re.match(r"^[a-z]", ln):
            head, _, tail = ln.partition(" ")
            out[-1] = out[-1][:-1] + head
            if tail.strip():
                out.append(tail)
            continue
        if out and _BARE_SECTION_NO.match(out[-1].strip()) and ln.strip()[:1].isupper() and len(ln.split()) <= 12:
            out[-1] = out[-1].strip() + " " + ln.strip()
            continue
        out.append(ln)
    return out


_RULE_LINE = re.compile(r"^[ \t]{0,3}[=\-]+[ \t]*$")
#: A line set at least this share larger than the document's body size is a heading (when the
#: PDF has no outline), if it is short (:data:`HEADING_MAX_WORDS`) and not a sentence.
HEADING_SIZE = 1.15
HEADING_MAX_WORDS = 12


#: This many lines or more in a row, each set large at one size with no text between, are the
#: labels of a figure (node names of a drawn graph, axis labels), not headings.
FIGURE_LABEL_RUN = 3
_WORD2 = re.compile(r"[^\W\d_]{2}")
#: A heading line opening with a section number: ``4``, ``4.3.2``, ``Chapter 4``, ``Appendix C``
#: (unlike :data:`_SECTION_NO`, not a lone capital letter: a figure's labels are often letters).
_NUMBERED_HEAD = re.compile(r"^(?:(?:chapter|appendix)\s+\w+|(?P<number>[0-9]+(?:\.[0-9]+)*))[.:]?\s+\S", re.I)
#: A section number may skip this many numbers (a heading the size test missed) and still
#: continue the numbering: after ``2``, ``3`` and ``4`` continue it, ``100`` does not.
NUMBER_STEP = 2


def continues_numbering(prev: tuple[int, ...] | None, cur: tuple[int, ...]) -> bool:
    """Whether section number ``cur`` can follow ``prev`` (the last section number taken as a
    heading; None before the first): the next number at some level of ``prev``
    (``2.3`` -> ``2.4`` or ``3``), or a first subsection (``2`` -> ``2.1``); the first numbered
    heading opens a numbering (its last part at most :data:`NUMBER_STEP`). Up to
    :data:`NUMBER_STEP` numbers may be skipped. A figure label such as ``100 times`` in
    section 2 does not continue the numbering.

    >>> continues_numbering((2,), (3,)), continues_numbering((2, 3), (3,)), continues_numbering((2,), (2, 1))
    (True, True, True)
    >>> continues_numbering((2,), (100,)), continues_numbering(None, (100,)), continues_numbering((2, 1), (2, 1))
    (False, False, False)
    """
    if prev is None:
        return cur[-1] <= NUMBER_STEP
    if len(cur) == len(prev) + 1 and cur[:-1] == prev:
        return cur[-1] <= NUMBER_STEP
    i = len(cur) - 1
    return i < len(prev) and cur[:i] == prev[:i] and 1 <= cur[i] - prev[i] <= NUMBER_STEP


def _size_headings(pages: list[list[str]], sizes: list[dict[str, float]], body: float) -> list[dict[str, int]]:
    """Per page, ``{normalised line: heading level}`` for lines set larger than the body size
    (:data:`HEADING_SIZE`); levels by size, largest first (at most 6). A heading holds a word of
    two letters or more or opens with a section number (``5 I/O``); a run of
    :data:`FIGURE_LABEL_RUN` or more unnumbered such lines at one size with nothing between
    them is a figure's labels and yields none. A numbered line heads even in such a run, unless
    its number does not continue the section numbering (:func:`continues_numbering`: a drawn
    graph's ``100 times`` label among its node names in section 2)."""
    found: list[dict[str, float]] = []
    last_number: tuple[int, ...] | None = None
    for lines, size_of in zip(pages, sizes):
        got: dict[str, float] = {}
        run: list[tuple[str, float, bool, tuple[int, ...] | None]] = []  # large lines in a row at one size

        def close() -> None:
            nonlocal last_number
            if len(run) < FIGURE_LABEL_RUN:
                got.update({key: z for key, z, ok, _ in run if ok})
                last_number = next((n for _, _, ok, n in reversed(run) if ok and n), last_number)
            run.clear()

        for ln in lines:
            if not ln.strip():
                continue
            z = size_of.get(_norm(ln), 0.0)
            words = ln.split()
            if z < HEADING_SIZE * body or not 0 < len(words) <= HEADING_MAX_WORDS:
                close()
                continue
            size = round(z * 2) / 2
            head = _NUMBERED_HEAD.match(ln.strip())
            numbered = bool(head)
            number = tuple(int(n) for n in head.group("number").split(".")) if head and head.group("number") else None
            ok = (
                not _is_code(ln) and (numbered or bool(_WORD2.search(ln))) and not ln.rstrip().endswith((".", ",", ";"))
            )
            if numbered and (number is None or continues_numbering(last_number, number)):
                # a numbered section line heads, even in a row of them ("1 Overview" / "1.1 Scope")
                close()
                if ok:
                    got[_norm(ln)] = size
                    last_number = number or last_number
                continue
            if run and run[-1][1] != size:
                close()
            run.append((_norm(ln), size, ok, number))
        close()
        found.append(got)
    ranks = sorted({z for got in found for z in got.values()}, reverse=True)
    return [{k: min(ranks.index(z) + 1, 6) for k, z in got.items()} for got in found]


def _continues(prev_page: str, page: str) -> bool:
    """Whether ``page`` continues a sentence of ``prev_page``: the previous page's text ends
    without closing punctuation (and not on a heading or a definition term) in a letter, a comma
    or a hyphenated word part, and this page's text starts with a lower-case letter."""
    tail = prev_page.rstrip().rsplit("\n", 1)[-1].strip()
    head = page.lstrip()
    return bool(
        tail
        and head
        and head[0].islower()
        and not tail.startswith("#")
        and not _TERM_LINE.match(tail)
        and re.search(r"(?:[A-Za-z,]|[a-z]-)$", tail)
    )


def pdf_to_text(
    page_texts: list[str],
    outline: list[tuple[int, int, str]],
    layouts: list[str] | None = None,
    line_sizes: list[list[tuple[float, float]]] | None = None,
    source: str = "",
) -> tuple[str, tuple[int, ...]]:
    """Join extracted page texts into one Markdown-like text with headings from the outline.

    Args:
        page_texts: the text layer of each page, in page order.
        outline: (page index, depth, title) bookmark entries.
        layouts: optional layout-mode text of each page (same order): its columns tell
            definition tables apart from prose (:func:`layout_roles`).
        line_sizes: optional, per page, ``(size, body size)`` of each line of its text: without
            an outline, lines set larger than the body are headings (:func:`_size_headings`).
        source: the file, for :mod:`citewise.text.notes`.

    Returns:
        (text, page start offsets): page ``n`` (1-based) starts at ``offsets[n - 1]``.

    Cleaning, page by page: running headers and footers (a first or last line that repeats on
    many pages once digits are ignored, e.g. ``Chapter 4: Shell Builtin Commands 71``) and
    contents/index lines with dot leaders are dropped; a word hyphenated across a line break is
    joined. A bookmark whose title is a line of its page, with or without a section number in
    front (``4.3.2 The Shopt Builtin``), turns that line into a ``#`` heading of its depth
    (capped at 6); otherwise the heading is inserted at the top of the page. A sentence that runs
    on over a page break is joined with one space (:func:`_continues`). Texinfo-style
    term/definition tables become ``term`` / ``: definition`` pairs (:func:`_definitions`).
    """
    by_page: dict[int, list[tuple[int, str]]] = {}
    for page, depth, title in outline:
        by_page.setdefault(page, []).append((depth, title))
    pages = [_page_text(raw) for raw in page_texts]
    running = _running_lines(pages)
    size_heads: list[dict[str, int]] = []
    if not outline and line_sizes:
        size_of = [
            {_norm(ln.replace(CODE_MARK, "")): z for ln, (z, _) in zip(raw.split("\n"), zs)}
            for raw, zs in zip(page_texts, line_sizes)
        ]
        bodies = [b for zs in line_sizes for _, b in zs[:1] if b]
        body = max(set(bodies), key=lambda b: (bodies.count(b), -b)) if bodies else 0.0
        if body:
            size_heads = _size_headings(pages, size_of, body)
    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    for i, lines in enumerate(pages):
        if _contents_page(lines):
            notes.dropped(source, f"page {i + 1}", "contents or index page (dot leaders)", " ".join(lines[:3]))
            lines = []
        else:
            lines = _clean_page(lines, running, source and f"{source} page {i + 1}")
        # a text line that starts with '#' (the Bash manual's special parameter "# ($#) Expands
        # to ...") is not a heading: escape it as Markdown does, so only bookmarks make headings;
        # nor is a line of dashes under a sentence (CommonMark would read a setext heading)
        lines = ["\\" + ln.lstrip() if ln.lstrip().startswith("#") or _RULE_LINE.match(ln) else ln for ln in lines]
        if i < len(size_heads) and size_heads[i]:
            lines = [
                "#" * size_heads[i][_norm(ln)] + " " + ln.strip() if _norm(ln) in size_heads[i] else ln for ln in lines
            ]
        top: list[str] = []
        marked: set[int] = set()
        for depth, title in by_page.get(i, []):
            mark = "#" * min(depth, 6) + " "
            want = _norm(_SECTION_NO.sub("", title.strip()))
            for j, ln in enumerate(lines):
                if j in marked or ln.startswith("#"):
                    continue
                if _norm(ln) == _norm(title) or _norm(_SECTION_NO.sub("", ln.strip())) == want:
                    lines[j] = mark + ln.strip()
                    marked.add(j)
                    break
            else:
                top.append(mark + title)
        lines = _fence_code(_definitions(lines, layout_roles(layouts[i]) if layouts and i < len(layouts) else None))
        page = "\n".join(top + ([""] if top and lines else []) + lines)
        if i and not top and parts and parts[-1].endswith("\n```") and page.startswith("```\n"):
            # a code block runs on over the page break: one block, not two
            parts[-1] = parts[-1][:-3]  # drop the closing fence, keep its line break
            pos -= 3
            page = page[4:]  # and the opening fence with its line break
            starts.append(pos)
            parts.append(page)
            pos += len(page)
            continue
        if i and not top and parts and _continues(parts[-1], page):
            # a sentence runs on over the page break ("... wishes to view" / "them; otherwise,
            # ..."): one space, not a paragraph break, so it stays one sentence (and a word
            # hyphenated over the break is joined)
            prev = parts[-1].rstrip()
            pos -= len(parts[-1]) - len(prev)
            page = page.lstrip()
            if prev.rsplit("\n", 1)[-1].startswith(": "):
                # a definition runs on: its continuation lines join its one line (same length)
                para, sep, rest = page.partition("\n\n")
                page = para.replace("\n", " ") + sep + rest
            if re.search(r"[a-z]-$", prev):
                parts[-1] = prev[:-1]
                pos -= 1
            else:
                parts[-1] = prev + " "
                pos += 1
            starts.append(pos)
            parts.append(page)
            pos += len(page)
            continue
        if i:
            parts.append("\n\n")
            pos += 2
        starts.append(pos)
        parts.append(page)
        pos += len(page)
    return "".join(parts) + "\n", tuple(starts)


def _layout_text(page) -> str:
    """A page's layout-mode text ('' when pypdf cannot lay it out: the plain text still serves)."""
    try:
        return page.extract_text(extraction_mode="layout") or ""
    except Exception:  # layout mode fails on some odd fonts; it is only a hint
        return ""


def load_pdf(path: Path, root: Path) -> Document:
    """Load the text layer of a PDF (see module docstring).

    Raises:
        InputError: not a PDF, unreadable or malformed, encrypted, or without a text layer.
    """
    raw = _read_bytes(path)
    source = str(path)
    if b"%PDF-" not in raw[:1024]:
        raise InputError(source, "not a PDF file (no %PDF- header)")
    from pypdf import PdfReader

    pypdf_log = logging.getLogger("pypdf")
    level = pypdf_log.level
    pypdf_log.setLevel(logging.ERROR)  # pypdf warns per recoverable glitch; we report one line
    try:
        reader = PdfReader(io.BytesIO(raw), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise InputError(source, "encrypted PDF (a password is needed); decrypt it first")
        # each line set wholly in a monospace font is marked as code (:func:`_page_with_code_marks`)
        line_sizes: list[list[tuple[float, float]]] = [[] for _ in reader.pages]
        marked = [_page_with_code_marks(p, zs) for p, zs in zip(reader.pages, line_sizes)]
        page_texts = [t.replace(CODE_MARK, "") for t in marked]
        # the same text with its columns (pypdf's layout mode): definition tables are told
        # from prose by their indentation (:func:`layout_roles`)
        layouts = [_layout_text(p) if t.strip() else "" for p, t in zip(reader.pages, page_texts)]
        outline = _pdf_outline(reader)
        info = reader.metadata or {}
        meta_title = str(info.get("/Title") or "").strip()
    except InputError:
        raise
    except Exception as e:  # pypdf raises many types on malformed files; each is a bad input
        raise InputError(source, f"not a readable PDF ({_one_line(e)})") from None
    finally:
        pypdf_log.setLevel(level)
    if not page_texts:
        raise InputError(source, "PDF has no pages")
    text, starts = pdf_to_text(marked, outline, layouts, line_sizes, source)
    if not text.strip():
        raise InputError(source, f"PDF has no text layer ({len(page_texts)} page(s); a scan? OCR it first)")
    first = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.strip()), path.stem)
    # no /Title in the metadata (pdfTeX manuals): the title page's first line ("Bash Reference
    # Manual") names the document; the first bookmark is only its first chapter ("Introduction")
    cover = next(
        (ln.strip() for ln in page_texts[0].splitlines() if ln.strip() and not _UNMAPPED.fullmatch(ln.strip())), ""
    )
    title = meta_title or (cover if 0 < len(cover) <= 120 else (outline[0][2] if outline else first[:200]))
    return Document(
        doc_id=doc_id_for(path, root),
        title=title,
        text=text,
        source=source,
        format="pdf",
        content_hash=content_hash(raw, path.suffix),
        pages=starts,
    )
