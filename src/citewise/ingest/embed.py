"""Chunking and embedding of a batch of documents, with answer-unit vectors
(:class:`citewise.ingest.Ingestor`)."""

from __future__ import annotations

import numpy as np

from citewise.core import Document
from citewise.models.chunk_vectors import mean_of_units
from citewise.store.base import UnitVectors
from citewise.text.analyzer import lexical_text

from citewise.ingest.report import _one_line
from citewise.ingest.work import _Prepared, _Work


#: Texts per embedder call when reporting embedding progress (sorted by length first, so the
#: embedder's own length batching pads as little as with one call).
EMBED_SLICE = 64


def _instruction_warning(source: str, chunks) -> str | None:
    """A report line for a document whose chunks hold instruction-like passages
    (:func:`citewise.text.trust.flagged_line`), quoting the first; None when none do."""
    from citewise.text.trust import flagged_line

    hits = [f for f in (flagged_line(c.text) for c in chunks) if f is not None]
    if not hits:
        return None
    kind, line = hits[0]
    n = len(hits)
    return (
        f"{source}: {n} chunk{'s' if n != 1 else ''} hold{'' if n != 1 else 's'} text that reads as "
        f"instructions to an AI model ({kind}: \u201c{line[:80]}\u201d); "
        f"{'they rank' if n != 1 else 'it ranks'} after other passages and {'are' if n != 1 else 'is'} never quoted first"
    )


def _unit_count(p) -> int:
    """Units in one chunk's unit plan entry (stored :class:`UnitVectors` or ``(key, spans, first, n)``)."""
    return len(p.vectors) if isinstance(p, UnitVectors) else p[3]


