"""The units of work an ingest passes between its stages: a batch of documents to prepare
(:class:`_Work`) and its chunks, vectors and units once prepared (:class:`_Prepared`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from citewise.core import Document


class UnitSplitter(Protocol):
    """What ingestion needs of the answer-unit splitter (kept as data; see module docstring)."""

    version: str

    def key(self, title: str, text: str) -> str:
        """Hash of the inputs the unit vectors depend on."""
        ...

    def embedding_units(self, title: str, text: str) -> list[tuple[int, int, str]]:
        """``[(start, end, text to embed)]`` per unit of a chunk."""
        ...


@dataclass
class _Work:
    doc: Document
    groups: tuple[str, ...]
    changed_at: str
    reuse_vectors: bool  # text unchanged: take vectors from the store
    units_only: bool = False  # nothing changed but the unit splitter version
    moved_from: str | None = None  # text and groups unchanged, source path changed: the old path


@dataclass
class _Prepared:
    """One batch after :meth:`Ingestor._prepare`: per document kept, ``(index in the batch, chunks,
    chunk vectors (reused, or made from ``vectors`` once embedded), (first, end) of its own chunk
    texts in ``vectors`` or None when its vectors were reused, unit plan)``."""

    items: list[tuple] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # report lines, in document order
    flagged: list[str] = field(default_factory=list)  # warning lines: instruction-like passages
    n_texts: int = 0  # texts embedded (chunks and answer units)
    n_chunk_texts: int = 0  # chunks given new vectors
    n_own_texts: int = 0  # chunk texts among the texts embedded (the rest are answer units)
    vectors: np.ndarray | None = None
    embed_error: str | None = None  # "TypeName: message" of a failed embedding call
    lexical: list[list[str]] | None = None  # per item, each chunk's lexical text (from a worker)
    by_worker: bool = False  # prepared in a forked worker process
