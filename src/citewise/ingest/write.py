"""Writing prepared batches to the store: commits of ready batches, forked prepare workers,
the index refresh and the run record (:class:`citewise.ingest.Ingestor`)."""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING

from citewise.lifecycle import iso, utc_now
from citewise.store.base import DocumentEntry, DocumentUpdate, IngestRun

from citewise.ingest.memory import release_freed_memory
from citewise.ingest.report import IngestReport, Progress, _one_line
from citewise.ingest.work import _Prepared, _Work
from citewise.ingest.plan import moved_root

if TYPE_CHECKING:  # type-only: the Ingestor is built from this module's mixin
    from citewise.ingest.ingestor import Ingestor


#: Chunk rows after which the forked-worker path commits the ready batches it holds (it commits
#: earlier when the next batch is not ready). 100k synthetic chunks, 2 workers, same session:
#: one commit per 256 documents 2,994 chunks/s, per 2,048 documents 3,276 (bench/scale.py corpus).
COMMIT_ROWS = 4096
#: Chunk text (characters) from which a commit hands freed heap memory back to the system
#: before and after its write (:func:`citewise.ingest.memory.release_freed_memory`, ~20-30 ms
#: on a 600 MB heap: worth it after a huge document, not after every batch of small ones).
TRIM_MIN_CHARS = 16_000_000
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


def _cpu_count() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _WriteMixin:
    """Commits, forked workers and the run record of :class:`~citewise.ingest.Ingestor`."""

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

    def _commit_all(
        self,
        batches: list[list[_Work]],
        known: dict[str, DocumentEntry],
        report: IngestReport,
        progress: Progress | None,
    ) -> None:
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
        pool = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_worker_start,
            initargs=(os.getpid(), self, batches),
        )
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

    def _refresh(self) -> None:
        release_freed_memory()  # what the commits freed, before the index builds allocate anew
        self.store.refresh_indexes()

    def _record(self, started, root: str, report: IngestReport) -> None:
        self.store.record_run(
            IngestRun(
                started_at=iso(started),
                finished_at=iso(utc_now()),
                root=root,
                added=report.added,
                updated=report.updated,
                unchanged=report.unchanged,
                deleted=report.deleted,
                superseded=len(report.superseded),
                errors=len(report.errors),
                chunks_embedded=report.chunks_embedded,
            )
        )

    def _commit(
        self, batch: list[_Work], known: dict[str, DocumentEntry], report: IngestReport, progress: Progress | None
    ) -> None:
        self._write([(batch, self._prepare(batch))], known, report, progress)

    def _write(
        self,
        group: list[tuple[list[_Work], _Prepared]],
        known: dict[str, DocumentEntry],
        report: IngestReport,
        progress: Progress | None,
    ) -> None:
        """Store prepared batches in one commit (:meth:`_upsert`) and count them in ``report``.

        ``group``: ``(batch, prepared)`` pairs, in order; the serial path writes one batch per
        commit, the forked-worker path several ready ones (:data:`COMMIT_ROWS`).
        """
        # a large commit: the texts it was embedded from go back to the system before LanceDB's
        # write threads allocate beside them, and its row buffers after (citewise.ingest.memory)
        trim = sum(len(c.text) for _, p in group for item in p.items for c in item[1]) >= TRIM_MIN_CHARS
        if trim:
            release_freed_memory()
        final: list[DocumentUpdate] = []
        spans: list[tuple[int, int] | None] = []
        for batch, prepared in group:
            report.errors.extend(prepared.errors)
            if prepared.embed_error is None:
                report.warnings.extend(prepared.flagged)
            if prepared.embed_error is not None:
                for item in prepared.items:
                    report.errors.append(
                        f"{batch[item[0]].doc.source}: embedding failed ({prepared.embed_error}); previous version kept"
                    )
                continue
            vectors = prepared.vectors
            lexical = prepared.lexical or [None] * len(prepared.items)
            for (i, chunks, reused, s, plan), lex in zip(prepared.items, lexical):
                w = batch[i]
                final.append(
                    DocumentUpdate(
                        w.doc, chunks, reused, w.groups, w.changed_at, self._unit_vectors(plan, vectors), lexical=lex
                    )
                )
                spans.append(s)
        written = self._upsert(final, report) if final else set()
        if trim:
            release_freed_memory()
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
            if id(u.document) in units_only:  # (units-mean: its chunk means made anew from them)
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
        from citewise.store.faults import DiskFull, StoreDamaged, StoreReadOnly

        try:
            self.store.upsert(updates)
            return {u.document.doc_id for u in updates}
        except (DiskFull, StoreDamaged, StoreReadOnly):
            raise  # the store's fault, not the document's: no later document would fare better
        except Exception as e:
            if len(updates) == 1:
                report.errors.append(
                    f"{updates[0].document.source}: could not be stored ({_one_line(e)}); previous version kept"
                )
                return set()
        written: set[str] = set()
        for u in updates:
            written |= self._upsert([u], report)
        return written
