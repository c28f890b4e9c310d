"""Retrievers behind one interface: ``bm25``, ``dense``, ``hybrid`` and ``shipped``.

``Retriever.search(query, k, *, principal=None, filters=None) -> list[Hit]`` (DESIGN.md). Every
retriever passes the principal's groups into the Store as a filter, so permission filtering
happens inside the search and the top-k stays full. ``principal=None`` means the anonymous
principal, who sees public documents only. Ties always break by chunk id ascending.

* ``bm25``: our analyzer's terms, BM25 in the store.
* ``dense``: cosine similarity of the query embedding.
* ``hybrid``: reciprocal rank fusion (k=60) of the top ``depth`` of both.
* ``shipped``: hybrid, then exact-identifier pinning: when the query names an identifier
  (``E-1004``), chunks of documents whose *title* names it come first; a mere mention elsewhere
  does not pin. Query and titles fold Unicode dashes alike (``find_identifiers``), so a title
  written ``E\u20111004`` (non-breaking hyphen) is pinned for the query ``E-1004`` and back.
  Then entry pinning: when the query names a code name (``fs.rm``, ``--emit``,
  ``unused_variables``, the ``nullglob`` of ``-s nullglob``) or asks "what is/does X", the (at
  most ``HEADING_PINS``) chunks holding X's reference entry come next, best BM25 first: a
  section headed with it (``fs.rm(path[, options])``), a list item or definition led by it, a
  table row starting with it (:func:`citewise.text.names.entry_offsets`).
  Then mention pinning: a compound code name of the query (``png_malloc_warn``,
  ``--with-link-size``: one analyzer term joined by ``_``, ``-`` or ``.``) that at most
  ``MENTION_PINS`` chunks contain pins those chunks, in the BM25 order of the whole question. Such a rare exact name
  is the strongest evidence of where the answer lies, and dense similarity, which sees only
  its word pieces, can push it out of the fused top k; a name found in more chunks is left
  to fusion.
"""

from __future__ import annotations

import contextvars
import dataclasses
import threading
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

from citewise.core import Filters, Hit, Principal
from citewise.models.embedding import Embedder
from citewise.retrieval.fusion import RRF_K, reciprocal_rank_fusion
from citewise.retrieval.registry import make_retriever, register  # noqa: F401 - make_retriever re-exported
from citewise.store.base import ScoredChunk, Store
from citewise.telemetry.decorators import traced_retrieval
from citewise.text.analyzer import analyze, find_identifiers
from citewise.text.names import code_names, entry_names, entry_offsets

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

#: The built-in retriever names (each class registers itself: :mod:`citewise.retrieval.registry`).
RETRIEVERS = (
    "bm25",
    "dense",
    "hybrid",
    "hybrid-prf",
    "shipped",
    "hierarchical",
    "tuned",
    "raptor-collapsed",
    "raptor-tree",
)

#: Chunks pinned per code name by their section heading (:class:`ShippedRetriever`).
HEADING_PINS = 2
#: BM25 candidates searched for a heading that names a code name.
HEADING_DEPTH = 100
#: A compound code name found in at most this many chunks pins them all (:class:`ShippedRetriever`).
MENTION_PINS = 2


_LEGS: ThreadPoolExecutor | None = None
_LEGS_LOCK = threading.Lock()


def _legs() -> ThreadPoolExecutor:
    """The threads that run hybrid queries' dense legs (created on first use; 4 queries at once)."""
    global _LEGS
    with _LEGS_LOCK:
        if _LEGS is None:
            from concurrent.futures import ThreadPoolExecutor

            _LEGS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="citewise-dense-leg")
        return _LEGS


@runtime_checkable
class Retriever(Protocol):
    """Anything that ranks chunks for a query."""

    name: str

    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        """At most k hits, best first, ranks 1..n, visible to ``principal``."""
        ...


