"""Structure-aware chunking: split at headings, keep tables and code blocks whole, 300–800 tokens.

Algorithm (one pass over a document's text, all offsets are character offsets into that text):

1. Replace NUL characters with spaces (one for one, so every offset stays right): a NUL never
   reaches a chunk, the embedder or the index, whatever the format it came from.
2. Parse the text into blocks with a CommonMark parser (:mod:`citewise.text.blocks`): ATX and
   setext headings, fenced and indented code, pipe tables, HTML tables, lists and paragraphs,
   each with its exact source span. A block is atomic while it fits.
3. Build the section tree from the headings.
4. A section whose whole subtree fits ``max_tokens`` becomes one piece. A larger one emits its own
   text (packed by blocks, then items for an oversized list, sentences for an oversized
   paragraph, rows for an oversized table, paragraphs for an oversized indented block (plain
   text's indented prose), lines for an oversized fenced code block) and recurses into
   its subsections: split at subheadings first, then at paragraphs.
5. Hard cap: any span still over the budget (a 50 MB single-line file, a sentence of 10,000
   words, a huge table row) is cut into windows that fit, at the last sentence end, else the last
   whitespace, in the second half of each window, else at a character boundary. No chunk has more
   than ``max_tokens`` tokens (its ``token_count``, heading path and repeated header included).
6. Adjacent pieces under ``min_tokens`` are merged while the result stays within ``max_tokens``;
   a merged piece keeps the common heading path of its parts, so two pieces are merged only
   when no heading is lost: every heading of each part's path below the common one is a heading
   line inside the merged text (the answer units read a section's own heading from there). A piece
   that continues a section, or a subsection whose parent heading is in another chunk, stays a
   chunk of its own with its full heading path.

Tables split across chunks: a table's header row and separator line (``| a | b |`` /
``|---|---|``) always travel with its first row, and every later chunk that starts inside the
table begins with a copy of them, so ``Chunk.text`` parses as a Markdown table on its own and the
answer units label each cell with its column name. The copy is a *prefix*: ``Chunk.prefix_len``
characters of ``text`` that are not at ``[start, end)`` in the source. ``start``/``end`` still
point at the rows themselves, so ``text[prefix_len:] == source[start:end]`` for every chunk
(``prefix_len`` is 0 for all others) and a stored chunk's prefix length is
``len(text) - (end - start)``. An HTML table written in Markdown (``<table>`` ... ``</table>``, as
in Node's API docs) splits between ``<tr>`` rows, and its ``<th>`` header row is repeated so. A header of more than a quarter of ``max_tokens`` is not repeated. A code block split across
chunks is treated alike: every later chunk that starts inside it begins with a copy of its
opening fence line (```` ```lang ````), so its lines still read as code there. A chunk that starts
inside the body of a plain-text manual's entry (term lines with the body indented below,
:mod:`citewise.text.hanging`) begins with a copy of its term lines, so the body's sentences still
sit under their term.

Token counts are ``o200k_base`` counts of the indexed text (heading path + text).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, field

from citewise.core import Chunk
from citewise.text.blocks import Block as _Block
from citewise.text.blocks import html_row_spans as _html_row_spans
from citewise.text.blocks import parse_blocks  # noqa: F401 - part of this module's API
from citewise.text.hanging import hanging_definitions
from citewise.text.tokens import count_tokens

MIN_TOKENS = 300
#: The hard cap: no chunk has more tokens than this (o200k_base, indexed text).
MAX_TOKENS = 800
#: Strings up to this many characters (heading paths, table headers) keep their token counts for
#: the whole document (:meth:`_Run.count`); longer ones (chunk texts) only until the next one.
COUNT_CACHE_CHARS = 2_000

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])")
#: Where a window of an over-long span may end: after a sentence end (Latin or CJK), else after
#: whitespace.
_CUT_SENTENCE = re.compile(r"[.!?]+[\"')\]]*\s+|[\u3002\uff01\uff1f\uff0e]+")
_CUT_SPACE = re.compile(r"\s+")
_LIST_ITEM_LINE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+(?=\S)", re.M)
_CUT_ROW = re.compile(r"</tr\s*>[ \t]*\n", re.I)


@dataclass
class _Section:
    title: str
    level: int
    path: tuple[str, ...]
    start: int  # start of the heading line (or of the text for the root)
    blocks: list[_Block] = field(default_factory=list)  # own blocks after the heading
    children: list["_Section"] = field(default_factory=list)
    end: int = 0

    def all_end(self) -> int:
        return self.children[-1].all_end() if self.children else self.end


@dataclass
class _Piece:
    start: int
    end: int
    path: tuple[str, ...]
    slug_title: str
    parent: int | None = None  # index of parent piece


#: Longest heading slug (characters) in a chunk id. A 320,000-character heading made every chunk id
#: of its document that long, and LanceDB's index build on the id column aborted the whole ingest
#: asking for 4.4 GB (break-it trial).
MAX_SLUG_CHARS = 100


def slugify(text: str) -> str:
    """GitHub-style heading slug: lowercase, alphanumerics and hyphens only, at most
    :data:`MAX_SLUG_CHARS` characters (cut at a hyphen when one is near the end).

    >>> slugify("Refunds on the Pro plan (2026)")
    'refunds-on-the-pro-plan-2026'
    >>> len(slugify("word " * 1000)) <= MAX_SLUG_CHARS
    True
    """
    s = re.sub(r"[^\w\s-]", "", text.lower(), flags=re.UNICODE)
    s = re.sub(r"[\s_]+", "-", s).strip("-")
    s = re.sub(r"-{2,}", "-", s)
    if len(s) > MAX_SLUG_CHARS:
        cut = s[:MAX_SLUG_CHARS]
        s = (cut.rsplit("-", 1)[0] if "-" in cut[MAX_SLUG_CHARS // 2 :] else cut).strip("-")
    return s or "section"


def _build_tree(text: str, title: str, blocks: list[_Block]) -> _Section:
    root = _Section(title=title, level=0, path=(title,) if title else (), start=0)
    stack = [root]
    first_heading = True
    for b in blocks:
        if b.kind == "heading":
            # A leading level-1 heading that repeats the title is the root's own heading.
            if (
                first_heading
                and b.level == 1
                and not root.blocks
                and (not title or b.title.strip().lower() == title.strip().lower())
            ):
                first_heading = False
                root.title = b.title
                root.path = (b.title,)
                root.start = b.start
                root.end = b.end
                continue
            first_heading = False
            while len(stack) > 1 and stack[-1].level >= b.level:
                stack.pop()
            parent = stack[-1]
            sec = _Section(b.title, b.level, parent.path + (b.title,), b.start, end=b.end)
            parent.children.append(sec)
            stack.append(sec)
        else:
            first_heading = False
            stack[-1].blocks.append(b)
            stack[-1].end = max(stack[-1].end, b.end)
    if not root.end:
        root.end = max((b.end for b in root.blocks), default=0)
    return root


class Chunker:
    """Split a document's text into chunks (see the module docstring for the algorithm).

    Args:
        min_tokens: pieces smaller than this are merged with neighbours (default 300).
        max_tokens: the most tokens a chunk may have, a hard cap (default 800).

    Raises:
        ValueError: if ``0 < min_tokens <= max_tokens`` does not hold.
    """

    def __init__(self, min_tokens: int = MIN_TOKENS, max_tokens: int = MAX_TOKENS):
        if not 0 < min_tokens <= max_tokens:
            raise ValueError(f"need 0 < min_tokens <= max_tokens, got {min_tokens}, {max_tokens}")
        self.min_tokens = min_tokens
        self.max_tokens = max_tokens

    # -- public -------------------------------------------------------------------------------
    def chunk(self, doc_id: str, title: str, text: str) -> list[Chunk]:
        """Chunks of one document, in document order, with neighbour and parent links.

        Args:
            doc_id: the owning document's id (chunk ids are ``doc_id#slug[-n]``).
            title: the document title (the root of every heading path).
            text: the document body; offsets in the chunks index into it. NUL characters are
                replaced by spaces in the chunks (offsets unchanged).

        Returns:
            A list of Chunk, each at most ``max_tokens`` tokens; empty when the text has no
            content.
        """
        if "\x00" in text:
            text = text.replace("\x00", " ")
        title = title.replace("\x00", " ")
        blocks = parse_blocks(text)
        if not blocks:
            return []
        run = _Run(
            text,
            [b for b in blocks if b.kind in ("table", "htmltable", "code")],
            max_header=self.max_tokens // 4,
            heads=[b for b in blocks if b.kind == "heading"],
            entries=hanging_definitions(text),
        )
        root = _build_tree(text, title, blocks)
        pieces: list[_Piece] = []
        self._emit(run, root, pieces, parent=None)
        pieces = self._merge(run, pieces)
        return self._to_chunks(doc_id, run, pieces)

    # -- steps --------------------------------------------------------------------------------
    def _tokens(self, run: "_Run", start: int, end: int, path: tuple[str, ...] = ()) -> int:
        """Tokens of a piece: its text, its repeated table header, its heading path."""
        n = count_tokens(run.text[start:end]) + (run.path_tokens(path) if path else 0)
        prefix = run.prefix(start)
        return n + run.count(prefix) if prefix else n

    def _within(self, run: "_Run", start: int, end: int, path: tuple[str, ...], limit: int) -> bool:
        """``self._tokens(run, start, end, path) <= limit``, without counting the span's tokens
        when even one token per UTF-8 byte would fit (a BPE token covers at least one byte)."""
        text = run.text[start:end]
        try:
            nbytes = len(text) if text.isascii() else len(text.encode("utf-8"))
        except UnicodeEncodeError:  # a lone surrogate: count exactly
            nbytes = limit + 1
        extra = run.path_tokens(path) if path else 0
        prefix = run.prefix(start)
        if prefix:
            extra += run.count(prefix)
        return nbytes + extra <= limit or count_tokens(text) + extra <= limit

    def _budget(self, run: "_Run", start: int, path: tuple[str, ...]) -> int:
        """Tokens left for a span's own text starting at ``start`` (slack for the joins)."""
        prefix = run.prefix(start)
        used = run.path_tokens(path) + (run.count(prefix) if prefix else 0)
        return max(self.max_tokens - used - 4, 16)

    def _emit(self, run: "_Run", sec: _Section, out: list[_Piece], parent: int | None) -> None:
        end = sec.all_end()
        if end <= sec.start:
            return
        slug_title = sec.title
        if end - sec.start <= self.max_tokens * 64 and self._within(run, sec.start, end, sec.path, self.max_tokens):
            out.append(_Piece(sec.start, end, sec.path, slug_title, parent))
            return
        # Own text (heading line + blocks before the first subsection), packed by blocks.
        own_end = sec.children[0].start if sec.children else end
        my_index = parent
        units = self._units(run, sec.start, own_end, sec.blocks, sec.path)
        for i, (s, e) in enumerate(self._pack(run, units, sec.path)):
            out.append(_Piece(s, e, sec.path, slug_title, parent))
            if i == 0:
                my_index = len(out) - 1
        for child in sec.children:
            self._emit(run, child, out, my_index)

    def _units(self, run, start, end, blocks, path) -> list[tuple[int, int]]:
        """Atomic spans of a section's own text: the heading line joins the first block; an
        oversized list splits between items, paragraph at sentences, table at rows (the header
        stays with the first row), indented block at blank lines, fenced code block at lines; any
        span still over budget is cut by :meth:`_cap`."""
        text = run.text
        spans: list[tuple[int, int]] = []
        own = [b for b in blocks if b.start >= start and b.end <= end]
        lead = start
        for b in own:
            s = lead if lead is not None else b.start
            lead = None
            # the limit :meth:`_cap` holds a span to (:meth:`_budget`): a table a few tokens
            # under ``max_tokens`` splits at its rows here, not in mid-row there
            if b.end - s > self.max_tokens * 64 or not self._within(run, s, b.end, path, self.max_tokens - 4):
                if b.kind in ("para", "list"):
                    # a list splits between its items (an option's "Default: 120000" stays with
                    # the option), other prose at sentences; an item over budget is cut by _cap
                    items = (
                        [x for x in b.items if x >= s]
                        if b.kind == "list"
                        else [m.start() for m in _LIST_ITEM_LINE.finditer(text, s, b.end)]
                    )
                    parts = (
                        [(a, len(text[:e].rstrip())) for a, e in zip([s] + items[1:], items[1:] + [b.end])]
                        if len(items) > 1
                        else self._sentences(text, s, b.end)
                    )
                elif b.kind in ("table", "htmltable"):
                    parts = (
                        self._line_spans(text, b.header_end, b.end)
                        if b.kind == "table"
                        else _html_row_spans(text, b.header_end, b.end)
                    )
                    if parts:  # the header (and the heading line before it) joins the first row
                        parts[0] = (s, parts[0][1])
                    else:
                        parts = [(s, b.end)]
                elif b.kind == "icode":
                    # an indented block (in plain text: indented prose, a manual's entries) splits
                    # at its blank lines first, so no chunk starts in the middle of a paragraph
                    parts = self._paragraph_spans(text, s, b.end)
                else:
                    parts = self._line_spans(text, s, b.end)
                spans.extend(self._cap(run, parts, path))
            else:
                spans.append((s, b.end))
        if lead is not None and end > start:
            spans.extend(self._cap(run, [(start, end)], path))  # heading only
        return spans

    def _cap(self, run, spans, path) -> list[tuple[int, int]]:
        """``spans`` with every span over its token budget cut into windows that fit."""
        out: list[tuple[int, int]] = []
        for s, e in spans:
            if e - s <= self.max_tokens * 64 and count_tokens(run.text[s:e]) <= self._budget(run, s, path):
                out.append((s, e))
            else:
                out.extend(self._windows(run, s, e, path))
        return out

    def _windows(self, run: "_Run", start: int, end: int, path) -> list[tuple[int, int]]:
        """Cut ``[start, end)`` into consecutive spans of at most their budget in tokens each.

        Each window is sized from the token count of a guess (about 4 characters per token, then
        scaled by the measured ratio), and ends at the last HTML table row end (``</tr>``), else
        the last sentence end, else the last whitespace, in its second half, else at its last
        character. Linear in the span length:
        every character is tokenised a bounded number of times.
        """
        text = run.text
        out: list[tuple[int, int]] = []
        pos = start
        while pos < end:
            budget = self._budget(run, pos, path)
            size = min(end - pos, budget * 4)
            fits = 0
            for _ in range(8):
                n = count_tokens(text[pos : pos + size])
                if n <= budget:
                    fits = max(fits, size)
                    if pos + size >= end or n >= budget * 0.85:
                        break
                    size = min(end - pos, int(size * budget * 0.95 / max(n, 1)) + 1)
                else:
                    size = max(1, min(size - 1, int(size * budget * 0.95 / n)))
            if not fits:
                fits = size
                while fits > 1 and count_tokens(text[pos : pos + fits]) > budget:
                    fits = max(1, fits * 3 // 4)
            cut = pos + fits
            if cut < end:
                lo = pos + fits // 2
                best = None
                for m in _CUT_ROW.finditer(text, lo, cut):  # an HTML table cuts between rows
                    best = m.end()
                if best is None:
                    for m in _CUT_SENTENCE.finditer(text, lo, cut):
                        best = m.end()
                if best is None:
                    for m in _CUT_SPACE.finditer(text, lo, cut):
                        best = m.end()
                if best is not None and best > pos:
                    cut = best
                while cut > pos + 1 and unicodedata.combining(text[cut]):
                    cut -= 1  # do not cut an accent from its letter
            out.append((pos, cut))
            pos = cut
        return out

    def _sentences(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        spans, s = [], start
        for m in _SENTENCE_END.finditer(text, start, end):
            spans.append((s, m.start()))
            s = m.end()
        spans.append((s, end))
        return [sp for sp in spans if sp[1] > sp[0]]

    def _paragraph_spans(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        return self._spans_between(text, start, end, r"\n[ \t]*\n")

    def _line_spans(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        return self._spans_between(text, start, end, r"\n")

    @staticmethod
    def _spans_between(text: str, start: int, end: int, separator: str) -> list[tuple[int, int]]:
        """The non-blank spans of ``text[start:end]`` between matches of ``separator``."""
        spans, s = [], start
        for m in re.finditer(separator, text[start:end]):
            spans.append((s, start + m.start()))
            s = start + m.end()
        spans.append((s, end))
        return [sp for sp in spans if sp[1] > sp[0] and text[sp[0] : sp[1]].strip()]

    def _pack(self, run, units, path) -> list[tuple[int, int]]:
        packed: list[tuple[int, int]] = []
        cur: tuple[int, int] | None = None
        for s, e in units:
            if cur is None:
                cur = (s, e)
            elif self._within(run, cur[0], e, path, self.max_tokens):
                cur = (cur[0], e)
            else:
                packed.append(cur)
                cur = (s, e)
        if cur is not None:
            packed.append(cur)
        return packed

    def _merge(self, run: "_Run", pieces: list[_Piece]) -> list[_Piece]:
        if not pieces:
            return pieces
        merged: list[_Piece] = [pieces[0]]
        remap = {0: 0}
        for i, p in enumerate(pieces[1:], start=1):
            last = merged[-1]
            common = _common_prefix(last.path, p.path)
            small = (
                self._tokens(run, last.start, last.end, last.path) < self.min_tokens
                or self._tokens(run, p.start, p.end, p.path) < self.min_tokens
            )
            if (
                small
                and last.end <= p.start
                and (self._within(run, last.start, p.end, common, self.max_tokens))
                and run.keeps_headings(last, common, last.start, p.end)
                and run.keeps_headings(p, common, last.start, p.end)
            ):
                merged[-1] = _Piece(last.start, p.end, common, last.slug_title, last.parent)
            else:
                merged.append(p)
            remap[i] = len(merged) - 1
        for p in merged:
            if p.parent is not None:
                p.parent = remap.get(p.parent)
        return merged

    def _render(self, run: "_Run", p: _Piece, s: int, e: int) -> tuple[str, str]:
        """(chunk text, indexed text) of the piece ``p`` trimmed to ``[s, e)``."""
        body = run.prefix(s) + run.text[s:e]
        head = " > ".join(h for h in p.path if h)
        return body, (f"{head}\n{body}" if head else body)

    def _to_chunks(self, doc_id: str, run: "_Run", pieces: list[_Piece]) -> list[Chunk]:
        text = run.text
        # (piece, start, end, chunk text, token count of the indexed text): counted right after
        # :meth:`_fit` counted the same text, so :meth:`_Run.count`'s one-slot cache answers
        kept: list[tuple[_Piece, int, int, str, int]] = []
        index_of: dict[int, int] = {}
        for i, p in enumerate(pieces):
            for s, e in self._fit(run, p):
                while s < e and text[s].isspace():
                    s += 1
                while e > s and text[e - 1].isspace():
                    e -= 1
                if e > s:
                    index_of.setdefault(i, len(kept))
                    body, indexed = self._render(run, p, s, e)
                    kept.append((p, s, e, body, run.count(indexed)))
        ids: list[str] = []
        used: dict[str, int] = {}
        for p, *_ in kept:
            base = slugify(p.slug_title) if p.slug_title else "text"
            n = used.get(base, 0) + 1
            used[base] = n
            ids.append(f"{doc_id}#{base}" if n == 1 else f"{doc_id}#{base}-{n}")
        chunks = []
        for i, (p, s, e, body, n) in enumerate(kept):
            parent_i = index_of.get(p.parent) if p.parent is not None else None
            chunks.append(
                Chunk(
                    chunk_id=ids[i],
                    doc_id=doc_id,
                    heading_path=p.path,
                    text=body,
                    start=s,
                    end=e,
                    token_count=n,
                    prev_id=ids[i - 1] if i > 0 else None,
                    next_id=ids[i + 1] if i + 1 < len(ids) else None,
                    parent_id=ids[parent_i] if parent_i is not None and parent_i != i else None,
                    prefix_len=len(body) - (e - s),
                )
            )
        return chunks

    def _fit(self, run: "_Run", p: _Piece) -> list[tuple[int, int]]:
        """The piece's span, or (rarely: token counts of joined text are not quite additive) its
        windows when the exact token count of its indexed text is over the cap."""
        _, indexed = self._render(run, p, p.start, p.end)
        if run.count(indexed) <= self.max_tokens:
            return [(p.start, p.end)]
        return self._windows(run, p.start, p.end, p.path)


class _Run:
    """Per-document state of one :meth:`Chunker.chunk` call: the text, its tables, token caches."""

    def __init__(
        self,
        text: str,
        tables: list[_Block],
        max_header: int,
        heads: list[_Block] | None = None,
        entries: list[tuple[int, int, int, str]] | None = None,
    ):
        self.text = text
        self.tables = tables
        # hanging-indent entries as (term line start, body line start, body end), and each one's
        # enclosing entry (-1: none); entries nest or are disjoint
        self.entries: list[tuple[int, int, int]] = []
        self._entry_parent: list[int] = []
        stack: list[int] = []
        for ts, be, ds, _ in entries or []:
            while stack and self.entries[stack[-1]][2] <= ts:
                stack.pop()
            self._entry_parent.append(stack[-1] if stack else -1)
            stack.append(len(self.entries))
            self.entries.append((text.rfind("\n", 0, ts) + 1, text.rfind("\n", 0, ds) + 1, be))
        self._entry_starts = [e[0] for e in self.entries]
        self.heads = heads or []
        self._head_starts = [h.start for h in self.heads]
        self.max_header = max_header
        self._starts = [t.start for t in tables]
        self._counts: dict[str, int] = {}
        self._last: tuple[str, int] = ("", 0)

    def count(self, s: str) -> int:
        """Cached token count of a string: heading paths and table headers (up to
        :data:`COUNT_CACHE_CHARS` characters) are kept for the whole document; of longer strings
        (a chunk's indexed text, counted by :meth:`Chunker._fit` and again at once for its
        ``token_count``) only the last one, so the cache never holds a copy of the document."""
        if len(s) > COUNT_CACHE_CHARS:
            if self._last[0] != s:
                self._last = (s, count_tokens(s))
            return self._last[1]
        n = self._counts.get(s)
        if n is None:
            n = self._counts[s] = count_tokens(s)
        return n

    def keeps_headings(self, piece: "_Piece", common: tuple[str, ...], start: int, end: int) -> bool:
        """Whether ``piece``, merged into ``[start, end)`` under the heading path ``common``,
        still says which section it is from: every heading of its own path below ``common`` is a
        heading line inside the merged text. A piece that continues a section (no heading line
        of its own), or whose parent section's heading sits in an earlier chunk, would lose those
        headings: the merged chunk's heading path is only the common ancestor."""
        below = piece.path[len(common) :]
        if not below:
            return True
        i = bisect.bisect_left(self._head_starts, start)
        inside = set()
        while i < len(self.heads) and self.heads[i].start < end:
            inside.add(self.heads[i].title)
            i += 1
        return all(h in inside for h in below)

    def path_tokens(self, path: tuple[str, ...]) -> int:
        return self.count(" > ".join(path))

    def prefix(self, pos: int) -> str:
        """The table header (row + separator + newline) that a chunk starting at ``pos`` must
        repeat: non-empty when ``pos`` is past the header of a table, before its end, and the
        header is at most ``max_header`` tokens (a giant header is not worth repeating). Outside
        a table, the term lines of the innermost hanging-indent entry whose body ``pos`` is in
        (:mod:`citewise.text.hanging`), followed by the indentation of ``pos``'s line, so the
        chunk's first lines still read as that entry's body."""
        i = bisect.bisect_right(self._starts, pos) - 1
        if i >= 0:
            t = self.tables[i]
            if t.header_end < pos < t.end:
                header = self.text[t.start : t.header_end].lstrip() + "\n"
                return header if self.count(header) <= self.max_header else ""
        return self._entry_prefix(pos)

    def _entry_prefix(self, pos: int) -> str:
        i = bisect.bisect_right(self._entry_starts, pos) - 1
        while i >= 0 and not (self.entries[i][1] <= pos < self.entries[i][2]):
            i = self._entry_parent[i]
        if i < 0:
            return ""
        term_start, body_start, _ = self.entries[i]
        line_start = self.text.rfind("\n", 0, pos) + 1
        line = self.text[line_start:pos]
        indent = line[: len(line) - len(line.lstrip())] if line.strip() else line
        terms = self.text[term_start:body_start]
        return terms + indent if self.count(terms) <= self.max_header else ""


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for x, y in zip(a, b):
        if x != y:
            break
        out.append(x)
    return tuple(out)
