"""Answer units and their vectors per chunk, computed once (:class:`UnitCache`).

The evidence scorer and the answer selector read the same units and vectors, so a sentence is
embedded once per (chunk, text); an evaluation over thousands of questions (SQuAD) can embed every
unit of the corpus once up front. Given a ``store``, the cache reads the unit vectors stored at
ingest (:data:`citewise.answer.units.ANSWER_UNITS`) in one store call and embeds only the chunks
whose stored units are missing, from another splitter version
(:data:`~citewise.answer.units.UNITS_VERSION`), from another title or text
(:func:`~citewise.answer.units.units_key`), or that do not line up with
:func:`~citewise.answer.units.split_units` (count and spans).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Sequence

import numpy as np

from citewise.answer.units import UNITS_VERSION, Unit, split_units, unit_text_for_embedding, units_key


class UnitCache:
    """Units and unit vectors per chunk, computed once (bounded LRU).

    Args:
        embedder: any Embedder (``embed(texts) -> (n, dim)`` L2-normalised float32).
        max_chunks: chunks kept; the least recently used are evicted beyond this.
        store: optional Store with ``get_units``: unit vectors stored at ingest are used when
            they match (see module docstring); only the others are embedded.

    Attributes:
        stored_hits, embedded_chunks: chunks whose vectors came from the store / were embedded.
    """

    def __init__(self, embedder, max_chunks: int = 20000, store=None):
        self.embedder = embedder
        self.max_chunks = max_chunks
        self.store = store
        self.stored_hits = 0
        self.embedded_chunks = 0
        self._data: OrderedDict[str, tuple[list[Unit], np.ndarray]] = OrderedDict()

    @staticmethod
    def key(chunk) -> str:
        """Cache key of a chunk: its id and a hash of its text (an edited chunk is re-embedded)."""
        return f"{chunk.chunk_id}\x00{hashlib.sha1(chunk.text.encode('utf-8')).hexdigest()}"

    def get(self, chunks: Sequence) -> list[tuple[list[Unit], np.ndarray]]:
        """``[(units, vectors)]`` for each chunk (vectors shape (len(units), dim)); embeds the
        missing ones in one batch. A chunk needs ``chunk_id``, ``title`` and ``text``."""
        missing = [c for c in chunks if self.key(c) not in self._data]
        if missing:
            self.warm(missing)
        out = []
        for c in chunks:
            k = self.key(c)
            self._data.move_to_end(k)
            out.append(self._data[k])
        return out

    def warm(self, chunks: Sequence, batch: int = 256) -> None:
        """Keep the units of ``chunks``: stored vectors where they apply, the rest embedded in
        batches of ``batch`` texts."""
        todo = [(self.key(c), c) for c in chunks if self.key(c) not in self._data]
        seen: set[str] = set()
        todo = [(k, c) for k, c in todo if not (k in seen or seen.add(k))]
        if self.store is not None and todo:
            todo = self._from_store(todo)
        self.embedded_chunks += len(todo)
        for i in range(0, len(todo), max(1, batch // 8)):
            part = todo[i : i + max(1, batch // 8)]
            units = [split_units(c.text) for _, c in part]
            texts = [unit_text_for_embedding(c.title, u) for (_, c), us in zip(part, units) for u in us]
            vecs = self.embedder.embed(texts) if texts else np.zeros((0, getattr(self.embedder, "dim", 0)), np.float32)
            pos = 0
            for (k, _), us in zip(part, units):
                self._data[k] = (us, np.asarray(vecs[pos : pos + len(us)], dtype=np.float32))
                pos += len(us)
        while len(self._data) > self.max_chunks:
            self._data.popitem(last=False)

    def best_cosines(self, chunk_ids: Sequence[str], qvec: np.ndarray) -> dict[str, float]:
        """``{chunk_id: highest cosine of the question vector with one of its units}`` from the
        vectors stored at ingest (current splitter version), without fetching or splitting the
        chunks' text; chunks without stored units are absent. Vectors are L2-normalised, so the
        dot product is the cosine."""
        if self.store is None or not chunk_ids:
            return {}
        q = np.asarray(qvec, dtype=np.float32)
        out = {}
        for cid, s in self.store.get_units(list(chunk_ids)).items():
            if s.version == UNITS_VERSION and len(s.vectors):
                out[cid] = float((np.asarray(s.vectors, dtype=np.float32) @ q).max())
        return out

    def _from_store(self, todo: list, per_call: int = 1000) -> list:
        """Take stored unit vectors for the chunks in ``todo`` that have valid ones; returns the
        rest. Valid: same splitter version, same title and text hash, and exactly the spans
        :func:`split_units` gives now (so vector i belongs to unit i)."""
        rest = []
        for i in range(0, len(todo), per_call):
            part = todo[i : i + per_call]
            stored = self.store.get_units([c.chunk_id for _, c in part])
            for k, c in part:
                s = stored.get(c.chunk_id)
                if s is None or s.version != UNITS_VERSION or s.key != units_key(c.title, c.text):
                    rest.append((k, c))
                    continue
                units = split_units(c.text)
                if len(units) != len(s.vectors) or [(u.start, u.end) for u in units] != [tuple(p) for p in s.spans]:
                    rest.append((k, c))
                    continue
                self._data[k] = (units, np.asarray(s.vectors, dtype=np.float32))
                self.stored_hits += 1
        return rest