def effective_filters(principal: Principal | None, filters: Filters | None) -> Filters:
    """Filters with the principal's groups (anonymous = public only) merged in.

    A ``filters.groups`` given explicitly is intersected with the principal's groups, so a
    caller can narrow but never widen what the principal may read.
    """
    principal = principal or Principal()
    groups = principal.all_groups()
    if filters is None:
        return Filters(groups=groups)
    if filters.groups is not None:
        groups = tuple(g for g in groups if g in set(filters.groups))
    return dataclasses.replace(filters, groups=groups)


def _hits(items: Sequence[ScoredChunk], stage: str, k: int) -> list[Hit]:
    return [
        Hit(chunk_id=c.chunk_id, doc_id=c.doc_id, score=c.score, rank=i, stage=stage, title=c.title)
        for i, c in enumerate(items[:k], start=1)
    ]


@register("bm25")
class BM25Retriever:
    """BM25 over the analyzed lexical field (the Store's native full-text index)."""

    name = "bm25"

    def __init__(self, store: Store):
        self.store = store

    @classmethod
    def from_name(cls, name: str, store: Store, embedder: Embedder) -> "BM25Retriever":
        """The registry's factory: BM25 needs no embedder."""
        return cls(store)

    @traced_retrieval
    def candidates(self, query: str, k: int, filters: Filters) -> list[ScoredChunk]:
        return self.store.lexical_search(analyze(query), k, filters)

    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        return _hits(self.candidates(query, k, effective_filters(principal, filters)), "bm25", k)


@register("dense")
class DenseRetriever:
    """Cosine similarity between the query embedding and chunk embeddings."""

    name = "dense"

    def __init__(self, store: Store, embedder: Embedder):
        self.store = store
        self.embedder = embedder

    @traced_retrieval
    def candidates(self, query: str, k: int, filters: Filters) -> list[ScoredChunk]:
        if not query.strip():
            return []
        return self.store.vector_search(self.embedder.embed([query])[0], k, filters)

    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        return _hits(self.candidates(query, k, effective_filters(principal, filters)), "dense", k)


@register("hybrid")
class HybridRetriever:
    """Reciprocal rank fusion of BM25 and dense candidates.

    Args:
        depth: candidates taken from each list (at least k).
        rrf_k: the RRF constant (Cormack et al. 2009: 60).
    """

    name = "hybrid"

    def __init__(self, store: Store, embedder: Embedder, depth: int = 100, rrf_k: int = RRF_K):
        self.bm25 = BM25Retriever(store)
        self.dense = DenseRetriever(store, embedder)
        self.depth = depth
        self.rrf_k = rrf_k

    def fused(self, query: str, k: int, filters: Filters) -> list[ScoredChunk]:
        """The RRF list of both legs' top ``depth``. When the store says its dense search runs
        outside the GIL (``concurrent_legs``: LanceDB's IVF scan at scale), the dense leg runs in
        a second thread beside BM25; the lists, and so the result, are the same either way."""
        depth = max(k, self.depth)
        if self.dense.store.concurrent_legs():
            dense = _legs().submit(contextvars.copy_context().run, self.dense.candidates, query, depth, filters)
            try:
                lex = self.bm25.candidates(query, depth, filters)
            except BaseException:
                dense.exception()  # the store is not left in use by the other thread
                raise
            vec = dense.result()
        else:
            lex = self.bm25.candidates(query, depth, filters)
            vec = self.dense.candidates(query, depth, filters)
        by_id = {c.chunk_id: c for c in vec}
        by_id.update({c.chunk_id: c for c in lex})
        fused = reciprocal_rank_fusion([[c.chunk_id for c in lex], [c.chunk_id for c in vec]], k=self.rrf_k)
        # direct construction: dataclasses.replace on ~170 fused chunks was ~a third of a
        # hybrid query's Python time (cProfile, bench/hybrid_latency.py)
        return [
            ScoredChunk(c.chunk_id, c.doc_id, c.title, s) if type(c) is ScoredChunk else dataclasses.replace(c, score=s)
            for c, s in ((by_id[cid], s) for cid, s in fused)
        ]

    @traced_retrieval
    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        return _hits(self.fused(query, k, effective_filters(principal, filters)), "rrf", k)


