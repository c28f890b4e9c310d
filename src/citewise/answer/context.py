"""Context assembly: from ranked hits to the evidence a generator sees.

:class:`ContextAssembler` turns retrieved chunks (best first) into a :class:`Context`:

1. **Expand** (configurable): a retrieved chunk brings its neighbour (``prev_id`` / ``next_id``)
   when the neighbour's first heading matches ``neighbour_pattern`` (default: *Exceptions*,
   *Caveats*, *Limitations*, *Notes*), so a rule is not quoted without its exceptions; with
   ``expand_parent`` it also brings its parent section's chunk. Expanded chunks follow the chunk
   that brought them; one that was itself retrieved keeps its own rank and score (``via``
   ``retrieved``).
2. **Deduplicate**: a chunk whose term set has Jaccard similarity ≥ ``dedup_jaccard`` with an
   already kept chunk is dropped (near-duplicate pages, copied paragraphs).
3. **Fill the token budget** (``o200k_base`` counts of what is rendered, per
   :mod:`citewise.text.tokens`), in two passes: first the best chunk of each of up to
   ``min_sources`` distinct documents (room reserved for distinct sources), then the rest in
   rank order, a document never taking more than ``max_doc_share`` of the budget; then (with
   ``fill_share``) the room left goes to the chunks that cap held back, in rank order, so a
   one-document corpus still fills the budget. A first chunk larger than the whole budget is
   truncated rather than dropped.
4. **Order** (``ordering``): ``rank`` (retrieval order, expansions after their chunk),
   ``document`` (grouped by document in order of each document's best rank, chunks in document
   order), or ``edges`` (best chunks at the start and the end, weakest in the middle, because
   models use the middle of long contexts least: Liu et al. 2023, "Lost in the Middle").

Every :class:`ContextChunk` keeps its source identity (doc id, title, version, updated date,
character offsets in the source). :meth:`Context.render` fences each chunk's text between
markers carrying a nonce derived from the content (a document cannot forge its closing marker,
since the nonce is a hash of the text that contains it), for prompts that say: text inside the
fences is data, never instructions.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Sequence

from citewise.core import Citation, CitewiseError, prefix_length, source_span
from citewise.text.analyzer import analyze
from citewise.text.tokens import count_tokens, truncate_tokens

if TYPE_CHECKING:
    from citewise.store.base import StoredChunk

ORDERINGS = ("rank", "document", "edges")
DEFAULT_NEIGHBOUR_PATTERN = r"^(exceptions?|caveats?|limitations?|notes?|important)\b"
_HEADING = re.compile(r"^\s{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


@dataclass(frozen=True)
class ContextChunk:
    """One chunk in a context, with its source identity.

    Attributes:
        chunk_id, doc_id, title, version, updated: source identity (``updated`` ISO date or '').
        heading_path: headings from the document title down to the chunk.
        text: chunk text (possibly truncated to fit the budget; then ``end`` is moved too).
        start, end: character offsets of ``text`` in the source file.
        rank: retrieval rank of the chunk, or of the chunk that brought it (expansions).
        score: retrieval score (0 for expansions).
        via: ``retrieved`` | ``neighbour`` | ``parent``.
        token_bound: an upper bound of :attr:`tokens` known without the tokenizer (the stored
            chunk's ``token_count``, which counts its heading path too, + 1, plus the header's
            UTF-8 bytes: a BPE token holds at least one byte); 0 when none is known.
        effective: ISO date from which the document is in force ('' when not declared).

    ``tokens`` (property): ``o200k_base`` tokens of the rendered chunk (header line + text),
    counted on first use.
    """

    chunk_id: str
    doc_id: str
    title: str
    version: str
    updated: str
    heading_path: tuple[str, ...]
    text: str
    start: int
    end: int
    rank: int
    score: float = 0.0
    via: str = "retrieved"
    token_bound: int = 0
    effective: str = ""

    @cached_property
    def tokens(self) -> int:
        """``o200k_base`` tokens of the rendered chunk (header line + text)."""
        return count_tokens(self.header()) + count_tokens(self.text)

    def citation(self, start: int | None = None, end: int | None = None) -> Citation:
        """A :class:`Citation` of this chunk (or of ``[start, end)`` offsets inside its text), in
        source offsets. A chunk's text may open with a copied prefix (a split table's header, an
        entry's term lines: ``len(text) - (end - start)`` characters that are not at ``start`` in
        the source); an offset inside that prefix maps to the chunk's ``start``."""
        if start is None and end is None:
            return Citation(self.doc_id, self.title, self.version, self.updated, self.chunk_id, self.start, self.end)
        s, e = source_span(self.text, self.start, self.end, start or 0, len(self.text) if end is None else end)
        return Citation(self.doc_id, self.title, self.version, self.updated, self.chunk_id, s, e)

    def header(self) -> str:
        """The source line shown above the text: id, title, version, updated date."""
        bits = [f'id="doc:{self.doc_id}"', f'chunk="{self.chunk_id}"', f'title="{_attr(self.title)}"']
        if self.version:
            bits.append(f'version="{_attr(self.version)}"')
        if self.updated:
            bits.append(f'updated="{self.updated}"')
        return " ".join(bits)


