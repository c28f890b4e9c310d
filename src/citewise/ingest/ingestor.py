"""The ingestion driver (:class:`Ingestor`): its public entry points and the run loop; the
stages come from the mixins of the sibling modules."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from citewise.core import PUBLIC_GROUP, Document, InputError, InputWarning
from citewise.lifecycle import mtime_iso, utc_now
from citewise.models.chunk_vectors import check_mode
from citewise.models.embedders import Embedder
from citewise.policy import Policy
from citewise.store.base import Store
from citewise.text.chunker import Chunker
from citewise.text.dedup import find_duplicates
from citewise.text.loaders import HISTORY_SEP, NotFollowed, load_folder

from citewise.ingest.report import DEFAULT_PERMISSIONS, EmbedProgress, IngestReport, Progress
from citewise.ingest.work import UnitSplitter, _Work
from citewise.ingest.plan import _PlanMixin, _stale_title_ids
from citewise.ingest.embed import _EmbedMixin
from citewise.ingest.write import _WriteMixin


class Ingestor(_PlanMixin, _EmbedMixin, _WriteMixin):
    """Incremental, atomic-per-batch ingestion into a Store.

    Args:
        store: the backend.
        embedder: turns chunk texts into vectors.
        chunker: splits documents (default: 300–800 tokens).
        default_permission: ``public`` (documents without permissions are readable by everyone)
            or ``deny`` (readable by no one until permissions are declared).
        batch_docs: documents embedded and committed together. 256 keeps embedding calls big
            enough that length-sorted batching pads little (64 cost ~4% more embedding CPU on
            SciFact, bench/ingest_overhead.py); a killed run redoes at most one commit (a batch,
            or with forked workers the ready batches of up to :data:`COMMIT_ROWS` chunk rows).
        policy: path-glob permission rules for documents without front matter permissions.
        keep_duplicates: index whole-book copies and near-duplicates too (default: skip them in
            folder ingests, see the module docstring).
        units: answer-unit splitter (:class:`UnitSplitter`); when given, unit vectors are embedded
            and stored with the chunks. None: no unit vectors (``ask`` embeds them at query time).
        workers: forked processes that chunk and embed the next batches while this one writes
            (see :meth:`_commit_all`; only with a ``cpu_parallel`` embedder, on Linux). None:
            one per CPU, at most 4; 0: everything in this process.
        chunk_vectors: ``chunk`` (each chunk's own text is embedded) or ``units-mean`` (a chunk's
            vector is the mean of its answer units' vectors, so one pass over the units serves
            both; needs ``units``): :mod:`citewise.models.chunk_vectors`.

    Raises:
        ValueError: unknown ``default_permission`` or ``chunk_vectors``.
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        chunker: Chunker | None = None,
        default_permission: str = "public",
        batch_docs: int = 256,
        policy: Policy | None = None,
        keep_duplicates: bool = False,
        units: UnitSplitter | None = None,
        workers: int | None = None,
        chunk_vectors: str = "chunk",
    ):
        if default_permission not in DEFAULT_PERMISSIONS:
            raise ValueError(f"default_permission must be one of {DEFAULT_PERMISSIONS}, got {default_permission!r}")
        self.store = store
        self.embedder = embedder
        self.chunker = chunker or Chunker()
        self.default_permission = default_permission
        self.batch_docs = batch_docs
        self.policy = policy
        self.keep_duplicates = keep_duplicates
        self.units = units
        self.workers = workers
        self.chunk_vectors = check_mode(chunk_vectors)
        self._root: Path | None = None
        self.embed_progress: EmbedProgress | None = None
        self._planned = 0
        self._embedded = 0

    def groups_for(self, doc: Document) -> tuple[str, ...]:
        """The groups stored on a document's chunks: front matter / policy (see
        :meth:`citewise.policy.Policy.groups_for`), else the default permission."""
        groups: tuple[str, ...] | None = doc.groups or None
        if self.policy is not None:
            groups = self.policy.groups_for(self._rel(doc.source), doc.groups)
        if groups:
            return groups
        return (PUBLIC_GROUP,) if self.default_permission == "public" else ()

    def _rel(self, source: str) -> str:
        p = Path(source)
        if self._root is not None:
            try:
                return p.resolve().relative_to(self._root).as_posix()
            except ValueError:
                pass
        return p.as_posix().lstrip("/")

    # -- public entry points ------------------------------------------------------------------
    def ingest_documents(
        self,
        docs: Iterable[Document],
        report: IngestReport | None = None,
        progress: Progress | None = None,
        root: str = "",
    ) -> IngestReport:
        """Upsert new and changed documents; unchanged ones (same content hash) are skipped.

        Same id twice in one run: the newer version wins (:func:`citewise.lifecycle.newer_key`),
        the older is reported in ``superseded``; equal versions: the first wins and the second is
        an error. Records the run in the ingest log (``root`` names what was ingested).
        """
        started = utc_now()
        report = report or IngestReport()
        self._ingest(docs, report, progress)
        self._refresh()
        self._record(started, root, report)
        return report

    def ingest_folder(self, root: Path, progress: Progress | None = None, follow_links: bool = False) -> IngestReport:
        """Ingest every supported file below ``root`` and delete documents whose files are gone.

        Only documents whose source lies under ``root`` are candidates for deletion, and a file
        that failed to load keeps its previous version. Symlinks out of ``root`` are skipped with
        a line unless ``follow_links`` (:func:`citewise.text.loaders.scan_folder`).
        """
        started = utc_now()
        root = Path(root).resolve()
        self._root = root if root.is_dir() else root.parent
        report = IngestReport()
        failed_sources: set[str] = set()
        failed_dirs: list[str] = []
        docs: list[Document] = []
        for item in load_folder(root, follow_links=follow_links):
            if isinstance(item, InputWarning):
                report.warnings.append(str(item))
            elif isinstance(item, InputError):
                report.errors.append(str(item))
                if not isinstance(item, NotFollowed):
                    failed_sources.add(str(Path(item.source)))
                    failed_sources.add(str(Path(item.source).resolve()))
                    if Path(item.source).is_dir():  # an unreadable folder: keep what was indexed below it
                        failed_dirs.append(str(Path(item.source).resolve()) + "/")
            elif HISTORY_SEP in item.doc_id:
                report.errors.append(
                    f"{item.source}: document id '{item.doc_id}' contains '{HISTORY_SEP}', which is reserved for "
                    f"older versions kept as history (id{HISTORY_SEP}version); rename the file or set another 'id'; skipped"
                )
                failed_sources.add(str(Path(item.source)))
            else:
                report.warnings.extend(item.warnings)
                docs.append(item)
        if not self.keep_duplicates:
            dups = find_duplicates(docs, key=self.groups_for)
            skipped = {d.source for d in dups}
            report.duplicates = [d.line() for d in dups]
            docs = [d for d in docs if d.source not in skipped]
            if progress and dups:
                progress(len(dups))
        docs = self._refuse_rerooted(docs, report, failed_sources)
        self._unmatched_rules(docs, root, report)
        present = {d.doc_id for d in docs} | self._ingest(docs, report, progress)
        del docs  # the loaded texts: not held while the store rebuilds its indexes below
        prefix = str(root) + ("" if root.is_file() else "/")
        # a folder this run's documents moved from (``docs`` renamed to ``docs2``): its documents
        # whose files are gone went with it; kept, they stayed searchable with no folder left
        # that an ingest could delete them from
        old_roots = [r.rstrip("/") + "/" for r in report.moved_from]
        gone = [
            e
            for e in self.store.documents().values()
            if e.doc_id not in present
            and (
                e.source == str(root)
                or e.source.startswith(prefix)
                or (any(e.source.startswith(r) for r in old_roots) and not Path(e.source).exists())
            )
            and str(Path(e.source)) not in failed_sources
            and not any(e.source.startswith(d) for d in failed_dirs)
        ]
        if gone:
            self.store.delete([e.doc_id for e in gone])
            report.deleted = len(gone)
            report.deleted_docs.extend(e.doc_id for e in gone)
            report.removed.extend(f"{e.doc_id} ({e.source}: no longer ingested)" for e in gone)
        self._refresh()
        self._record(started, str(root), report)
        return report

    def _ingest(self, docs: Iterable[Document], report: IngestReport, progress: Progress | None) -> set[str]:
        """Upsert what changed; returns the ids of every document version this run kept."""
        docs = list(docs)
        known = self._known(docs)
        winners = self._pick_versions(docs, known, report)
        batches: list[list[_Work]] = []
        batch: list[_Work] = []
        for doc in winners:
            entry = known.get(doc.doc_id)
            groups = self.groups_for(doc)
            if entry is not None and entry.content_hash == doc.content_hash and not _stale_title_ids(entry, doc):
                same_meta = tuple(entry.groups) == groups and entry.source == doc.source
                stale_units = self.units is not None and entry.units_version != self.units.version
                if same_meta and not stale_units:
                    report.unchanged += 1
                    if progress:
                        progress(1)
                    continue
                moved = tuple(entry.groups) == groups and entry.source != doc.source and not stale_units
                batch.append(
                    _Work(
                        doc,
                        groups,
                        entry.source_changed_at or mtime_iso(doc.source),
                        True,
                        units_only=same_meta,
                        moved_from=entry.source if moved else None,
                    )
                )
            else:
                batch.append(_Work(doc, groups, mtime_iso(doc.source), False))
            if len(batch) >= self.batch_docs:
                batches.append(batch)
                batch = []
        if batch:
            batches.append(batch)
        self._commit_all(batches, known, report, progress)
        return {d.doc_id for d in winners}
