"""Hierarchical retrieval: a document level searched first, then the chunks inside the top documents.

**Document level.** One entry per document: its title, its heading outline (the distinct section
headings in document order) and a summary. The default summary is extractive — the document's
most central sentences, centroid-based (Radev, Jing, Styś and Tam 2004, "Centroid-based
summarization of multiple documents"): each sentence's TF-IDF vector (analyzer terms, IDF over
the corpus' documents) is compared by cosine with the document's centroid (the sum of its
sentences' vectors), and the best :data:`SUMMARY_SENTENCES` (at most :data:`SUMMARY_WORDS`
words) are kept in document order. ``citewise summarize --llm`` replaces them with summaries
written by the configured chat model. Each entry records the summary's ``model`` and the
document's ``content_hash``; :meth:`DocLevel.refresh` re-summarises (extractively) exactly the
documents whose hash changed, drops deleted ones and re-embeds only what changed, and the
retriever refreshes before it searches, so a summary is never stale.

The document level is kept by the store (:func:`citewise.store.derived.summaries_of`: files in
``<index>/doclevel/`` beside the embedded store, a table of a PostgreSQL store), and is searched
in memory: BM25 (Robertson and Zaragoza 2009,
k1 = 0.9, b = 0.4 as in Anserini) over the analyzed entry text, and cosine over the entry's
embedding (same embedder as the chunks), fused by RRF. The permission filter is applied to the
document level before ranking (an entry carries its document's groups), so the chunk stage
always has visible documents to look in.

**Search** (:class:`HierarchicalRetriever`): the top ``max(doc_depth, k)`` documents by the
document level; then hybrid chunk retrieval (BM25 + dense, RRF) restricted to those documents
(``Filters.doc_ids``, inside the store, with the caller's permission/version/date filters); each
chunk's final score is ``1/(60 + chunk rank) + 1/(60 + its document's rank)`` (RRF of the two
levels), ties by chunk id. If fewer than k chunks come back, the flat hybrid list fills the rest,
so the top-k stays full.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence, cast

import numpy as np

from citewise.core import Filters, Hit, Principal
from citewise.models.embedding import Embedder
from citewise.retrieval.fusion import RRF_K, reciprocal_rank_fusion
from citewise.retrieval.registry import register
from citewise.retrieval.retrievers import HybridRetriever, effective_filters
from citewise.store.base import Store, StoredChunk
from citewise.store.derived import FolderSummaries, SummaryEntry, SummaryTable, summaries_of
from citewise.text.analyzer import analyze
from citewise.text.sentences import split_sentences

if TYPE_CHECKING:
    from citewise.models.chat import ChatModel

#: Sentences kept by the extractive summary, and its word budget.
SUMMARY_SENTENCES = 3
SUMMARY_WORDS = 80
#: Name recorded for extractive summaries (bump when the method changes: entries refresh).
EXTRACTIVE_MODEL = "extractive-centroid-v1"
#: BM25 parameters of the document level (Anserini defaults).
BM25_K1, BM25_B = 0.9, 0.4
#: Documents whose chunks are searched, at least.
DOC_DEPTH = 20
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_MARKUP = re.compile(r"\*\*|`")  # emphasis and code marks, dropped from summaries


@dataclass(frozen=True)
class DocEntry:
    """One document at the document level.

    Attributes:
        doc_id, title: the document.
        outline: distinct section headings in document order (the title excluded).
        summary: the summary text.
        model: what wrote the summary (:data:`EXTRACTIVE_MODEL` or the chat model's name).
        content_hash: the document's content hash when the summary was made.
        groups: the document's permission groups.
    """

    doc_id: str
    title: str
    outline: tuple[str, ...]
    summary: str
    model: str
    content_hash: str
    groups: tuple[str, ...]

    @property
    def text(self) -> str:
        """What is indexed and embedded: title, outline, summary (one line each)."""
        return "\n".join(p for p in (self.title, " ; ".join(self.outline), self.summary) if p)


def doc_chunks(store: Store) -> dict[str, list[str]]:
    """``{doc_id: [chunk_id, ...]}`` in document order (by ``prev_id``/``next_id`` links)."""
    return {d: sorted(c for c, _, _ in rows) for d, rows in store.chunk_versions().items()}


def _ordered(chunks: dict[str, StoredChunk]) -> list[StoredChunk]:
    """Stored chunks of one document in document order (following ``next_id`` from the head)."""
    by_id = dict(chunks)
    heads = sorted(c for c, sc in by_id.items() if sc.prev_id not in by_id)
    out: list[StoredChunk] = []
    seen: set[str] = set()
    for h in heads:
        cur: str | None = h
        while cur is not None and cur in by_id and cur not in seen:
            seen.add(cur)
            out.append(by_id[cur])
            cur = by_id[cur].next_id
    out += [by_id[c] for c in sorted(by_id) if c not in seen]
    return out


def extractive_summary(
    sentences: Sequence[str], idf: Callable[[str], float], n: int = SUMMARY_SENTENCES, max_words: int = SUMMARY_WORDS
) -> str:
    """The ``n`` sentences closest (TF-IDF cosine) to the centroid of all, in their original order,
    within ``max_words`` words (the first chosen sentence is always kept, cut at the budget).

    Ties break by position (earlier first). Sentences without any analyzer term never count.

    >>> extractive_summary(["Cats purr.", "Cats and dogs purr loudly.", "Stocks fell."], lambda t: 1.0, n=1)
    'Cats and dogs purr loudly.'
    """
    vecs: list[dict[str, float]] = []
    for s in sentences:
        tf = Counter(analyze(s))
        vecs.append({t: (1 + math.log(c)) * idf(t) for t, c in tf.items()})
    centroid: Counter[str] = Counter()
    for v in vecs:
        centroid.update(v)
    cnorm = math.sqrt(sum(x * x for x in centroid.values())) or 1.0

    def cos(v: dict[str, float]) -> float:
        norm = math.sqrt(sum(x * x for x in v.values()))
        return sum(x * centroid[t] for t, x in v.items()) / (norm * cnorm) if norm else -1.0

    ranked = sorted(range(len(sentences)), key=lambda i: (-cos(vecs[i]), i))
    chosen: list[int] = []
    words = 0
    for i in ranked:
        if len(chosen) >= n or cos(vecs[i]) < 0:
            break
        w = len(sentences[i].split())
        if chosen and words + w > max_words:
            continue
        chosen.append(i)
        words += w
    text = " ".join(" ".join(_MARKUP.sub("", sentences[i]).split()) for i in sorted(chosen))
    parts = text.split()
    return " ".join(parts[:max_words]) if len(parts) > max_words else text


def document_sentences(chunks: Sequence[StoredChunk]) -> list[str]:
    """Prose sentences of a document's chunks (header-row copies of split tables excluded)."""
    out: list[str] = []
    for sc in chunks:
        text = sc.text[len(sc.text) - (sc.end - sc.start) :] if sc.end - sc.start < len(sc.text) else sc.text
        out.extend(text[s:e] for s, e in split_sentences(text))
    return out


def outline_of(chunks: Sequence[StoredChunk], title: str) -> tuple[str, ...]:
    """Distinct headings in document order, the title left out: each chunk's heading path, then
    the Markdown heading lines inside its text (a chunk may hold several small sections)."""
    seen: dict[str, None] = {}
    for sc in chunks:
        text = getattr(sc, "text", "")
        for h in list(sc.heading_path) + [m.group(1) for m in _HEADING.finditer(text)]:
            h = " ".join(_MARKUP.sub("", h).split())
            if h and h != title:
                seen.setdefault(h, None)
    return tuple(seen)


class _BM25:
    """In-memory BM25 over analyzed texts (see module docstring for the parameters)."""

    def __init__(self, texts: Sequence[str]):
        self.postings: dict[str, list[tuple[int, int]]] = {}
        lengths = np.zeros(len(texts), dtype=np.float64)
        for i, t in enumerate(texts):
            terms = analyze(t)
            lengths[i] = len(terms)
            for term, c in Counter(terms).items():
                self.postings.setdefault(term, []).append((i, c))
        self.n = len(texts)
        avg = lengths.mean() if self.n else 1.0
        self.norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths / (avg or 1.0))

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.n, dtype=np.float64)
        for term in set(analyze(query)):
            post = self.postings.get(term)
            if not post:
                continue
            idx = np.fromiter((i for i, _ in post), dtype=np.int64, count=len(post))
            tf = np.fromiter((c for _, c in post), dtype=np.float64, count=len(post))
            out[idx] += self.idf(term) * tf * (BM25_K1 + 1) / (tf + self.norm[idx])
        return out


