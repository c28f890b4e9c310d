"""In-document navigation in Markdown: blocks that only link to places in the same document.

A README's table of contents (a list whose every item is a link to one of its own headings,
``* [Installation](#installation)``) and its "back to top" lines (a paragraph that is only such a
link, ``[Back to TOC](#table-of-contents)``) are navigation: they say where text is, not what it
says. A block is navigation when, read by the CommonMark parser (markdown-it-py) with inline
markup, every piece of its text lies inside links whose target is a fragment of this document
(``#...``) and it holds at least one such link. Only top-level paragraphs and lists count; a
list item that also says something in words (``* [Name](#name): what it does``), a link to
another page, an image or code keeps the block as content. A heading whose section (everything up
to the next heading of the same or a higher level, subsections included) holds such blocks and
nothing else is the title of that navigation (``Table of Contents`` / ``=================`` above
the list) and goes with it.

The spans are blanked by the Markdown loader (same length, line breaks kept), so every other
character keeps its offset in the source file.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from citewise.text.blocks import MAX_NESTING, line_starts


@dataclass(frozen=True)
class NavSpan:
    """A navigation block: character span ``[start, end)`` in the text, 1-based first and last
    line, and why it is navigation."""

    start: int
    end: int
    first_line: int
    last_line: int
    reason: str


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).enable("table")


def _only_fragment_links(inline) -> int:
    """The number of in-document links of an ``inline`` token when all its text lies inside
    such links (else 0)."""
    depth, links = 0, 0
    for child in inline.children or ():
        t = child.type
        if t == "link_open":
            href = str(child.attrs.get("href", ""))
            if not href.startswith("#") or len(href) < 2:
                return 0
            depth += 1
            links += 1
        elif t == "link_close":
            depth -= 1
        elif t in ("softbreak", "hardbreak"):
            continue
        elif t == "text":
            if depth == 0 and child.content.strip(" \t|·•-–—,;:()[]"):
                return 0
        elif t in ("em_open", "em_close", "strong_open", "strong_close"):
            continue
        else:  # code, images, HTML: content
            return 0
    return links


def fragment_navigation(text: str) -> list[NavSpan]:
    """Top-level paragraphs and lists of ``text`` that only link within the document, and the
    headings of sections that hold nothing else, in order."""
    if "](#" not in text:
        return []
    tokens = _parser().parse(text)
    starts = line_starts(text)
    nlines = len(starts) - 1

    def span(lo: int, hi: int, why: str) -> NavSpan:
        s, e = starts[min(lo, nlines)], min(starts[min(hi, nlines)], len(text))
        while e > s and text[e - 1].isspace():
            e -= 1
        return NavSpan(s, e, lo + 1, bisect_right(starts, e - 1), why)

    # the top-level blocks in order: (heading level or 0, line map, navigation span or None)
    blocks: list[tuple[int, tuple[int, int], NavSpan | None]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level == 0 and tok.map is not None and tok.nesting == 0:
            # a block in one token: code is content, a rule or an HTML comment says nothing
            if tok.type in ("fence", "code_block") or (
                tok.type == "html_block" and not tok.content.lstrip().startswith("<!--")
            ):
                blocks.append((0, (tok.map[0], tok.map[1]), None))
            i += 1
            continue
        if tok.level != 0 or tok.map is None or tok.nesting != 1:
            i += 1
            continue
        # the tokens of this top-level block: up to its closing token at level 0
        j = i + 1
        while j < len(tokens) and not (tokens[j].level == 0 and tokens[j].nesting == -1):
            j += 1
        inner = [t for t in tokens[i : j + 1] if t.type == "inline"]
        kind = tok.type
        nav = None
        if kind in ("paragraph_open", "bullet_list_open", "ordered_list_open") and inner:
            counts = [_only_fragment_links(t) for t in inner]
            if all(counts):
                why = (
                    f"navigation: a list of {sum(counts)} links to this document's own sections"
                    if kind != "paragraph_open"
                    else "navigation: only links to this document's own sections"
                )
                nav = span(tok.map[0], tok.map[1], why)
        level = int(tok.tag[1]) if kind == "heading_open" else 0
        blocks.append((level, (tok.map[0], tok.map[1]), nav))
        i = j + 1
    out: list[NavSpan] = []
    for k, (level, (lo, hi), nav) in enumerate(blocks):
        if nav is not None:
            out.append(nav)
            continue
        if not level:
            continue
        body = []
        for other, _, onav in blocks[k + 1 :]:
            if other and other <= level:
                break
            if not other:
                body.append(onav)
        if body and all(body):
            out.append(
                span(lo, hi, "navigation: the heading of a section that only links to this document's own sections")
            )
    return out


def blank(text: str, spans: list[NavSpan]) -> str:
    """``text`` with each span's characters replaced by spaces, line breaks kept (same length)."""
    if not spans:
        return text
    chars = list(text)
    for sp in spans:
        for k in range(sp.start, sp.end):
            if chars[k] not in "\r\n":
                chars[k] = " "
    return "".join(chars)
