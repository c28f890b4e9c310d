"""Ingestion: loaders -> chunker -> embedder -> Store, incremental by content hash.

* A document whose content hash is unchanged is skipped (no chunking, no embedding). If only its
  permissions or source path changed (policy edit, file moved), its rows are rewritten with the
  stored vectors: still no embedding.
* A changed document's chunks, vectors and lexical entries are replaced in one Store commit
  (``batch_docs`` documents per commit; with forked prepare workers, the batches ready at the
  time, up to ``COMMIT_ROWS`` chunk rows). A process killed at any point leaves every document at
  its old or its new version, never a mix (tests/test_crash.py); the next run completes the rest.
* A document whose file disappeared from the ingested folder is deleted from every index.
* A file that fails to load, or a batch whose embedding fails, is reported (one line naming the
  file) and its previously indexed version, if any, is kept as it was.
* Two sources with the same document id: the newer version wins, the other is reported as
  superseded (rule: :mod:`citewise.lifecycle`).
* Permissions: front matter, else a policy file (:mod:`citewise.policy`), else the index default.
* Whole-book copies and near-duplicates (:mod:`citewise.text.dedup`): in a folder ingest, a
  document that concatenates others (mdBook's ``print.html``) or nearly repeats another with the
  same permission groups is not indexed (removed if it was) and reported in ``duplicates``, one
  line each; the canonical documents are indexed. The check runs over every loaded document,
  changed or not, so a re-ingest of an unchanged folder skips the same copies and embeds nothing.
  ``keep_duplicates=True`` indexes them all. ``ingest_documents`` (BEIR, SQuAD) does not check.
* Every completed run is appended to the store's ingest log (for ``citewise status``).
* Answer units: given a unit splitter (``units``; the answer layer's
  :data:`citewise.answer.units.ANSWER_UNITS`, passed in because this layer may not import it),
  each chunk's answer units are embedded in the same embedding call as the chunks and stored on
  the chunk rows in the same commit, so ``ask`` does not embed sentences at query time. In the
  ``units-mean`` chunk-vector mode (:mod:`citewise.models.chunk_vectors`) a chunk's vector is
  the mean of its unit vectors, so that one pass embeds each unit once and no chunk text (only a
  chunk without units embeds its own text). A document
  whose text is unchanged but whose stored units come from another splitter version gets only its
  unit vectors recomputed (chunk vectors are reused; ``units_refreshed`` in the report).
"""

from __future__ import annotations

import datetime as dt
import dataclasses
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Protocol

import numpy as np

from citewise.core import PUBLIC_GROUP, Document, InputError, InputWarning
from citewise.lifecycle import in_force_date, iso, mtime_iso, newer_key, utc_now, version_key
from citewise.models.chunk_vectors import check_mode, mean_of_units
from citewise.models.embedders import Embedder
from citewise.policy import Policy
from citewise.store.base import DocumentEntry, DocumentUpdate, IngestRun, Store, UnitVectors
from citewise.text.analyzer import find_identifiers, lexical_text
from citewise.text.chunker import Chunker
from citewise.text.dedup import find_duplicates
from citewise.text.loaders import HISTORY_SEP, NotFollowed, load_folder

#: Policies for documents that declare no permissions.
DEFAULT_PERMISSIONS = ("public", "deny")


