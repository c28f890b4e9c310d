"""Structure-aware chunking: split at headings, keep tables and code blocks whole, 300–800 tokens.

Algorithm (one pass over a document's text, all offsets are character offsets into that text):

1. Parse the text into blocks: ATX headings (``#``..``######``), fenced code blocks, tables (runs
   of lines starting with ``|``) and paragraphs (runs of non-blank lines). A fenced block or table
   is atomic.
2. Build the section tree from the headings.
3. A section whose whole subtree fits ``max_tokens`` becomes one piece. A larger one emits its own
   text (packed by blocks, then sentences for an oversized paragraph) and recurses into its
   subsections: split at subheadings first, then at paragraphs.
4. Adjacent pieces under ``min_tokens`` are merged while the result stays within ``max_tokens``;
   a merged piece keeps the common heading path of its parts.

Each chunk is a contiguous slice of the text, so ``text[start:end]`` reproduces it. Token counts
are ``o200k_base`` counts of the indexed text (heading path + text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from citewise.core import Chunk
from citewise.text.tokens import count_tokens

MIN_TOKENS = 300
MAX_TOKENS = 800
#: An atomic block (code or table) is split only when it exceeds this many tokens.
HARD_MAX_TOKENS = 1600

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])")


@dataclass
class _Block:
    kind: str  # heading | code | table | para
    start: int
    end: int
    level: int = 0
    title: str = ""


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


def slugify(text: str) -> str:
    """GitHub-style heading slug: lowercase, alphanumerics and hyphens only.

    >>> slugify("Refunds on the Pro plan (2026)")
    'refunds-on-the-pro-plan-2026'
    """
    s = re.sub(r"[^\w\s-]", "", text.lower(), flags=re.UNICODE)
    s = re.sub(r"[\s_]+", "-", s).strip("-")
    s = re.sub(r"-{2,}", "-", s)
    return s or "section"


def _lines(text: str):
    pos = 0
    for line in text.splitlines(keepends=True):
        yield pos, line
        pos += len(line)


def parse_blocks(text: str) -> list[_Block]:
    """Blocks of a Markdown-like text with their character spans (see module docstring)."""
    blocks: list[_Block] = []
    fence: str | None = None
    cur: _Block | None = None

    def close():
        nonlocal cur
        if cur is not None:
            blocks.append(cur)
            cur = None

    for pos, line in _lines(text):
        stripped = line.strip()
        end = pos + len(line.rstrip("\r\n"))
        if fence is not None:
            assert cur is not None
            cur.end = end
            m = _FENCE.match(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
                close()
            continue
        m = _FENCE.match(line)
        if m:
            close()
            fence = m.group(1)
            cur = _Block("code", pos, end)
            continue
        hm = _HEADING.match(line.rstrip("\r\n"))
        if hm:
            close()
            blocks.append(_Block("heading", pos, end, len(hm.group(1)), hm.group(2).strip()))
            continue
        if not stripped:
            close()
            continue
        kind = "table" if stripped.startswith("|") else "para"
        if cur is not None and cur.kind == kind:
            cur.end = end
        else:
            close()
            cur = _Block(kind, pos, end)
    close()  # an unclosed fence runs to the end of the text
    return blocks


def _build_tree(text: str, title: str, blocks: list[_Block]) -> _Section:
    root = _Section(title=title, level=0, path=(title,) if title else (), start=0)
    stack = [root]
    first_heading = True
    for b in blocks:
        if b.kind == "heading":
            # A leading level-1 heading that repeats the title is the root's own heading.
            if first_heading and b.level == 1 and not root.blocks and (
                not title or b.title.strip().lower() == title.strip().lower()
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
        max_tokens: the most tokens a chunk may have unless one atomic block is larger
            (default 800).

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
            text: the document body; offsets in the chunks index into it.

        Returns:
            A list of Chunk; empty when the text has no content.
        """
        blocks = parse_blocks(text)
        if not blocks:
            return []
        root = _build_tree(text, title, blocks)
        pieces: list[_Piece] = []
        self._emit(text, root, pieces, parent=None)
        pieces = self._merge(text, pieces)
        return self._to_chunks(doc_id, text, pieces)

    # -- steps --------------------------------------------------------------------------------
    def _tokens(self, text: str, start: int, end: int, path: tuple[str, ...] = ()) -> int:
        return count_tokens(text[start:end]) + (count_tokens(" > ".join(path)) if path else 0)

    def _emit(self, text: str, sec: _Section, out: list[_Piece], parent: int | None) -> None:
        end = sec.all_end()
        if end <= sec.start:
            return
        slug_title = sec.title
        if self._tokens(text, sec.start, end, sec.path) <= self.max_tokens:
            out.append(_Piece(sec.start, end, sec.path, slug_title, parent))
            return
        # Own text (heading line + blocks before the first subsection), packed by blocks.
        own_end = sec.children[0].start if sec.children else end
        my_index = parent
        units = self._units(text, sec.start, own_end, sec.blocks, sec.path)
        for i, (s, e) in enumerate(self._pack(text, units, sec.path)):
            out.append(_Piece(s, e, sec.path, slug_title, parent))
            if i == 0:
                my_index = len(out) - 1
        for child in sec.children:
            self._emit(text, child, out, my_index)

    def _units(self, text, start, end, blocks, path) -> list[tuple[int, int]]:
        """Atomic spans of a section's own text: the heading line joins the first block."""
        spans: list[tuple[int, int]] = []
        own = [b for b in blocks if b.start >= start and b.end <= end]
        lead = start
        for b in own:
            s = lead if lead is not None else b.start
            lead = None
            if b.kind == "para" and self._tokens(text, s, b.end, path) > self.max_tokens:
                spans.extend(self._sentences(text, s, b.end))
            elif b.kind in ("code", "table") and self._tokens(text, s, b.end) > HARD_MAX_TOKENS:
                spans.extend(self._line_spans(text, s, b.end))
            else:
                spans.append((s, b.end))
        if lead is not None and end > start:
            spans.append((start, end))  # heading only
        return spans

    def _sentences(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        spans, s = [], start
        for m in _SENTENCE_END.finditer(text, start, end):
            spans.append((s, m.start()))
            s = m.end()
        spans.append((s, end))
        return [sp for sp in spans if sp[1] > sp[0]]

    def _line_spans(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        spans, s = [], start
        for m in re.finditer(r"\n", text[start:end]):
            spans.append((s, start + m.start()))
            s = start + m.end()
        spans.append((s, end))
        return [sp for sp in spans if sp[1] > sp[0]]

    def _pack(self, text, units, path) -> list[tuple[int, int]]:
        packed: list[tuple[int, int]] = []
        cur: tuple[int, int] | None = None
        for s, e in units:
            if cur is None:
                cur = (s, e)
            elif self._tokens(text, cur[0], e, path) <= self.max_tokens:
                cur = (cur[0], e)
            else:
                packed.append(cur)
                cur = (s, e)
        if cur is not None:
            packed.append(cur)
        return packed

    def _merge(self, text: str, pieces: list[_Piece]) -> list[_Piece]:
        if not pieces:
            return pieces
        merged: list[_Piece] = [pieces[0]]
        remap = {0: 0}
        for i, p in enumerate(pieces[1:], start=1):
            last = merged[-1]
            common = _common_prefix(last.path, p.path)
            small = (
                self._tokens(text, last.start, last.end, last.path) < self.min_tokens
                or self._tokens(text, p.start, p.end, p.path) < self.min_tokens
            )
            if small and last.end <= p.start and (
                self._tokens(text, last.start, p.end, common) <= self.max_tokens
            ):
                merged[-1] = _Piece(last.start, p.end, common, last.slug_title, last.parent)
            else:
                merged.append(p)
            remap[i] = len(merged) - 1
        for p in merged:
            if p.parent is not None:
                p.parent = remap.get(p.parent)
        return merged

    def _to_chunks(self, doc_id: str, text: str, pieces: list[_Piece]) -> list[Chunk]:
        kept: list[tuple[_Piece, int, int]] = []
        index_of: dict[int, int] = {}
        for i, p in enumerate(pieces):
            s, e = p.start, p.end
            while s < e and text[s].isspace():
                s += 1
            while e > s and text[e - 1].isspace():
                e -= 1
            if e > s:
                index_of[i] = len(kept)
                kept.append((p, s, e))
        ids: list[str] = []
        used: dict[str, int] = {}
        for p, _, _ in kept:
            base = slugify(p.slug_title) if p.slug_title else "text"
            n = used.get(base, 0) + 1
            used[base] = n
            ids.append(f"{doc_id}#{base}" if n == 1 else f"{doc_id}#{base}-{n}")
        chunks = []
        for i, (p, s, e) in enumerate(kept):
            parent_i = index_of.get(p.parent) if p.parent is not None else None
            body = text[s:e]
            head = " > ".join(h for h in p.path if h)
            indexed = f"{head}\n{body}" if head else body
            chunks.append(
                Chunk(
                    chunk_id=ids[i],
                    doc_id=doc_id,
                    heading_path=p.path,
                    text=body,
                    start=s,
                    end=e,
                    token_count=count_tokens(indexed),
                    prev_id=ids[i - 1] if i > 0 else None,
                    next_id=ids[i + 1] if i + 1 < len(ids) else None,
                    parent_id=ids[parent_i] if parent_i is not None and parent_i != i else None,
                )
            )
        return chunks


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for x, y in zip(a, b):
        if x != y:
            break
        out.append(x)
    return tuple(out)
