"""Ingestion: loaders -> chunker -> embedder -> Store, incremental by content hash.

* A document whose content hash is unchanged is skipped (no chunking, no embedding).
* A changed document's chunks, vectors and lexical entries are replaced in one Store commit.
* A document whose file disappeared from the ingested folder is deleted from every index.
* A file that fails to load is reported (one line naming the file) and its previously indexed
  version, if any, is kept as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from citewise.core import PUBLIC_GROUP, Document, InputError
from citewise.models.embedders import Embedder
from citewise.store.base import DocumentUpdate, Store
from citewise.text.chunker import Chunker
from citewise.text.loaders import load_folder

#: Policies for documents that declare no permissions.
DEFAULT_PERMISSIONS = ("public", "deny")


@dataclass
class IngestReport:
    """What one ingest run did. Counts are documents unless named otherwise."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks_embedded: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "added": self.added, "updated": self.updated, "unchanged": self.unchanged,
            "deleted": self.deleted, "chunks_embedded": self.chunks_embedded, "errors": list(self.errors),
        }


Progress = Callable[[int], None]


class Ingestor:
    """Incremental, atomic-per-batch ingestion into a Store.

    Args:
        store: the backend.
        embedder: turns chunk texts into vectors.
        chunker: splits documents (default: 300–800 tokens).
        default_permission: ``public`` (documents without permissions are readable by everyone)
            or ``deny`` (readable by no one until permissions are declared).
        batch_docs: documents embedded and committed together.

    Raises:
        ValueError: unknown ``default_permission``.
    """

    def __init__(self, store: Store, embedder: Embedder, chunker: Chunker | None = None,
                 default_permission: str = "public", batch_docs: int = 64):
        if default_permission not in DEFAULT_PERMISSIONS:
            raise ValueError(f"default_permission must be one of {DEFAULT_PERMISSIONS}, got {default_permission!r}")
        self.store = store
        self.embedder = embedder
        self.chunker = chunker or Chunker()
        self.default_permission = default_permission
        self.batch_docs = batch_docs

    def groups_for(self, doc: Document) -> tuple[str, ...]:
        """The groups stored on a document's chunks (permission policy applied)."""
        if doc.groups:
            return doc.groups
        return (PUBLIC_GROUP,) if self.default_permission == "public" else ()

    def ingest_documents(self, docs: Iterable[Document], report: IngestReport | None = None,
                         progress: Progress | None = None) -> IngestReport:
        """Upsert changed documents; unchanged ones (same content hash) are skipped.

        Duplicate ids within one run: the first wins, the others are reported as errors.
        """
        report = report or IngestReport()
        known = {d: e.content_hash for d, e in self.store.documents().items()}
        seen: dict[str, str] = {}
        batch: list[Document] = []
        for doc in docs:
            if doc.doc_id in seen:
                report.errors.append(f"{doc.source}: duplicate document id '{doc.doc_id}' (already used by {seen[doc.doc_id]}); skipped")
                continue
            seen[doc.doc_id] = doc.source
            if known.get(doc.doc_id) == doc.content_hash:
                report.unchanged += 1
                if progress:
                    progress(1)
                continue
            batch.append(doc)
            if len(batch) >= self.batch_docs:
                self._commit(batch, known, report, progress)
                batch = []
        if batch:
            self._commit(batch, known, report, progress)
        self._refresh()
        return report

    def ingest_folder(self, root: Path, progress: Progress | None = None) -> IngestReport:
        """Ingest every supported file below ``root`` and delete documents whose files are gone.

        Only documents whose source lies under ``root`` are candidates for deletion, and a file
        that failed to load keeps its previous version.
        """
        root = Path(root).resolve()
        report = IngestReport()
        failed_sources: set[str] = set()
        docs: list[Document] = []
        for item in load_folder(root):
            if isinstance(item, InputError):
                report.errors.append(str(item))
                failed_sources.add(str(Path(item.source).resolve()))
            else:
                docs.append(item)
        self.ingest_documents(docs, report, progress)
        present = {d.doc_id for d in docs}
        prefix = str(root) + ("" if root.is_file() else "/")
        gone = [
            e.doc_id for e in self.store.documents().values()
            if e.doc_id not in present
            and (e.source == str(root) or e.source.startswith(prefix))
            and str(Path(e.source)) not in failed_sources
        ]
        if gone:
            self.store.delete(gone)
            report.deleted = len(gone)
            self._refresh()
        return report

    def _refresh(self) -> None:
        refresh = getattr(self.store, "refresh_indexes", None)
        if refresh:
            refresh()

    def _commit(self, batch: list[Document], known: dict[str, str], report: IngestReport,
                progress: Progress | None) -> None:
        updates: list[DocumentUpdate] = []
        texts: list[str] = []
        spans: list[tuple[int, int]] = []
        for doc in batch:
            chunks = self.chunker.chunk(doc.doc_id, doc.title, doc.text)
            if not chunks:
                report.errors.append(f"{doc.source}: no text to index")
                continue
            spans.append((len(texts), len(texts) + len(chunks)))
            texts.extend(c.indexed_text for c in chunks)
            updates.append(DocumentUpdate(doc, chunks, np.empty((0,)), self.groups_for(doc)))
        if not updates:
            return
        vectors = self.embedder.embed(texts)
        final = [
            DocumentUpdate(u.document, u.chunks, vectors[s:e], u.groups)
            for u, (s, e) in zip(updates, spans)
        ]
        self.store.upsert(final)
        report.chunks_embedded += len(texts)
        for u in final:
            if u.document.doc_id in known:
                report.updated += 1
            else:
                report.added += 1
            known[u.document.doc_id] = u.document.content_hash
        if progress:
            progress(len(batch))