def _attr(value: str) -> str:
    return value.replace('"', "'").replace("\n", " ")


@dataclass
class Context:
    """The assembled evidence for one question.

    Attributes:
        question: the question.
        chunks: chunks in presentation order.
        budget: token budget it was assembled for.
        dropped: ``{chunk_id: reason}`` for candidates left out (``duplicate``, ``budget``,
            ``document share``).
    """

    question: str
    chunks: list[ContextChunk]
    budget: int
    dropped: dict[str, str] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        """Tokens of all chunks as rendered (without the fence lines)."""
        return sum(c.tokens for c in self.chunks)

    def chunk(self, chunk_id: str) -> ContextChunk | None:
        """The chunk with this id, if present."""
        return next((c for c in self.chunks if c.chunk_id == chunk_id), None)

    def doc_ids(self) -> list[str]:
        """Distinct document ids, in presentation order."""
        return list(dict.fromkeys(c.doc_id for c in self.chunks))

    def chunks_of(self, doc_id: str) -> list[ContextChunk]:
        """This document's chunks, in presentation order."""
        return [c for c in self.chunks if c.doc_id == doc_id]

    @property
    def nonce(self) -> str:
        """12 hex digits of sha256 over the question and every chunk text (see module docstring)."""
        h = hashlib.sha256(self.question.encode("utf-8"))
        for c in self.chunks:
            h.update(b"\x00" + c.chunk_id.encode("utf-8") + b"\x00" + c.text.encode("utf-8"))
        return h.hexdigest()[:12]

    def render(self) -> str:
        """The chunks as fenced, untrusted data::

        <<<source-NONCE id="doc:ID" chunk="CHUNK" title="..." version="..." updated="...">>>
        text
        <<<end-NONCE>>>
        """
        n = self.nonce
        parts = [f"<<<source-{n} {c.header()}>>>\n{c.text}\n<<<end-{n}>>>" for c in self.chunks]
        return "\n\n".join(parts)