class _EmbedMixin:
    """Chunking, embedding and unit vectors of :class:`~citewise.ingest.Ingestor`."""

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts``; with :attr:`embed_progress` set, in length-sorted slices of
        :data:`EMBED_SLICE`, reporting (embedded, planned) after each slice."""
        if not texts:
            return np.empty((0, 0), dtype=np.float32)
        self._planned += len(texts)
        if self.embed_progress is None:
            vectors = self.embedder.embed(texts)
            self._embedded += len(texts)
            return vectors
        self.embed_progress(self._embedded, self._planned)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: np.ndarray | None = None
        for s in range(0, len(order), EMBED_SLICE):
            idx = order[s : s + EMBED_SLICE]
            part = self.embedder.embed([texts[i] for i in idx])
            if out is None:
                out = np.empty((len(texts), part.shape[1]), dtype=part.dtype)
            out[idx] = part
            self._embedded += len(idx)
            self.embed_progress(self._embedded, self._planned)
        return out

    def _prepare(self, batch: list[_Work], in_worker: bool = False) -> _Prepared:
        """Chunk, plan the answer units of, and embed one batch's documents (no store write).

        A document the chunker fails on, or with no text, becomes an error line. An embedding
        failure is kept in ``embed_error`` (``"TypeName: message"``) for :meth:`_write` to report.
        ``in_worker``: running in a forked worker process (see :meth:`_commit_all`): no progress
        callbacks, the store is not touched (only batches without stored vectors to reuse are
        sent to workers), and each chunk's lexical text is computed here, so the writing
        process does not analyze the texts again.
        """
        prepared = _Prepared(by_worker=in_worker)
        texts: list[str] = []
        lone: dict[int, list[int]] = {}  # item -> chunks whose own text is embedded
        for i, w in enumerate(batch):
            doc = w.doc
            try:
                chunks = self.chunker.chunk(doc.doc_id, doc.title, doc.text)
            except Exception as e:  # a chunker failure on one hostile document: that document's error
                prepared.errors.append(f"{doc.source}: could not be chunked ({_one_line(e)}); previous version kept")
                continue
            if not chunks:
                prepared.errors.append(f"{doc.source}: no text to index")
                continue
            flag = _instruction_warning(doc.source, chunks)
            if flag:
                prepared.flagged.append(flag)
            vectors = np.empty((0,))
            span = None
            if w.reuse_vectors:
                stored = self.store.get_vectors([c.chunk_id for c in chunks])
                if all(c.chunk_id in stored for c in chunks):
                    vectors = np.stack([stored[c.chunk_id] for c in chunks])
            plan = self._plan_units(doc, chunks, texts, w.reuse_vectors)
            if len(vectors) and self.chunk_vectors == "units-mean" and plan is not None:
                if not all(isinstance(p, UnitVectors) for p in plan):
                    vectors = np.empty((0,))  # new unit vectors (another splitter): new chunk means
            if len(vectors) != len(chunks):
                # units-mean: only chunks without units embed their own text (see chunk_vectors)
                own = (
                    list(range(len(chunks)))
                    if self.chunk_vectors == "chunk" or plan is None
                    else [j for j, p in enumerate(plan) if not _unit_count(p)]
                )
                span = (len(texts), len(texts) + len(own))
                texts.extend(chunks[j].indexed_text for j in own)
                lone[len(prepared.items)] = own
                prepared.n_chunk_texts += len(chunks)
                prepared.n_own_texts += len(own)
            prepared.items.append((i, chunks, vectors, span, plan))
        prepared.n_texts = len(texts)
        if not prepared.items:
            return prepared
        try:
            if in_worker:
                prepared.vectors = self.embedder.embed(texts) if texts else np.empty((0, 0), dtype=np.float32)
            else:
                prepared.vectors = self._embed(texts)
        except Exception as e:  # any embedder failure (model, HTTP): keep old versions, report, go on
            prepared.embed_error = f"{type(e).__name__}: {' '.join(str(e).split())[:200]}"
            return prepared
        prepared.items = [
            (
                i,
                chunks,
                self._chunk_vectors(plan, prepared.vectors, span, lone[k], len(chunks))
                if span is not None
                else vectors,
                span,
                plan,
            )
            for k, (i, chunks, vectors, span, plan) in enumerate(prepared.items)
        ]
        if in_worker:
            prepared.lexical = [[lexical_text(c.indexed_text) for c in item[1]] for item in prepared.items]
        return prepared

    def _chunk_vectors(
        self, plan: list | None, vectors: np.ndarray, span: tuple[int, int], own: list[int], n: int
    ) -> np.ndarray:
        """One document's chunk vectors, shape (n, dim), from the batch's embeddings: its own
        chunk texts' vectors (``vectors[span]``, for the chunks ``own``), and in ``units-mean``
        mode the normalised mean of each other chunk's unit vectors
        (:func:`citewise.models.chunk_vectors.mean_of_units`)."""
        mine = vectors[span[0] : span[1]]
        if self.chunk_vectors == "chunk" or plan is None:
            return mine
        units = [p.vectors if isinstance(p, UnitVectors) else vectors[p[2] : p[2] + p[3]] for p in plan]
        out, _ = mean_of_units(units, vectors.shape[1] if vectors.ndim == 2 and vectors.shape[1] else self.embedder.dim)
        for j, v in zip(own, mine):
            out[j] = v
        return out

    def _plan_units(self, doc: Document, chunks, texts: list[str], reuse: bool) -> list | None:
        """Per chunk, stored :class:`UnitVectors` still valid (same splitter version and key;
        only looked up when the text is unchanged) or ``(key, spans, first, n)``: the unit texts
        to embed, appended to ``texts`` at ``first``. None without a unit splitter."""
        if self.units is None:
            return None
        stored = self.store.get_units([c.chunk_id for c in chunks]) if reuse else {}
        plan: list = []
        for c in chunks:
            key = self.units.key(doc.title, c.text)
            old = stored.get(c.chunk_id)
            if old is not None and old.version == self.units.version and old.key == key:
                plan.append(old)
                continue
            units = self.units.embedding_units(doc.title, c.text)
            plan.append((key, tuple((s, e) for s, e, _ in units), len(texts), len(units)))
            texts.extend(t for _, _, t in units)
        return plan

    def _unit_vectors(self, plan: list | None, vectors: np.ndarray) -> list[UnitVectors] | None:
        """The :class:`UnitVectors` of one document from its plan and the batch's embeddings."""
        if plan is None:
            return None
        out = []
        for p in plan:
            if isinstance(p, UnitVectors):
                out.append(p)
            else:
                key, spans, first, n = p
                vecs = vectors[first : first + n] if n else np.zeros((0, self.embedder.dim), np.float32)
                out.append(UnitVectors(self.units.version, key, spans, vecs))
        return out
