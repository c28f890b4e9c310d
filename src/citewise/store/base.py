"""The ``Store`` protocol: the one seam every storage backend implements.

A backend stores chunks with their document metadata, vectors and lexical text; replaces or
deletes whole documents atomically; and answers lexical (BM25) and vector searches with
:class:`citewise.core.Filters` applied *inside* the search, so a filtered top-k is still full.

Callers use only the methods of :class:`Store`; what differs between backends is stated by
:attr:`Store.capabilities` (a :class:`StoreCapabilities`), never found by probing for methods.
:class:`citewise.testing.StoreConformance` is the suite a backend runs to show it conforms.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np

from citewise.core import Chunk, CitewiseError, Document, Filters

if TYPE_CHECKING:  # type-only: derived.py names the Store protocol back
    from citewise.store.derived import SummaryTable, TreeTable


class IndexBusy(CitewiseError):
    """Another process holds the index's (or the store's) ingest lock."""


def is_store_url(value: str | None) -> bool:
    """Whether ``value`` names a PostgreSQL store (``postgresql://`` or ``postgres://``); here, not
    in :mod:`citewise.store.postgres`, so checking a URL does not import the driver."""
    return bool(value) and str(value).startswith(("postgresql://", "postgres://"))


#: The columns a :class:`StoredChunk` is read from (document metadata apart), in the order each
#: backend selects them; a backend spells ``end`` its own way where the name is reserved.
CHUNK_COLUMNS: tuple[str, ...] = (
    "chunk_id",
    "doc_id",
    "title",
    "source",
    "version",
    "updated",
    "effective",
    "groups",
    "heading_path",
    "text",
    "start",
    "end",
    "token_count",
    "page_start",
    "page_end",
    "prev_id",
    "next_id",
    "parent_id",
)


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as read back from a store, with its document's metadata."""

    chunk_id: str
    doc_id: str
    title: str
    source: str
    version: str
    updated: str  # ISO date or ''
    groups: tuple[str, ...]
    heading_path: tuple[str, ...]
    text: str
    start: int
    end: int
    token_count: int
    prev_id: str | None
    next_id: str | None
    parent_id: str | None
    effective: str = ""  # ISO date or ''
    page_start: int = 0  # 1-based first page of a paged source (PDF); 0 = not paged
    page_end: int = 0  # 1-based last page; 0 = not paged
    #: the document's metadata (front matter keys beyond the built-in ones; :mod:`citewise.metadata`)
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ScoredChunk:
    """One search result from a store: ids, title and the backend's score (higher is better)."""

    chunk_id: str
    doc_id: str
    title: str
    score: float


@dataclass(frozen=True)
class DocumentEntry:
    """What the store knows of one document (for incremental ingestion and status).

    ``indexed_at`` and ``source_changed_at`` are ISO-8601 UTC timestamps: when this version was
    committed, and the source's modification time (file mtime) when it was read ('' if unknown).
    """

    doc_id: str
    title: str
    source: str
    content_hash: str
    version: str
    updated: str
    chunk_count: int
    indexed_at: str
    effective: str = ""
    groups: tuple[str, ...] = ()
    source_changed_at: str = ""
    units_version: str = ""  # splitter version of the stored unit vectors ('' = none stored)
    #: identifiers stored for the title (pinning; :func:`citewise.text.analyzer.find_identifiers`
    #: of the title when it was written), None when the store does not say
    title_ids: tuple[str, ...] | None = None


@dataclass(frozen=True)
class UnitVectors:
    """The answer-unit vectors of one chunk, computed at ingest.

    The store keeps them as data and never interprets them: ``version`` names the unit splitter
    that made them and ``key`` hashes what they were computed from (title and chunk text), so a
    reader can check they still apply. ``spans`` are the units' ``(start, end)`` in the chunk
    text; ``vectors`` has shape (len(spans), dim).
    """

    version: str
    key: str
    spans: tuple[tuple[int, int], ...]
    vectors: np.ndarray


@dataclass(frozen=True)
class IngestRun:
    """One completed ingest run, as kept in the store's ingest log.

    Timestamps are ISO-8601 UTC; counts are documents except ``chunks_embedded``; ``errors`` is
    the number of files that failed to load or index (the run itself completed).
    """

    started_at: str
    finished_at: str
    root: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    superseded: int = 0
    errors: int = 0
    chunks_embedded: int = 0


@dataclass(frozen=True)
class DocumentUpdate:
    """A document with its chunks and their vectors (shape (len(chunks), dim)), to upsert.

    ``source_changed_at``: ISO-8601 UTC time the source last changed (file mtime), '' if unknown.
    ``units``: optional answer-unit vectors per chunk (same order as ``chunks``; None entries or
    None overall = none stored), written in the same commit as the chunks.
    ``lexical``: each chunk's lexical text when the caller computed it already; it must equal
    :func:`citewise.text.analyzer.lexical_text` of the chunk's ``indexed_text``. None: the store
    computes it.
    """

    document: Document
    chunks: Sequence[Chunk]
    vectors: np.ndarray
    groups: tuple[str, ...]
    source_changed_at: str = ""
    units: Sequence[UnitVectors | None] | None = None
    lexical: Sequence[str] | None = None

    def lexical_texts(self) -> Sequence[str]:
        """Each chunk's lexical text: ``lexical`` when given, else computed here."""
        from citewise.text.analyzer import lexical_text

        return self.lexical if self.lexical is not None else [lexical_text(c.indexed_text) for c in self.chunks]


@dataclass(frozen=True)
class StoreCapabilities:
    """What a backend offers beyond the common contract.

    Attributes:
        name: the backend's name as ``index.json`` and ``--store`` spell it (``lancedb``,
            ``postgresql``).
        folder: a local folder the store owns, where callers may keep files beside it (a tuned
            fusion model, hierarchical summaries); None for a server store.
        shared: the store is a server several processes and hosts write to, so an ingest takes
            the store's own lock (:meth:`Store.ingest_lock`) besides the index folder's file lock.
        rows_scan: :meth:`Store.chunk_versions` reads only columns, cheap enough to list every
            chunk of a large index (False: a server round trip per call, avoided in loops).
    """

    name: str
    folder: Path | None = None
    shared: bool = False
    rows_scan: bool = True


@runtime_checkable
class Store(Protocol):
    """Storage backend contract (see module docstring)."""

    @property
    def capabilities(self) -> StoreCapabilities:
        """What this backend offers beyond the common contract."""
        ...

    def upsert(self, updates: Sequence[DocumentUpdate]) -> None:
        """Replace each document's chunks, vectors, unit vectors and lexical entries in one
        atomic commit (a replaced or deleted document's unit vectors go with its chunks)."""
        ...

    def delete(self, doc_ids: Sequence[str]) -> int:
        """Remove documents from every index; returns the number of chunks removed."""
        ...

    def lexical_search(self, terms: Sequence[str], k: int, filters: Filters | None = None) -> list[ScoredChunk]:
        """BM25 over analyzed terms; at most k results, all passing ``filters``."""
        ...

    def vector_search(self, vector: np.ndarray, k: int, filters: Filters | None = None) -> list[ScoredChunk]:
        """Cosine similarity search; at most k results, all passing ``filters``."""
        ...

    def titled_with(self, identifier: str, filters: Filters | None = None) -> list[ScoredChunk]:
        """Chunks of documents whose *title* names ``identifier`` (folded form)."""
        ...

    def has_group(self, group: str) -> bool:
        """Whether any chunk names ``group`` among its permission groups (exact, case-sensitive)."""
        ...

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, StoredChunk]:
        """Chunks by id (missing ids are absent from the result)."""
        ...

    def document_chunks(self, doc_id: str, groups: Sequence[str] | None) -> list[StoredChunk]:
        """Every chunk of document ``doc_id`` (a current id, or ``id@version`` of a kept older
        version) whose groups intersect ``groups`` (None: no permission filter), ordered by
        ``(start, chunk_id)``; [] when the document is missing or none of it is readable (the
        two look the same). The permission filter runs inside the store query."""
        ...

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by chunk id."""
        ...

    def get_units(self, chunk_ids: Sequence[str]) -> dict[str, UnitVectors]:
        """Stored answer-unit vectors by chunk id, in one call; chunks without stored units
        (or missing ids) are absent from the result."""
        ...

    def documents(self, doc_ids: Iterable[str] | None = None) -> dict[str, DocumentEntry]:
        """Every stored document by id; with ``doc_ids``, only those of them that are stored
        (an ingest looks up the documents it brings, not the whole index)."""
        ...

    def stats(self) -> dict[str, Any]:
        """Counts: documents, chunks, and backend details."""
        ...

    def refresh_indexes(self) -> None:
        """Bring derived indexes (lexical) up to date with the rows; repairs a missing index."""
        ...

    def record_run(self, run: IngestRun) -> None:
        """Append a completed ingest run to the ingest log."""
        ...

    def runs(self) -> list[IngestRun]:
        """The ingest log, oldest first."""
        ...

    def chunk_versions(self) -> dict[str, set[tuple[str, str, str]]]:
        """Per document id, the set of ``(chunk_id, content_hash, version)`` of its rows, history
        included (a document is whole when its current rows carry one content hash)."""
        ...

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        """The analyzed ``terms`` that occur in some current chunk, whatever its permissions
        (callers check what a principal may see with :meth:`lexical_search`)."""
        ...

    def has_ann_index(self) -> bool:
        """Whether dense search goes through an approximate (ANN) index."""
        ...

    def unindexed_rows(self) -> int:
        """Rows the lexical index does not cover yet (0 when it is up to date)."""
        ...

    def concurrent_legs(self) -> bool:
        """Whether a hybrid query may run its dense leg in a second thread beside BM25 now."""
        ...

    def warm(self) -> dict[str, Any]:
        """Load what the first queries would otherwise load; returns what was loaded (may be
        empty)."""
        ...

    def ingest_lock(
        self, wait: bool = False, on_wait: Callable[[str], None] | None = None
    ) -> AbstractContextManager[Any]:
        """Hold the store's own ingest lock (a no-op context for a store only one index folder
        writes; see :attr:`StoreCapabilities.shared`).

        Raises:
            IndexBusy: another writer holds it and ``wait`` is False.
        """
        ...

    def close(self) -> None:
        """Release connections and handles (the store cannot be used afterwards)."""
        ...

    def summary_table(self) -> SummaryTable:
        """Where document summaries are kept (:class:`citewise.store.derived.SummaryTable`)."""
        ...

    def tree_table(self) -> TreeTable:
        """Where RAPTOR trees are kept (:class:`citewise.store.derived.TreeTable`)."""
        ...

    def replication(self) -> dict[str, Any] | None:
        """A server store's replication role and lag; None for a store without replicas."""
        ...