@dataclass
class IngestReport:
    """What one ingest run did. Counts are documents unless named otherwise.

    ``metadata_updated``: unchanged text whose permissions changed (rows rewritten with stored
    vectors). ``moved``: unchanged text and permissions read from another path than last time (a
    moved folder, a second clone); they count as ``unchanged`` too, their rows are rewritten with
    the new path and stored vectors. ``moved_from``: ``{old folder: documents}`` for them, the
    old path with the part it shares with the new one (the path below the ingested root) cut off. ``superseded``: one line per older version not indexed (not an error).
    ``errors``: one line per file skipped for an error. ``warnings``: one line per oddity that
    skipped nothing of value (unknown front matter key, folder named like a file).
    ``removed``: one line per deleted document (its file is gone). ``added_docs``,
    ``updated_docs``, ``deleted_docs``: the doc ids behind ``added``, ``updated`` and ``deleted``,
    in the order they were committed (``--json`` carries them; the counts stay the summary).
    ``duplicates``: one line per whole-book copy or near-duplicate not indexed (not an error).
    ``units_embedded``: answer units embedded. ``units_refreshed``: unchanged documents whose
    unit vectors were recomputed for a new splitter version (chunk vectors reused).
    """

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks_embedded: int = 0
    metadata_updated: int = 0
    units_embedded: int = 0
    units_refreshed: int = 0
    moved: int = 0
    moved_from: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    added_docs: list[str] = field(default_factory=list)
    updated_docs: list[str] = field(default_factory=list)
    deleted_docs: list[str] = field(default_factory=list)

    def unchanged_text(self) -> str:
        """``"60 unchanged"``, naming where moved documents came from: ``"60 unchanged (moved from
        /old/docs)"`` when all moved from one place, ``"60 unchanged (3 moved from /a, 2 from /b)"``
        otherwise (up to three places, then ``"and N more places"``)."""
        text = f"{self.unchanged} unchanged"
        if not self.moved:
            return text
        places = sorted(self.moved_from.items(), key=lambda kv: (-kv[1], kv[0]))
        if len(places) == 1 and self.moved == self.unchanged:
            return f"{text} (moved from {places[0][0]})"
        parts = [f"{n} moved from {root}" if i == 0 else f"{n} from {root}" for i, (root, n) in enumerate(places[:3])]
        if len(places) > 3:
            parts.append(f"and {len(places) - 3} more places")
        return f"{text} ({', '.join(parts)})"

    def as_dict(self) -> dict:
        return {
            "added": self.added, "updated": self.updated, "unchanged": self.unchanged,
            "deleted": self.deleted, "chunks_embedded": self.chunks_embedded,
            "metadata_updated": self.metadata_updated, "units_embedded": self.units_embedded,
            "units_refreshed": self.units_refreshed, "moved": self.moved,
            "moved_from": dict(sorted(self.moved_from.items())), "errors": list(self.errors),
            "superseded": list(self.superseded), "warnings": list(self.warnings),
            "duplicates": list(self.duplicates), "added_docs": list(self.added_docs),
            "updated_docs": list(self.updated_docs), "deleted_docs": list(self.deleted_docs),
        }


Progress = Callable[[int], None]
#: Embedding progress: called with (chunks embedded so far, chunks planned so far) during a run.
EmbedProgress = Callable[[int, int], None]
#: Texts per embedder call when reporting embedding progress (sorted by length first, so the
#: embedder's own length batching pads as little as with one call).
EMBED_SLICE = 64


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
    n_texts: int = 0  # texts embedded (chunks and answer units)
    n_chunk_texts: int = 0  # chunks given new vectors
    n_own_texts: int = 0  # chunk texts among the texts embedded (the rest are answer units)
    vectors: np.ndarray | None = None
    embed_error: str | None = None  # "TypeName: message" of a failed embedding call
    lexical: list[list[str]] | None = None  # per item, each chunk's lexical text (from a worker)
    by_worker: bool = False  # prepared in a forked worker process


#: Chunk rows after which the forked-worker path commits the ready batches it holds (it commits
#: earlier when the next batch is not ready). 100k synthetic chunks, 2 workers, same session:
#: one commit per 256 documents 2,994 chunks/s, per 2,048 documents 3,276 (bench/scale.py corpus).
COMMIT_ROWS = 4096
#: Batches per worker submitted ahead of the one being written (bounded memory; deep enough
#: that several are ready to share a commit).
AHEAD_PER_WORKER = 8

#: In a forked prepare worker: the ingestor and batches it prepares from
#: (:meth:`Ingestor._commit_all`). The pool's initializer sets it from arguments a ``fork``
#: context hands over in memory, not pickled, so only batch numbers cross the pipe.
_FORKED: tuple | None = None


def _worker_start(parent: int, ingestor: Ingestor, batches: list) -> None:
    """Initializer of a forked prepare worker: it dies with its parent (a killed ingest leaves
    no worker behind; Linux ``PR_SET_PDEATHSIG``), Ctrl-C is the parent's to handle (it stops
    the pool), and the inherited objects leave the collector's view (no copy-on-write by the
    collector touching them, no finaliser of the parent's store handles run here)."""
    import ctypes
    import gc
    import signal

    global _FORKED
    _FORKED = (ingestor, batches)
    after_fork = getattr(ingestor.embedder, "after_fork", None)
    if after_fork is not None:
        after_fork()

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the line above
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.freeze()