class DocLevel:
    """The document level of one index folder (see module docstring).

    Args:
        folder: ``<index>/doclevel``.
        embedder: embeds entry texts (must be the index's embedder).
    """

    def __init__(self, table: SummaryTable | str | Path, embedder: Embedder):
        self.table: SummaryTable = FolderSummaries(table) if isinstance(table, (str, Path)) else table
        self.embedder = embedder
        self.entries: list[DocEntry] = []
        self.vectors = np.zeros((0, embedder.dim), np.float32)
        self._bm25: _BM25 | None = None
        self._load()

    @property
    def where(self) -> str:
        """Where the level is kept (a folder, or a server store's table)."""
        return self.table.where

    # -- persistence ----------------------------------------------------------------------------
    def _load(self) -> None:
        got = self.table.load(self.embedder.name)
        if got is None:
            return  # none yet, another embedder's, or unreadable: rebuilt on the next refresh
        rows, vectors = got
        try:
            entries = [
                DocEntry(
                    d["doc_id"],
                    d["title"],
                    tuple(d["outline"]),
                    d["summary"],
                    d["model"],
                    d["content_hash"],
                    tuple(d["groups"]),
                )
                for d in rows
            ]
        except (KeyError, TypeError):
            return
        if vectors.shape != (len(entries), self.embedder.dim):
            return
        self.entries, self.vectors = entries, vectors.astype(np.float32)

    def save(self) -> None:
        """Replace the stored level (one atomic replace per file, or one transaction)."""
        self.table.save(
            self.embedder.name, [cast(SummaryEntry, dataclasses.asdict(e)) for e in self.entries], self.vectors
        )

    # -- building -------------------------------------------------------------------------------
    def refresh(
        self,
        store: Store,
        summarizer: Callable[[DocEntry, list[str]], tuple[str, str]] | None = None,
        force: bool = False,
    ) -> dict[str, int]:
        """Bring the level up to date with ``store``.

        A document is (re)summarised when it is new, its content hash changed, or ``force``
        (or, with a ``summarizer``, when its summary was not written by that summarizer's model).
        ``summarizer(entry, sentences) -> (summary, model)`` replaces the extractive summary.

        Returns:
            counts: ``added``, ``updated``, ``deleted``, ``unchanged``, ``documents``.
        """
        docs = store.documents()
        have = {e.doc_id: (i, e) for i, e in enumerate(self.entries)}
        want_model = getattr(summarizer, "model", None)
        todo = [
            d
            for d, de in docs.items()
            if force
            or d not in have
            or have[d][1].content_hash != de.content_hash
            or (want_model and have[d][1].model != want_model)
        ]
        deleted = [d for d in have if d not in docs]
        regrouped = [d for d, de in docs.items() if d in have and d not in todo and have[d][1].groups != de.groups]
        if not todo and not deleted and not regrouped and self.table.exists():
            return {"added": 0, "updated": 0, "deleted": 0, "unchanged": len(docs), "documents": len(docs)}
        chunk_ids = doc_chunks(store) if todo else {}
        idf, stored = self._read(store, chunk_ids, set(todo)) if todo else (None, {})
        new: dict[str, DocEntry] = {}
        for d in todo:
            assert idf is not None  # read above whenever todo is not empty
            chunks = _ordered(stored.get(d, {}))
            de = docs[d]
            sentences = document_sentences(chunks)
            entry = DocEntry(
                d,
                de.title,
                outline_of(chunks, de.title),
                extractive_summary(sentences, idf),
                EXTRACTIVE_MODEL,
                de.content_hash,
                tuple(de.groups),
            )
            if summarizer is not None:
                summary, model = summarizer(entry, sentences)
                entry = dataclasses.replace(entry, summary=summary, model=model)
            new[d] = entry
        vecs = (
            self.embedder.embed([new[d].text for d in todo]) if todo else np.zeros((0, self.embedder.dim), np.float32)
        )
        new_vec = dict(zip(todo, np.asarray(vecs, dtype=np.float32)))
        entries: list[DocEntry] = []
        vectors: list[np.ndarray] = []
        for d in sorted(docs):
            if d in new:
                entries.append(new[d])
                vectors.append(new_vec[d])
            else:
                i, e = have[d]
                entries.append(dataclasses.replace(e, groups=tuple(docs[d].groups)))
                vectors.append(self.vectors[i])
        self.entries = entries
        self.vectors = np.stack(vectors).astype(np.float32) if vectors else np.zeros((0, self.embedder.dim), np.float32)
        self._bm25 = None
        self.save()
        added = sum(d not in have for d in todo)
        return {
            "added": added,
            "updated": len(todo) - added,
            "deleted": len(deleted),
            "unchanged": len(docs) - len(todo),
            "documents": len(docs),
        }

    @staticmethod
    def _read(
        store: Store, chunk_ids: dict[str, list[str]], keep: set[str]
    ) -> tuple[Callable[[str], float], dict[str, dict[str, StoredChunk]]]:
        """One batched pass over every chunk: IDF over documents (smoothed,
        ``log((N + 1) / (df + 1)) + 1``) and the stored chunks of the documents in ``keep``."""
        df: Counter[str] = Counter()
        kept: dict[str, dict[str, StoredChunk]] = {}
        docs = sorted(chunk_ids)
        for b in range(0, len(docs), 200):
            ids = [c for d in docs[b : b + 200] for c in chunk_ids[d]]
            per_doc: dict[str, set[str]] = {}
            for cid, sc in store.get_chunks(ids).items():
                per_doc.setdefault(sc.doc_id, set()).update(analyze(sc.text))
                if sc.doc_id in keep:
                    kept.setdefault(sc.doc_id, {})[cid] = sc
            for terms in per_doc.values():
                df.update(terms)
        n = max(len(docs), 1)
        return (lambda t: math.log((n + 1) / (df.get(t, 0) + 1)) + 1.0), kept

    # -- search ---------------------------------------------------------------------------------
    def search(self, query: str, query_vector: np.ndarray, k: int, filters: Filters) -> list[tuple[str, float]]:
        """Top-k ``(doc_id, rrf score)`` of the visible entries: BM25 and cosine fused by RRF.

        Visible: groups intersect ``filters.groups`` (None = all), in ``filters.doc_ids`` if
        given, and not a history version (``id@version``) unless the filters ask for a date or
        a version (the chunk stage then applies them exactly).
        """
        if not self.entries:
            return []
        if self._bm25 is None:
            self._bm25 = _BM25([e.text for e in self.entries])
        groups = None if filters.groups is None else set(filters.groups)
        ids = None if filters.doc_ids is None else set(filters.doc_ids)
        history_ok = filters.as_of is not None or filters.version is not None
        visible = np.array(
            [
                (groups is None or bool(groups & set(e.groups)))
                and (ids is None or e.doc_id in ids)
                and (history_ok or "@" not in e.doc_id)
                for e in self.entries
            ],
            dtype=bool,
        )
        if not visible.any():
            return []
        depth = max(k, 100)
        lex = self._bm25.scores(query)
        cos = self.vectors @ np.asarray(query_vector, dtype=np.float32)
        rankings: list[list[str]] = []
        for s, need_positive in ((lex, True), (cos, False)):
            cand = np.flatnonzero(visible & (s > 0)) if need_positive else np.flatnonzero(visible)
            order = sorted(cand.tolist(), key=lambda i: (-s[i], self.entries[i].doc_id))[:depth]
            rankings.append([self.entries[i].doc_id for i in order])
        return reciprocal_rank_fusion(rankings)[:k]