def _terms(text: str) -> frozenset[str]:
    return frozenset(analyze(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


class ContextAssembler:
    """Build a :class:`Context` from ranked chunks (see module docstring).

    Args:
        budget_tokens: o200k_base token budget for the chunks.
        max_doc_share: largest share of the budget one document may take (0 < x ≤ 1).
        min_sources: distinct documents whose best chunk is placed first (reserved room).
        dedup_jaccard: term-set Jaccard similarity at or above which a chunk is a near-duplicate.
        expand_neighbours: bring neighbours whose first heading matches ``neighbour_pattern``.
        neighbour_pattern: case-insensitive regex on the neighbour's first heading.
        expand_parent: bring the parent section's chunk.
        ordering: ``rank`` | ``document`` | ``edges``.
        fill_share: after the capped pass, give the budget no other document took to the chunks
            the share cap held back, in rank order (the cap reserves room for other sources; it
            does not leave the budget empty).

    Raises:
        CitewiseError: an unknown ordering or an out-of-range setting (the message names it).
    """

    def __init__(
        self,
        budget_tokens: int = 4000,
        max_doc_share: float = 0.6,
        min_sources: int = 3,
        dedup_jaccard: float = 0.85,
        expand_neighbours: bool = True,
        neighbour_pattern: str = DEFAULT_NEIGHBOUR_PATTERN,
        expand_parent: bool = False,
        ordering: str = "rank",
        fill_share: bool = True,
    ):
        if ordering not in ORDERINGS:
            raise CitewiseError(f"unknown context ordering '{ordering}' (valid: {', '.join(ORDERINGS)})")
        if budget_tokens < 1:
            raise CitewiseError(f"context budget must be at least 1 token, got {budget_tokens}")
        if not 0 < max_doc_share <= 1:
            raise CitewiseError(f"max_doc_share must be in (0, 1], got {max_doc_share}")
        self.budget_tokens = budget_tokens
        self.max_doc_share = max_doc_share
        self.min_sources = min_sources
        self.dedup_jaccard = dedup_jaccard
        self.expand_neighbours = expand_neighbours
        self.neighbour_re = re.compile(neighbour_pattern, re.I)
        self.expand_parent = expand_parent
        self.ordering = ordering
        self.fill_share = fill_share

    # -- expansion ---------------------------------------------------------------------------
    def _first_heading(self, text: str) -> str:
        m = _HEADING.search(text)
        if not m or text[: m.start()].strip():
            return ""
        return m.group(1).strip()

    def expansions(self, chunk, store) -> list[tuple[str, str]]:
        """``[(chunk_id, via)]`` to bring with ``chunk`` (neighbours matching the pattern, parent)."""
        want: list[tuple[str, str]] = []
        if self.expand_neighbours:
            ids = [i for i in (chunk.next_id, chunk.prev_id) if i]
            if ids:
                found = store.get_chunks(ids)
                for i in ids:
                    n = found.get(i)
                    if n is not None and self.neighbour_re.search(self._first_heading(n.text)):
                        want.append((i, "neighbour"))
        if self.expand_parent and chunk.parent_id:
            want.append((chunk.parent_id, "parent"))
        return want

    # -- assembly ----------------------------------------------------------------------------
    def assemble(self, question: str, hits: Sequence, store, chunks: dict | None = None) -> Context:
        """A :class:`Context` for ``question`` from ``hits`` (best first; objects with
        ``chunk_id``, ``rank``, ``score``). ``chunks`` may hold already fetched StoredChunks."""
        chunks = dict(chunks or {})
        need = [h.chunk_id for h in hits if h.chunk_id not in chunks]
        if need:
            chunks.update(store.get_chunks(need))
        # candidates in rank order, expansions right after the chunk that brought them
        cands: list[tuple[object, int, float, str]] = []
        seen: set[str] = set()
        # an expansion that is itself retrieved keeps its own rank and score
        as_hit = {h.chunk_id: h for h in reversed(hits)}
        for h in hits:
            c = chunks.get(h.chunk_id)
            if c is None or c.chunk_id in seen:
                continue
            seen.add(c.chunk_id)
            cands.append((c, h.rank, float(h.score), "retrieved"))
            extra = [(i, via) for i, via in self.expansions(c, store) if i not in seen]
            if extra:
                got = store.get_chunks([i for i, _ in extra])
                for i, via in extra:
                    if i in got and i not in seen:
                        seen.add(i)
                        own = as_hit.get(i)
                        if own is not None:
                            cands.append((got[i], own.rank, float(own.score), "retrieved"))
                        else:
                            cands.append((got[i], h.rank, 0.0, via))
        ctx_chunks = [self._context_chunk(c, rank, score, via) for c, rank, score, via in cands]
        dropped: dict[str, str] = {}
        # near-duplicates
        kept: list[ContextChunk] = []
        term_sets: list[frozenset[str]] = []
        for cc in ctx_chunks:
            ts = _terms(cc.text)
            if any(jaccard(ts, o) >= self.dedup_jaccard for o in term_sets):
                dropped[cc.chunk_id] = "duplicate"
                continue
            kept.append(cc)
            term_sets.append(ts)
        chosen = self._fill(kept, dropped)
        return Context(question, self._order(chosen), self.budget_tokens, dropped)

    def _context_chunk(self, c: StoredChunk, rank: int, score: float, via: str) -> ContextChunk:
        cc = ContextChunk(
            c.chunk_id,
            c.doc_id,
            c.title,
            c.version or "",
            c.updated or "",
            tuple(c.heading_path),
            c.text,
            c.start,
            c.end,
            rank,
            score,
            via,
            effective=c.effective or "",
        )
        if c.token_count <= 0:
            return cc
        return replace(cc, token_bound=c.token_count + 1 + len(cc.header().encode("utf-8")))

    def _fill(self, cands: list[ContextChunk], dropped: dict[str, str]) -> list[ContextChunk]:
        """The chunks that fit the budget (module docstring, step 3), in candidate order.

        Sizes are compared by their upper bounds (:attr:`ContextChunk.token_bound`) while those
        fit; the first comparison the bounds cannot settle switches to exact counts for the rest
        of the fill. A bound that fits implies the exact count fits, so every decision equals the
        one exact counting makes, and a context that fits by its bounds never loads the tokenizer.
        """
        budget = self.budget_tokens
        doc_cap = self.max_doc_share * budget
        chosen: dict[str, ContextChunk] = {}
        order = {c.chunk_id: i for i, c in enumerate(cands)}
        exact = False

        def size(cc: ContextChunk) -> int:
            return cc.token_bound if cc.token_bound and not exact else cc.tokens

        def within(cc: ContextChunk, others: list[ContextChunk], limit: float) -> bool:
            nonlocal exact
            if sum(size(o) for o in others) + size(cc) <= limit:
                return True
            if exact:
                return False
            exact = True
            return sum(size(o) for o in others) + size(cc) <= limit

        def take(cc: ContextChunk, enforce_share: bool) -> bool:
            if not within(cc, list(chosen.values()), budget):
                if chosen:
                    return False
                cc = self._truncate(cc, budget)
            if enforce_share and chosen:
                same = [o for o in chosen.values() if o.doc_id == cc.doc_id]
                if not within(cc, same, doc_cap):
                    dropped[cc.chunk_id] = "document share"
                    return False
            chosen[cc.chunk_id] = cc
            return True

        # pass 1: reserve room for distinct sources (best retrieved chunk of each document)
        docs_seen: set[str] = set()
        for cc in cands:
            if len(docs_seen) >= self.min_sources:
                break
            if cc.via != "retrieved" or cc.doc_id in docs_seen:
                continue
            docs_seen.add(cc.doc_id)
            take(cc, enforce_share=False)
        # pass 2: the rest in rank order, one document capped at max_doc_share of the budget
        for cc in cands:
            if cc.chunk_id in chosen:
                continue
            if cc.via != "retrieved" and not any(o.rank == cc.rank and o.via == "retrieved" for o in chosen.values()):
                dropped[cc.chunk_id] = "source not kept"
                continue
            if not take(cc, enforce_share=True) and cc.chunk_id not in dropped:
                dropped[cc.chunk_id] = "budget"
        # pass 3: the share cap keeps room for other documents; room no other document took goes
        # to the chunks it held back, in rank order (a one-document corpus such as a 190-page
        # manual would otherwise leave the budget unused and drop its own best chunks)
        if self.fill_share:
            for cc in cands:
                if dropped.get(cc.chunk_id) == "document share":
                    take(cc, enforce_share=False)
        for cid in chosen:
            dropped.pop(cid, None)
        return sorted(chosen.values(), key=lambda c: order[c.chunk_id])

    def _truncate(self, cc: ContextChunk, budget: int) -> ContextChunk:
        room = max(budget - count_tokens(cc.header()), 1)
        text = truncate_tokens(cc.text, room)
        prefix = prefix_length(cc.text, cc.start, cc.end)  # a copied prefix stays out of the source span
        return replace(cc, text=text, end=cc.start + max(0, len(text) - prefix), token_bound=0)

    def _order(self, chunks: list[ContextChunk]) -> list[ContextChunk]:
        if self.ordering == "rank":
            return chunks
        if self.ordering == "document":
            best: dict[str, int] = {}
            for i, c in enumerate(chunks):
                best.setdefault(c.doc_id, i)
            return sorted(chunks, key=lambda c: (best[c.doc_id], c.start, c.chunk_id))
        # edges: 1st, 3rd, 5th ... from the front, 2nd, 4th ... from the back
        front = chunks[0::2]
        back = chunks[1::2]
        return front + back[::-1]
