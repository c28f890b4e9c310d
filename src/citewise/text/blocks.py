"""Block structure of a Markdown (or Markdown-like) text, read by a CommonMark parser.

The parser is markdown-it-py (CommonMark 0.31 conformant, with GFM tables enabled): ATX and
setext headings, fenced and indented code, lists, block quotes, HTML blocks and pipe tables are
told apart as CommonMark says, not by line rules. Only block rules run (inline parsing is off):
the chunker needs the blocks and their source lines, not the rendered inline markup. Each block
token carries the source lines it spans (``Token.map``), which become character offsets into the
text, so a chunk's ``[start, end)`` is exact in the source file.

Only top-level blocks count: a ``#`` line inside a list item or block quote is part of that
block, not a section heading. Text no token covers (link reference definitions) is a paragraph,
so every non-blank character of the text is in a block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

#: Deepest nesting the parser follows (block quotes in block quotes...); deeper text stays text.
MAX_NESTING = 20


@dataclass
class Block:
    """One top-level block of a text.

    Attributes:
        kind: ``heading`` | ``code`` (fenced) | ``icode`` (indented code) | ``table`` (pipe table) |
            ``htmltable`` (an HTML ``<table>`` block) | ``list`` | ``para`` (paragraphs, block
            quotes, other HTML blocks, thematic breaks).
        start, end: character span in the text (end after the last non-blank character).
        level: heading level 1..6 (0 for other kinds).
        title: heading text (the inline source, whitespace collapsed).
        header_end: tables: end of the header row and delimiter line (HTML tables: of the ``<th>``
            row, else of the ``<table>`` line); fenced code: end of the opening fence line.
        items: lists: start offsets of the items, nested items included (where an oversized list
            may be cut).
    """

    kind: str
    start: int
    end: int
    level: int = 0
    title: str = ""
    header_end: int = 0
    items: tuple[int, ...] = ()


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).enable("table")
    md.disable("inline")  # block structure only: inline markup is not rendered
    return md


#: Line breaks as CommonMark counts them (``\r\n``, ``\r`` or ``\n``).
_EOL = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    """Character offset at which each line of ``text`` starts (CommonMark's line breaks); one
    more entry, ``len(text) + 1``, closes the last line."""
    starts = [0]
    starts.extend(m.end() for m in _EOL.finditer(text))
    starts.append(len(text) + 1)
    return starts


def parse_blocks(text: str) -> list[Block]:
    """Top-level blocks of a Markdown text with their character spans, in order."""
    tokens = _parser().parse(text)
    starts = line_starts(text)
    nlines = len(starts) - 1

    def span(lo: int, hi: int) -> tuple[int, int]:
        s = starts[min(lo, nlines)]
        e = min(starts[min(hi, nlines)], len(text))
        while e > s and text[e - 1].isspace():
            e -= 1
        return s, e

    def line_end(i: int) -> int:
        e = min(starts[min(i + 1, nlines)], len(text))
        while e > starts[i] and text[e - 1] in "\r\n":
            e -= 1
        return e

    blocks: list[Block] = []
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.map is None or tok.nesting < 0:
            continue
        lo, hi = tok.map
        s, e = span(lo, hi)
        if e <= s:
            continue
        t = tok.type
        if t == "heading_open":
            title = " ".join(tokens[i + 1].content.split()) if i + 1 < len(tokens) else ""
            blocks.append(Block("heading", s, e, int(tok.tag[1]), title) if title else Block("para", s, e))
        elif t == "fence":
            blocks.append(Block("code", s, e, header_end=min(line_end(lo), e)))
        elif t == "code_block":
            blocks.append(Block("icode", s, e))
        elif t == "table_open":
            blocks.append(Block("table", s, e, header_end=min(line_end(min(lo + 1, hi - 1)), e)))
        elif t == "html_block" and _HTML_TABLE_OPEN.match(text, s):
            blocks.append(Block("htmltable", s, e, header_end=_html_header_end(text, s, e)))
        elif t in ("bullet_list_open", "ordered_list_open"):
            items = []
            for sub in tokens[i + 1 :]:
                if sub.level == 0:
                    break
                if sub.type == "list_item_open" and sub.map is not None:
                    items.append(starts[min(sub.map[0], nlines)])
            blocks.append(Block("list", s, e, items=tuple(sorted(set(items)))))
        else:
            blocks.append(Block("para", s, e))
    return _with_gaps(text, blocks)


def _with_gaps(text: str, blocks: list[Block]) -> list[Block]:
    """``blocks`` plus a ``para`` block for any text between or after them that no token covers
    (link reference definitions, ``[id]: https://...``, make no token): no text is left out."""
    out: list[Block] = []
    pos = 0
    for b in blocks + [Block("end", len(text), len(text))]:
        if b.start > pos and text[pos : b.start].strip():
            s, e = pos, b.start
            while s < e and text[s].isspace():
                s += 1
            while e > s and text[e - 1].isspace():
                e -= 1
            out.append(Block("para", s, e))
        if b.kind != "end":
            out.append(b)
            pos = max(pos, b.end)
    return out


#: An HTML block that opens a table (Node's API docs write their constant tables so).
_HTML_TABLE_OPEN = re.compile(r"[ \t]*<table\b", re.I)
#: A row ends at ``</tr>``, or where the next row or the table's end starts (HTML lets both end
#: tags be left out); linear in the text, however many rows are unclosed.
HTML_ROW = re.compile(r"<tr\b.*?(?:</tr\s*>|(?=<tr\b|</table\b)|\Z)", re.I | re.S)


def _html_header_end(text: str, start: int, end: int) -> int:
    """End of the header of an HTML table block ``[start, end)``: its first row when that row
    holds ``<th>`` cells, else the end of the ``<table>`` line; repeated like a Markdown table's
    header at the top of every later chunk that starts inside the table."""
    m = HTML_ROW.search(text, start, end)
    if m and re.search(r"<th\b", m.group(0), re.I):
        return m.end()
    nl = text.find("\n", start, end)
    return nl if nl >= 0 else end


def html_row_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of an HTML table block from ``start`` (its header end) to ``end``, cut between rows:
    each ``<tr>...</tr>`` with the markup up to the next row; what precedes the first row joins
    it, what follows the last row (``</table>``) joins that."""
    rows = [m.span() for m in HTML_ROW.finditer(text, start, end)]
    if not rows:
        return [(start, end)]
    cuts = [start] + [s for s, _ in rows[1:]] + [end]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]
