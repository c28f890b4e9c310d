"""Extractive answering without an LLM: quote the best sentences of retrieved chunks, cite each.

Deterministic. Steps:

1. Retrieve k chunks for the question (permission filter inside the search).
2. Evidence score of a chunk = cosine similarity between the question embedding and the chunk's
   stored embedding. A chunk pinned by an exact identifier in its document title counts as at
   least threshold-strong evidence (the user named that page).
3. Abstain ("I have no document on this.") when no chunk reaches the threshold.
4. Otherwise score the sentences of the (at most ``max_chunks``) evidence chunks:
   ``cosine(question, sentence) + lexical_weight * share of question terms in the sentence``,
   and keep up to ``max_sentences`` of them, each within ``relative_floor`` of the best, in
   document order within each chunk and chunk rank order across chunks.
5. Every sentence ends with ``[doc:ID]`` of the chunk it was taken from; citations carry title,
   version, updated date and character offsets in the source.
"""

from __future__ import annotations

import time

import numpy as np

from citewise.core import ABSTENTION_TEXT, Answer, Citation, Filters, Principal
from citewise.text.analyzer import analyze
from citewise.text.sentences import split_sentences


class ExtractiveAnswerer:
    """Answer by quoting retrieved sentences (see module docstring).

    Args:
        retriever: any Retriever.
        store: the Store the retriever searches (for chunk text and vectors).
        embedder: the index's embedder (to embed the question and sentences).
        threshold: minimum evidence cosine to answer.
        max_chunks, max_sentences: how much evidence to quote.
        relative_floor: a sentence is kept only if its score is at least this share of the best.
        lexical_weight: weight of query-term coverage in sentence scores.
    """

    def __init__(self, retriever, store, embedder, threshold: float, max_chunks: int = 3,
                 max_sentences: int = 3, relative_floor: float = 0.8, lexical_weight: float = 0.3):
        self.retriever = retriever
        self.store = store
        self.embedder = embedder
        self.threshold = threshold
        self.max_chunks = max_chunks
        self.max_sentences = max_sentences
        self.relative_floor = relative_floor
        self.lexical_weight = lexical_weight

    def answer(self, question: str, k: int = 5, *, principal: Principal | None = None,
               filters: Filters | None = None) -> Answer:
        """Answer ``question`` for ``principal``; see the module docstring."""
        t0 = time.perf_counter()
        hits = self.retriever.search(question, k, principal=principal, filters=filters)
        t1 = time.perf_counter()
        timings = {"retrieve_s": t1 - t0}
        retrieved = [h.chunk_id for h in hits]
        if not hits or not question.strip():
            return Answer(ABSTENTION_TEXT, "abstained", retrieved_ids=retrieved, timings=timings)
        qv = self.embedder.embed([question])[0]
        vectors = self.store.get_vectors(retrieved)
        evidence = []
        for h in hits:
            v = vectors.get(h.chunk_id)
            score = float(np.dot(qv, v)) if v is not None else 0.0
            if h.stage == "pinned":
                score = max(score, self.threshold)
            evidence.append((h, score))
        best = max(s for _, s in evidence)
        if best < self.threshold:
            timings["total_s"] = time.perf_counter() - t0
            return Answer(ABSTENTION_TEXT, "abstained", retrieved_ids=retrieved, best_score=best, timings=timings)
        chosen = [h for h, s in evidence if s >= self.threshold][: self.max_chunks]
        chunks = self.store.get_chunks([h.chunk_id for h in chosen])
        q_terms = set(analyze(question))
        candidates = []  # (chunk rank, sentence start, text, chunk)
        for rank, h in enumerate(chosen):
            c = chunks.get(h.chunk_id)
            if c is None:
                continue
            for s, e in split_sentences(c.text)[:60]:
                candidates.append((rank, s, c.text[s:e], c))
        if not candidates:
            return Answer(ABSTENTION_TEXT, "abstained", retrieved_ids=retrieved, best_score=best, timings=timings)
        sv = self.embedder.embed([t for _, _, t, _ in candidates])
        scores = sv @ qv
        for i, (_, _, t, _) in enumerate(candidates):
            if q_terms:
                scores[i] += self.lexical_weight * len(q_terms & set(analyze(t))) / len(q_terms)
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], candidates[i][0], candidates[i][1]))
        top = scores[order[0]]
        keep = [i for i in order[: self.max_sentences] if scores[i] >= self.relative_floor * top]
        keep.sort(key=lambda i: (candidates[i][0], candidates[i][1]))
        sentences, citations, used = [], [], []
        cited_docs: set[str] = set()
        for i in keep:
            _, start, text, c = candidates[i]
            sentences.append(f"{' '.join(text.split())} [doc:{c.doc_id}]")
            if c.chunk_id not in used:
                used.append(c.chunk_id)
            if c.doc_id not in cited_docs:
                cited_docs.add(c.doc_id)
                citations.append(Citation(c.doc_id, c.title, c.version, c.updated, c.chunk_id,
                                          c.start + start, c.start + start + len(text)))
        timings["total_s"] = time.perf_counter() - t0
        return Answer(" ".join(sentences), "answered", citations, retrieved, used, best, timings)