def base_embedder(embedder: Embedder) -> Embedder:
    """The model under any embedder wrappers (a query cache or memo, the query side of the
    model), whose ``name`` keys caches and whose ``embed`` embeds passages."""
    while True:
        inner = getattr(embedder, "embedder", None) or getattr(embedder, "base", None)
        if inner is None or inner is embedder:
            return embedder
        embedder = inner


_LEVELS: dict[tuple[str, str], DocLevel] = {}


def doc_level_for(store: Store, embedder: Embedder) -> DocLevel:
    """The (refreshed) document level of ``store``'s index, cached per process.

    Raises:
        CitewiseError: the store keeps no summaries (:func:`citewise.store.derived.summaries_of`).
    """
    table = summaries_of(store)
    base = base_embedder(embedder)
    key = (table.where, base.name)
    level = _LEVELS.get(key)
    if level is None:
        level = _LEVELS[key] = DocLevel(table, base)
    level.refresh(store)
    return level


@register("hierarchical")
class HierarchicalRetriever:
    """Documents first, then chunks inside the top documents (module docstring).

    Args:
        store, embedder: the index's.
        doc_depth: documents whose chunks are searched (at least k).
        chunk_depth: hybrid candidates fetched inside those documents.
    """

    name = "hierarchical"

    def __init__(self, store: Store, embedder: Embedder, doc_depth: int = DOC_DEPTH, chunk_depth: int = 100):
        self.store = store
        self.embedder = embedder
        self.level = doc_level_for(store, embedder)
        self.hybrid = HybridRetriever(store, embedder, depth=chunk_depth)
        self.doc_depth = doc_depth

    def search(
        self, query: str, k: int = 10, *, principal: Principal | None = None, filters: Filters | None = None
    ) -> list[Hit]:
        f = effective_filters(principal, filters)
        if not query.strip():
            return []
        qvec = self.embedder.embed([query])[0]
        docs = self.level.search(query, qvec, max(self.doc_depth, k), f)
        doc_rank = {d: r for r, (d, _) in enumerate(docs, start=1)}
        fused: list[Hit] = []
        if docs:
            inner = dataclasses.replace(f, doc_ids=tuple(d for d in doc_rank if f.doc_ids is None or d in f.doc_ids))
            chunks = self.hybrid.fused(query, k, inner)
            scored = [
                (c, 1.0 / (RRF_K + r) + 1.0 / (RRF_K + doc_rank.get(c.doc_id, 10**6)))
                for r, c in enumerate(chunks, start=1)
            ]
            scored.sort(key=lambda cs: (-cs[1], cs[0].chunk_id))
            fused = [Hit(c.chunk_id, c.doc_id, s, 0, "hierarchical", c.title) for c, s in scored]
        if len(fused) < k:  # fill from the flat list so the top-k stays full
            seen = {h.chunk_id for h in fused}
            fused += [
                Hit(c.chunk_id, c.doc_id, c.score, 0, "rrf", c.title)
                for c in self.hybrid.fused(query, k, f)
                if c.chunk_id not in seen
            ]
        return [dataclasses.replace(h, rank=i) for i, h in enumerate(fused[:k], start=1)]