@register("shipped")
class ShippedRetriever(HybridRetriever):
    """Hybrid retrieval plus exact-identifier pinning (see module docstring).

    Pinned chunks come first in the order the identifiers appear in the query, each document's
    chunks in document order; the fused list follows with pinned chunks removed.
    """

    name = "shipped"

    @traced_retrieval
    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        f = effective_filters(principal, filters)
        pinned: list[ScoredChunk] = []
        seen: set[str] = set()
        for ident in find_identifiers(query):
            for c in self.store_titled(ident, f):
                if c.chunk_id not in seen:
                    seen.add(c.chunk_id)
                    pinned.append(c)
        for c in self.headed_with(query, f) + self.mentioning(query, f):
            if c.chunk_id not in seen:
                seen.add(c.chunk_id)
                pinned.append(c)
        rest = [c for c in self.fused(query, k, f) if c.chunk_id not in seen]
        hits = [Hit(c.chunk_id, c.doc_id, c.score, 0, "pinned", c.title) for c in pinned]
        hits += [Hit(c.chunk_id, c.doc_id, c.score, 0, "rrf", c.title) for c in rest]
        return [dataclasses.replace(h, rank=i) for i, h in enumerate(hits[:k], start=1)]

    def headed_with(self, query: str, filters: Filters) -> list[ScoredChunk]:
        """Chunks holding the reference entry of a name ``query`` asks about
        (:func:`citewise.text.names.entry_names`): their section heading, a heading line, a
        list item or definition lead, or a table row's first cell names it
        (:func:`citewise.text.names.entry_offsets`). Up to :data:`HEADING_PINS` per name, in
        BM25 order of the query (then of the name alone)."""
        names = entry_names(query)
        if not names:
            return []
        store = self.bm25.store
        cands = store.lexical_search(analyze(query), HEADING_DEPTH, filters)
        for name in names:
            cands += store.lexical_search(analyze(name)[:1], HEADING_DEPTH, filters)
        order = list(dict.fromkeys(c.chunk_id for c in cands))
        by_id = {c.chunk_id: c for c in cands}
        stored = store.get_chunks(order)
        out: list[ScoredChunk] = []
        for name in names:
            found = 0
            for cid in order:
                sc = stored.get(cid)
                if sc is None or found >= HEADING_PINS:
                    continue
                heading = sc.heading_path[-1] if sc.heading_path else ""
                if entry_offsets(sc.text, name, heading) and by_id[cid] not in out:
                    out.append(by_id[cid])
                    found += 1
        return out

    def mentioning(self, query: str, filters: Filters) -> list[ScoredChunk]:
        """Every chunk containing a compound code name of ``query`` (one analyzer term holding
        ``_``, ``-`` or ``.``, :func:`citewise.text.names.code_names`) when at most
        :data:`MENTION_PINS` chunks contain it, in the BM25 order of the whole question; [] for a
        name found more often or nowhere."""
        out: list[ScoredChunk] = []
        for name in code_names(query):
            terms = analyze(name)
            if not terms or not any(ch in terms[0] for ch in "_-."):
                continue
            found = self.bm25.store.lexical_search(terms[:1], MENTION_PINS + 1, filters)
            if len(found) <= MENTION_PINS:
                out += found
        if len(out) > 1:  # the chunk the whole question matches best first (a reference section
            # before a changelog line that also names the option)
            whole = self.bm25.store.lexical_search(analyze(query), HEADING_DEPTH, filters)
            rank = {c.chunk_id: i for i, c in enumerate(whole)}
            out.sort(key=lambda c: rank.get(c.chunk_id, len(rank)))
        return out

    def store_titled(self, identifier: str, filters: Filters) -> list[ScoredChunk]:
        return self.bm25.store.titled_with(identifier, filters)