def _kill_pool(pool) -> None:
    """Stop a prepare pool at once: SIGKILL its workers (they hold nothing of the store) and
    reap them. ``shutdown`` alone is not enough after a Ctrl-C that landed while the pool was
    starting its workers: its manager thread never ran, no worker was told to stop, and Python's
    exit then waited for them for ever (a fresh-clone trial hung 3 times in 24 interrupted
    ingests)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        try:
            p.kill()
        except (OSError, ValueError):
            pass
    for p in procs:
        p.join(timeout=5)


def _prepare_forked(i: int) -> _Prepared:
    """Prepare batch ``i`` of :data:`_FORKED` in a worker process."""
    ingestor, batches = _FORKED
    return ingestor._prepare(batches[i], in_worker=True)


def moved_root(old: str, new: str) -> str:
    """The folder (or file) a document moved from: ``old`` without the trailing path parts it
    shares with ``new`` (``/a/c1/docs/x.md``, ``/b/c2/docs/x.md`` -> ``/a/c1``); ``old`` whole if
    the file name changed."""
    o, n = Path(old).parts, Path(new).parts
    same = 0
    while same < min(len(o), len(n)) - 1 and o[len(o) - 1 - same] == n[len(n) - 1 - same]:
        same += 1
    return str(Path(*o[:len(o) - same])) if same else old


class Ingestor:
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

    def __init__(self, store: Store, embedder: Embedder, chunker: Chunker | None = None,
                 default_permission: str = "public", batch_docs: int = 256, policy: Policy | None = None,
                 keep_duplicates: bool = False, units: UnitSplitter | None = None, workers: int | None = None,
                 chunk_vectors: str = "chunk"):
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
    def ingest_documents(self, docs: Iterable[Document], report: IngestReport | None = None,
                         progress: Progress | None = None, root: str = "") -> IngestReport:
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

    def ingest_folder(self, root: Path, progress: Progress | None = None,
                      follow_links: bool = False) -> IngestReport:
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
                    f"older versions kept as history (id{HISTORY_SEP}version); rename the file or set another 'id'; skipped")
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
        prefix = str(root) + ("" if root.is_file() else "/")
        # a folder this run's documents moved from (``docs`` renamed to ``docs2``): its documents
        # whose files are gone went with it; kept, they stayed searchable with no folder left
        # that an ingest could delete them from
        old_roots = [r.rstrip("/") + "/" for r in report.moved_from]
        gone = [
            e for e in self.store.documents().values()
            if e.doc_id not in present
            and (e.source == str(root) or e.source.startswith(prefix)
                 or (any(e.source.startswith(r) for r in old_roots) and not Path(e.source).exists()))
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

    def _refuse_rerooted(self, docs: list[Document], report: IngestReport, failed_sources: set[str]) -> list[Document]:
        """``docs`` without the ones this ingest would index again under a new id, each with an
        error line (its indexed version stays; its source joins ``failed_sources`` so it is not
        deleted). Ids and policy globs are relative to the ingested folder, so:

        * a file already indexed under an id its new one is a path suffix of, or the reverse
          (``citewise ingest docs/internal/finance``
          after ``citewise ingest docs``: ``internal/finance/budget`` would become ``budget``,
          the old id deleted, and the rule ``internal/finance/**`` would no longer match it,
          leaving it public);
        * a new document that is an indexed one whose file is gone, moved (the same content, or
          the same path seen from another root: ``docs/internal/finance/budget`` after ``mv docs
          parent/``), when it would be readable by a group the indexed one is not: a move never
          widens who may read a document.
        """
        stored = self.store.documents()
        if not stored:
            return docs
        by_source: dict[str, list] = {}
        for e in stored.values():
            by_source.setdefault(os.path.abspath(e.source), []).append(e)
        gone: list | None = None  # indexed documents whose file is gone: read only for a new id

        def rerooted(d: Document, e) -> bool:  # the same path seen from another root
            return d.doc_id.endswith("/" + e.doc_id) or e.doc_id.endswith("/" + d.doc_id)

        keep: list[Document] = []
        for d in docs:
            src = os.path.abspath(d.source)
            other = next((e for e in by_source.get(src, ()) if rerooted(d, e)), None)
            why = ""
            if other is not None:
                why = (f"already indexed as '{other.doc_id}'; ingested from here it would become '{d.doc_id}' "
                       "(ids and policy globs are relative to the ingested folder); skipped, the indexed "
                       "version kept: ingest the folder it was indexed from (unchanged files are skipped), "
                       "or set 'id' in its front matter")
            elif d.doc_id not in stored:
                if gone is None:  # a stat per indexed document; a re-ingest of known ids never pays it
                    gone = [e for e in stored.values() if not Path(e.source).exists()]
                groups = set(self.groups_for(d))
                was = next((e for e in gone if (e.content_hash == d.content_hash or rerooted(d, e))
                            and not groups <= set(e.groups)), None)
                if was is not None:
                    why = (f"looks like '{was.doc_id}' moved (readable by {', '.join(was.groups) or 'nobody'}), whose "
                           f"file {was.source} is gone; as '{d.doc_id}' it would be readable by "
                           f"{', '.join(sorted(groups)) or 'nobody'}: a moved document never gets wider permissions. "
                           "Skipped: make the policy globs match its new path (they are relative to the ingested "
                           "folder) or give it 'permissions' in its front matter")
            if why:
                report.errors.append(f"{d.source}: {why}")
                failed_sources.update((d.source, src))
            else:
                keep.append(d)
        return keep

    def _unmatched_rules(self, docs: list[Document], root: Path, report: IngestReport) -> None:
        """A warning line per policy rule that matches none of the folder's documents: its
        groups protect nothing, and a glob written as a file-system path ("/srv/docs/hr/**",
        "../hr/**") or with a typo made documents meant for a group readable by the default
        permission with no word said."""
        if self.policy is None or not self.policy.rules:
            return
        rels = [self._rel(d.source) for d in docs]
        for n, rule in enumerate(self.policy.rules, start=1):
            if not any(rule.matches(r) for r in rels):
                report.warnings.append(
                    f"{self.policy.source or 'policy'}: rule {n} (glob '{rule.glob}', groups {', '.join(rule.groups)}) "
                    f"matches no document under {root}; globs are relative to the ingested folder "
                    "(e.g. 'internal/finance/**' for its internal/finance/ subfolder), so no document got these groups")

    # -- internals ----------------------------------------------------------------------------
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
                moved = (tuple(entry.groups) == groups and entry.source != doc.source and not stale_units)
                batch.append(_Work(doc, groups, entry.source_changed_at or mtime_iso(doc.source), True,
                                   units_only=same_meta, moved_from=entry.source if moved else None))
            else:
                batch.append(_Work(doc, groups, mtime_iso(doc.source), False))
            if len(batch) >= self.batch_docs:
                batches.append(batch)
                batch = []
        if batch:
            batches.append(batch)
        self._commit_all(batches, known, report, progress)
        return {d.doc_id for d in winners}

    def _parallel_workers(self, todo: list[int]) -> int:
        """How many forked workers prepare batches while this process writes; 0: none.

        Only on Linux (``fork``; elsewhere forking a process that holds store threads is not
        safe), only for an embedder marked ``cpu_parallel`` (pure Python/NumPy, no threads,
        sockets or model sessions of its own: the hashing embedder; its ``after_fork()``, if
        any, runs in each worker first), and only when ``todo`` (the batches that can be
        prepared without the store: no stored vectors to reuse) holds at least two.
        """
        workers = self.workers if self.workers is not None else min(4, _cpu_count())
        if workers < 1 or not sys.platform.startswith("linux") or not getattr(self.embedder, "cpu_parallel", False):
            return 0
        if len(todo) < 2:  # batches a worker can prepare (no stored vectors to reuse)
            return 0
        return workers

    def _commit_all(self, batches: list[list[_Work]], known: dict[str, DocumentEntry], report: IngestReport,
                    progress: Progress | None) -> None:
        """Prepare and write ``batches`` in order.

        Without workers each batch is its own commit. With :meth:`_parallel_workers` > 0, forked
        worker processes chunk and embed the batches ahead (at most :data:`AHEAD_PER_WORKER` per
        worker in flight) while this process writes them, in the same order, so what is stored
        is what the serial path stores (tests/test_ingest_parallel.py); consecutive batches that
        are ready go into one commit up to :data:`COMMIT_ROWS` chunk rows (fewer commits: each
        LanceDB commit writes a manifest listing every fragment, so their cost grew with the
        table). A batch whose worker failed (killed, pool broken) is prepared here instead.
        """
        todo = [i for i, b in enumerate(batches) if not any(w.reuse_vectors for w in b)]
        workers = self._parallel_workers(todo)
        if not workers:
            for batch in batches:
                self._commit(batch, known, report, progress)
            return
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        futures: dict[int, object] = {}
        pos = 0
        group: list[tuple[list[_Work], _Prepared]] = []  # prepared batches for the next commit
        rows = 0
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                   initializer=_worker_start, initargs=(os.getpid(), self, batches))
        try:
            for i, batch in enumerate(batches):
                while pos < len(todo) and len(futures) < AHEAD_PER_WORKER * workers and pool is not None:
                    try:
                        with warnings.catch_warnings():  # the workers fork here, on the first submit
                            # lancedb warns in a forked child that its runtime was reset (the
                            # workers never call it); Python 3.12+ that the parent has threads
                            warnings.filterwarnings("ignore", "lancedb fork support", RuntimeWarning)
                            warnings.filterwarnings("ignore", ".*multi-threaded, use of fork", DeprecationWarning)
                            futures[todo[pos]] = pool.submit(_prepare_forked, todo[pos])
                    except Exception:  # a broken pool: prepare the rest here
                        pool.shutdown(wait=False, cancel_futures=True)
                        pool = None
                        break
                    pos += 1
                future = futures.pop(i, None)
                prepared = None
                if future is not None:
                    try:
                        prepared = future.result()
                    except Exception:  # a worker killed or failing: this process prepares the batch
                        prepared = None
                if prepared is None:
                    prepared = self._prepare(batch)
                else:
                    self._planned += prepared.n_texts
                    self._embedded += prepared.n_texts
                    if self.embed_progress is not None and prepared.n_texts:
                        self.embed_progress(self._embedded, self._planned)
                group.append((batch, prepared))
                rows += prepared.n_chunk_texts
                ahead = futures.get(i + 1)
                if rows >= COMMIT_ROWS or ahead is None or not ahead.done():
                    self._write(group, known, report, progress)
                    group, rows = [], 0
        except BaseException:  # Ctrl-C or an error: the workers must not outlive the ingest
            if pool is not None:
                _kill_pool(pool)
                pool = None
            raise
        finally:
            if pool is not None:
                try:
                    pool.shutdown(wait=True, cancel_futures=True)
                except BaseException:  # Ctrl-C while the workers were told to stop
                    _kill_pool(pool)
                    raise

    def _known(self, docs: list[Document]) -> dict[str, DocumentEntry]:
        """The stored entries this run can consult: those of the incoming ids and of the history
        ids (``id@version``) their versions would get, not the whole index (at 1M chunks reading
        every entry was most of a one-document re-ingest, issue 12). Moves are detected per id
        (same id, other source), so no other entry is needed."""
        ids = {d.doc_id for d in docs} | {f"{d.doc_id}@{d.version or '-'}" for d in docs}
        return self.store.documents(doc_ids=ids)

    def _pick_versions(self, docs: Iterable[Document], known: dict[str, DocumentEntry],
                       report: IngestReport) -> list[Document]:
        """The newest version of each id (current), then older versions kept as history.

        Versions of one id are ordered by :func:`citewise.lifecycle.newer_key`. Each older one is
        stored as ``doc_id@version`` with ``current=False`` and ``valid_to`` = the date its
        successor came into force, so ``as_of``/``version`` queries still find it while default
        searches see only the newest. Equal keys: the first file wins, the second is an error.
        """
        versions: dict[str, list[Document]] = {}
        for doc in docs:
            if HISTORY_SEP in doc.doc_id:
                report.errors.append(
                    f"{doc.source}: document id '{doc.doc_id}' contains '{HISTORY_SEP}', which is reserved for "
                    f"older versions kept as history (id{HISTORY_SEP}version); rename the file or set another 'id'; skipped")
                continue
            seen = versions.setdefault(doc.doc_id, [])
            twin = next((d for d in seen if newer_key(d) == newer_key(doc)), None)
            if twin is not None:
                report.errors.append(f"{doc.source}: duplicate document id '{doc.doc_id}' "
                                     f"(already used by {twin.source}, same version); skipped")
                continue
            seen.append(doc)
        current: list[Document] = []
        history: list[Document] = []
        for doc_id, docs_of_id in versions.items():
            ordered = sorted(docs_of_id, key=newer_key)  # oldest first
            newest = ordered[-1]
            for older, newer in zip(ordered, ordered[1:]):
                report.superseded.append(_superseded(older, newer))
                history.append(dataclasses.replace(
                    older, doc_id=f"{doc_id}@{older.version or '-'}", current=False,
                    valid_to=in_force_date(newer)))
            entry = known.get(doc_id)
            if (entry is not None and entry.source != newest.source and Path(entry.source).is_file()
                    and _entry_key(entry) > newer_key(newest)):
                report.superseded.append(
                    f"{newest.source}: version '{newest.version or '-'}' of '{doc_id}' is older than the indexed "
                    f"version '{entry.version or '-'}' from {entry.source}; not indexed")
                report.unchanged += 1
                continue
            current.append(newest)
        return current + history

    def _refresh(self) -> None:
        refresh = getattr(self.store, "refresh_indexes", None)
        if refresh:
            refresh()

    def _record(self, started, root: str, report: IngestReport) -> None:
        record = getattr(self.store, "record_run", None)
        if record:
            record(IngestRun(
                started_at=iso(started), finished_at=iso(utc_now()), root=root, added=report.added,
                updated=report.updated, unchanged=report.unchanged, deleted=report.deleted,
                superseded=len(report.superseded), errors=len(report.errors),
                chunks_embedded=report.chunks_embedded,
            ))

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
            idx = order[s:s + EMBED_SLICE]
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
            vectors = np.empty((0,))
            span = None
            if w.reuse_vectors:
                stored = self.store.get_vectors([c.chunk_id for c in chunks])
                if all(c.chunk_id in stored for c in chunks):
                    vectors = np.stack([stored[c.chunk_id] for c in chunks])
            plan = self._plan_units(doc, chunks, texts, w.reuse_vectors)
            if len(vectors) != len(chunks):
                # units-mean: only chunks without units embed their own text (see chunk_vectors)
                own = (list(range(len(chunks))) if self.chunk_vectors == "chunk" or plan is None
                       else [j for j, p in enumerate(plan) if not _unit_count(p)])
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
                prepared.vectors = (self.embedder.embed(texts) if texts
                                    else np.empty((0, 0), dtype=np.float32))
            else:
                prepared.vectors = self._embed(texts)
        except Exception as e:  # any embedder failure (model, HTTP): keep old versions, report, go on
            prepared.embed_error = f"{type(e).__name__}: {' '.join(str(e).split())[:200]}"
            return prepared
        prepared.items = [(i, chunks, self._chunk_vectors(plan, prepared.vectors, span, lone[k], len(chunks))
                           if span is not None else vectors, span, plan)
                          for k, (i, chunks, vectors, span, plan) in enumerate(prepared.items)]
        if in_worker:
            prepared.lexical = [[lexical_text(c.indexed_text) for c in item[1]] for item in prepared.items]
        return prepared

    def _commit(self, batch: list[_Work], known: dict[str, DocumentEntry], report: IngestReport,
                progress: Progress | None) -> None:
        self._write([(batch, self._prepare(batch))], known, report, progress)

    def _write(self, group: list[tuple[list[_Work], _Prepared]], known: dict[str, DocumentEntry],
               report: IngestReport, progress: Progress | None) -> None:
        """Store prepared batches in one commit (:meth:`_upsert`) and count them in ``report``.

        ``group``: ``(batch, prepared)`` pairs, in order; the serial path writes one batch per
        commit, the forked-worker path several ready ones (:data:`COMMIT_ROWS`).
        """
        final: list[DocumentUpdate] = []
        spans: list[tuple[int, int] | None] = []
        for batch, prepared in group:
            report.errors.extend(prepared.errors)
            if prepared.embed_error is not None:
                for item in prepared.items:
                    report.errors.append(f"{batch[item[0]].doc.source}: embedding failed ({prepared.embed_error}); "
                                         "previous version kept")
                continue
            vectors = prepared.vectors
            lexical = prepared.lexical or [None] * len(prepared.items)
            for (i, chunks, reused, s, plan), lex in zip(prepared.items, lexical):
                w = batch[i]
                final.append(DocumentUpdate(w.doc, chunks, reused, w.groups,
                                            w.changed_at, self._unit_vectors(plan, vectors), lexical=lex))
                spans.append(s)
        written = self._upsert(final, report) if final else set()
        units_only: set[int] = set()
        moved: dict[int, str] = {}
        for batch, prepared in group:
            if prepared.embed_error is None:
                report.chunks_embedded += prepared.n_chunk_texts
                report.units_embedded += prepared.n_texts - prepared.n_own_texts
            units_only |= {id(w.doc) for w in batch if w.units_only}
            moved.update({id(w.doc): w.moved_from for w in batch if w.moved_from is not None})
        for u, s in zip(final, spans):
            if u.document.doc_id not in written:
                continue
            if s is None and id(u.document) in units_only:
                report.units_refreshed += 1
            elif s is None and id(u.document) in moved:
                report.unchanged += 1
                report.moved += 1
                root = moved_root(moved[id(u.document)], u.document.source)
                report.moved_from[root] = report.moved_from.get(root, 0) + 1
            elif s is None:
                report.metadata_updated += 1
            elif u.document.doc_id in known:
                report.updated += 1
                report.updated_docs.append(u.document.doc_id)
            else:
                report.added += 1
                report.added_docs.append(u.document.doc_id)
        if progress:
            for batch, _ in group:
                progress(len(batch))

    def _upsert(self, updates: list[DocumentUpdate], report: IngestReport) -> set[str]:
        """Commit ``updates`` in one store commit; if that fails, one document per commit, so a
        document the store rejects gets its error line and leaves its previous version, while
        the others are written. Returns the ids written."""
        try:
            self.store.upsert(updates)
            return {u.document.doc_id for u in updates}
        except Exception as e:
            if len(updates) == 1:
                report.errors.append(f"{updates[0].document.source}: could not be stored ({_one_line(e)}); "
                                     "previous version kept")
                return set()
        written: set[str] = set()
        for u in updates:
            written |= self._upsert([u], report)
        return written


    def _chunk_vectors(self, plan: list | None, vectors: np.ndarray, span: tuple[int, int], own: list[int],
                       n: int) -> np.ndarray:
        """One document's chunk vectors, shape (n, dim), from the batch's embeddings: its own
        chunk texts' vectors (``vectors[span]``, for the chunks ``own``), and in ``units-mean``
        mode the normalised mean of each other chunk's unit vectors
        (:func:`citewise.models.chunk_vectors.mean_of_units`)."""
        mine = vectors[span[0]:span[1]]
        if self.chunk_vectors == "chunk" or plan is None:
            return mine
        units = [p.vectors if isinstance(p, UnitVectors) else vectors[p[2]:p[2] + p[3]] for p in plan]
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
        get_units = getattr(self.store, "get_units", None)
        stored = get_units([c.chunk_id for c in chunks]) if reuse and get_units else {}
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
                vecs = vectors[first:first + n] if n else np.zeros((0, self.embedder.dim), np.float32)
                out.append(UnitVectors(self.units.version, key, spans, vecs))
        return out

def _unit_count(p) -> int:
    """Units in one chunk's unit plan entry (stored :class:`UnitVectors` or ``(key, spans, first, n)``)."""
    return len(p.vectors) if isinstance(p, UnitVectors) else p[3]


def _cpu_count() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _one_line(e: BaseException) -> str:
    msg = " ".join(str(e).split())[:200]
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


def _entry_key(entry: DocumentEntry) -> tuple:
    """:func:`citewise.lifecycle.newer_key` of a stored document entry."""
    d = entry.effective or entry.updated
    try:
        ordinal = dt.date.fromisoformat(d).toordinal() if d else 0
    except ValueError:
        ordinal = 0
    return (version_key(entry.version), ordinal)


def _superseded(old: Document, new: Document) -> str:
    return (f"{old.source}: version '{old.version or '-'}' of '{old.doc_id}' superseded by version "
            f"'{new.version or '-'}' in {new.source}; kept as history ('{old.doc_id}@{old.version or '-'}')")


def _stale_title_ids(entry, doc: Document) -> bool:
    """Whether the identifiers stored for ``doc``'s title are not the ones this version finds
    in it (:func:`citewise.text.analyzer.find_identifiers`; titles naming a release number,
    "Ledgerly 6.5 release notes", gained the identifier ``6.5``). Such a document is ingested
    again though its text is unchanged (counted as updated), so pinning finds it; a store that
    does not report its title identifiers (None) is taken at its word."""
    return entry.title_ids is not None and tuple(entry.title_ids) != tuple(find_identifiers(doc.title))