_SUMMARY_PROMPT = (
    "Summarise the document below in at most three sentences for a search index: what it is "
    "about and which questions it answers. Use only the document. Reply with the summary only."
)


class LLMSummarizer:
    """Document summaries written by a chat model (``citewise summarize --llm``).

    Called as ``summarizer(entry, sentences) -> (summary, model)``. The document's sentences
    (first ``max_chars`` characters, cut to what the model's context window leaves:
    :func:`citewise.models.chat.document_room`) reach the model fenced as data. When the endpoint fails or
    answers nothing, the extractive summary is kept (``model`` stays extractive, so the next
    ``summarize --llm`` tries again) and the failure is counted in ``errors``.

    Args:
        chat: a :class:`citewise.models.chat.ChatModel`; ``model``: its name, recorded per entry.
    """

    def __init__(self, chat: ChatModel, model: str, max_chars: int = 6000):
        self.chat = chat
        self.model = f"llm:{model}"
        self.max_chars = max_chars
        self.errors: list[str] = []

    def __call__(self, entry: DocEntry, sentences: Sequence[str]) -> tuple[str, str]:
        from citewise.models.chat import ChatError, document_room
        from citewise.text.tokens import truncate_tokens

        body = " ".join(" ".join(s.split()) for s in sentences)[: self.max_chars]
        room = document_room(self.chat, 200, _SUMMARY_PROMPT, f"Title: {entry.title}\n<document>\n</document>")
        body = truncate_tokens(body, room) if room > 0 else ""
        user = f"Title: {entry.title}\n<document>\n{body}\n</document>"
        try:
            reply = (
                self.chat.chat(
                    [{"role": "system", "content": _SUMMARY_PROMPT}, {"role": "user", "content": user}], max_tokens=200
                ).content
                or ""
            )
        except ChatError as e:
            self.errors.append(f"{entry.doc_id}: {e}")
            return entry.summary, entry.model
        reply = " ".join(reply.split())
        if not reply:
            self.errors.append(f"{entry.doc_id}: empty summary")
            return entry.summary, entry.model
        return reply, self.model
