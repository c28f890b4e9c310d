"""The LanceDB store class (:class:`LanceStore`): opening, capabilities and the status
readings; its writes, reads and searches come from the mixins of the sibling modules."""

from __future__ import annotations

import datetime as dt
import threading
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from citewise.core import CitewiseError
from citewise.store.base import StoreCapabilities
from citewise.store.faults import StoreDamaged, damaged_message, guarded, one_line

from citewise.store.lance.schema import (
    ANN_EXACT_BELOW_VISIBLE,
    BM25_FOLDER,
    RUNS_TABLE,
    SCALAR_INDEX_MIN_ROWS,
    TABLE,
    _meta_fields,
    _schema,
    _unit_fields,
    exact_max_rows,
    import_lancedb,
)
from citewise.store.lance.host import TableHandle
from citewise.store.lance.writes import _WriteMixin
from citewise.store.lance.reads import _ReadMixin
from citewise.store.lance.search import _SearchMixin

if TYPE_CHECKING:
    from citewise.store.derived import SummaryTable, TreeTable


class LanceStore(_WriteMixin, _ReadMixin, _SearchMixin):
    """The embedded LanceDB backend of :class:`citewise.store.base.Store`.

    Args:
        path: folder of the LanceDB database (created if missing).
        dim: vector dimension; must match an existing table.
        ann_min_rows: rows from which :meth:`refresh_indexes` builds the ANN index on ``vector``
            and :meth:`vector_search` uses it (default :func:`exact_max_rows` of ``dim``); below it
            dense search is exact, in NumPy. ``float("inf")``-like large values force the exact path.
        ann_nprobes: IVF partitions probed per ANN query; default (None): :func:`ann_nprobes_for`
            the index's partition count (:data:`ANN_PROBE_SHARE` of them, at least
            :data:`ANN_NPROBES`), so the probed share does not shrink as the index grows.
        ann_exact_below: a filter leaving fewer visible rows than this is searched exactly
            (default :data:`ANN_EXACT_BELOW_VISIBLE`).
        read_only: open through LanceDB's native extension alone
            (:mod:`citewise.store.lance_native`), without ``import lancedb`` (most of a
            ``citewise search`` start, issue 12). Reads are the same; the first write (or
            :meth:`fts_search`) imports lancedb and reopens the tables with it.
        ann_cap_probes: probe exactly the configured IVF partitions whatever ``k`` (True),
            or let LanceDB probe on (False: deeper than 100 hits it then probes in effect every
            partition, at 1M ~2.3x slower). Default (None): capped when the query has no filter
            or its filter leaves at least :data:`ANN_CAP_MIN_VISIBLE_SHARE` of the rows
            visible, open otherwise (see :meth:`vector_search`).
        scalar_min_rows: rows from which :meth:`refresh_indexes` builds the scalar indexes of
            :data:`SCALAR_INDEXES` (default :data:`SCALAR_INDEX_MIN_ROWS`; 0: always).

    Raises:
        CitewiseError: the existing table has another vector dimension.
    """

    @guarded
    def __init__(
        self,
        path: str | Path,
        dim: int,
        ann_min_rows: int | None = None,
        ann_nprobes: int | None = None,
        ann_exact_below: int | None = None,
        read_only: bool = False,
        ann_cap_probes: bool | None = None,
        scalar_min_rows: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.dim = dim
        self._read_only = read_only
        if read_only:
            from citewise.store.lance_native import NativeConnection

            self._db = NativeConnection(self.path)
        else:
            self._db = import_lancedb().connect(str(self.path), read_consistency_interval=dt.timedelta(0))
        self._table = None
        self._names: tuple[int, frozenset[str]] = (-1, frozenset())
        self._runs = None
        self._fts_dirty = False
        self._doc_ids: tuple[int, set[str]] | None = None  # see _stored_doc_ids
        #: BM25 postings of the table version last searched (:mod:`citewise.store.postings`)
        self._postings = None
        self._probe = None
        self._postings_lock = threading.Lock()  # one (re)load at a time: see concurrent_legs
        #: documents this store wrote or deleted since a version whose postings may exist:
        #: [base version, version after the last of these commits, doc ids] (see _note_changes)
        self._changes = None
        self.bm25_root = self.path / BM25_FOLDER
        self.ann_min_rows = exact_max_rows(dim) if ann_min_rows is None else ann_min_rows
        self.ann_nprobes = ann_nprobes
        self.ann_cap_probes = ann_cap_probes
        self.ann_exact_below = ANN_EXACT_BELOW_VISIBLE if ann_exact_below is None else ann_exact_below
        self.scalar_min_rows = SCALAR_INDEX_MIN_ROWS if scalar_min_rows is None else scalar_min_rows
        #: "ann" or "exact": the path the last :meth:`vector_search` took (for tests and benches)
        self.last_vector_path = ""
        # per table version: (version, rows, has ANN index, {where: visible rows}, IVF partitions)
        self._ann_state: tuple[int, int, bool, dict[str, int], int] = (-1, 0, False, {}, 0)
        #: whether the last ANN :meth:`vector_search` capped its probes (for tests and benches)
        self.last_capped = False
        #: IVF partitions probed by the last ANN :meth:`vector_search` (for tests and benches)
        self.last_nprobes = 0
        tables = self._table_names()
        if TABLE in tables:
            self._table = self._open_or_discard(TABLE)
        if self._table is not None:
            have = self._table.schema.field("vector").type.list_size
            if have != dim:
                raise CitewiseError(f"{self.path}: index vectors have dim {have}, embedder gives {dim}")
            missing = sorted(
                set(_schema(dim).names)
                - set(self._table.schema.names)
                - {f.name for f in _unit_fields(dim) + _meta_fields()}
            )
            if missing:
                raise CitewiseError(
                    f"{self.path}: index built by an older citewise (no column {', '.join(missing)}); "
                    "re-ingest into a new --index folder"
                )
        if RUNS_TABLE in tables:
            self._runs = self._open_or_discard(RUNS_TABLE)

    def _table_names(self) -> list[str]:
        names: list[str] = self._db.table_names() if self._read_only else self._db.list_tables().tables
        return names

    def _writable(self) -> None:
        """Reopen a ``read_only`` store's connection and tables with ``lancedb`` (before a write).

        The tables are reopened by name at their latest version, as any read would see them.
        """
        if not self._read_only:
            return
        self._db = import_lancedb().connect(str(self.path), read_consistency_interval=dt.timedelta(0))
        self._read_only = False
        if self._table is not None:
            self._table = self._db.open_table(TABLE)
        if self._runs is not None:
            self._runs = self._db.open_table(RUNS_TABLE)

    def _open_or_discard(self, name: str) -> TableHandle | None:
        """Open a table; a table folder without any committed version is discarded (None).

        A process killed while *creating* a table leaves ``<name>.lance`` with data files but no
        manifest: LanceDB lists it yet cannot open it. Nothing was committed, so nothing is lost by
        removing it (found by tests/test_crash.py). A table with committed versions that fails to
        open is reported, never removed.

        Raises:
            StoreDamaged: the table has committed versions but cannot be opened.
        """
        try:
            return self._db.open_table(name)
        except (ValueError, OSError, RuntimeError) as e:
            folder = self.path / f"{name}.lance"
            if folder.is_dir() and not any((folder / "_versions").glob("*.manifest")):
                import shutil

                shutil.rmtree(folder)
                return None
            raise StoreDamaged(damaged_message(self.path.parent, f"{folder}: {one_line(e)}")) from None

    @property
    def capabilities(self) -> StoreCapabilities:
        """An embedded store in its own folder (files may sit beside it), written by the one
        index that owns the folder (the index's file lock is enough)."""
        return StoreCapabilities(name="lancedb", folder=self.path, shared=False, rows_scan=True)

    def ingest_lock(
        self, wait: bool = False, on_wait: Callable[[str], None] | None = None
    ) -> AbstractContextManager[Any]:
        """No lock of its own: only the index owning this folder writes it, under the folder's
        ``ingest.lock`` (:func:`citewise.index.ingest_lock`)."""
        return nullcontext()

    def close(self) -> None:
        """Nothing to release: LanceDB handles close with the process."""

    def summary_table(self) -> SummaryTable:
        """Document summaries in ``<index>/doclevel/`` beside this store's folder
        (:class:`citewise.store.derived.FolderSummaries`)."""
        from citewise.store.derived import FolderSummaries

        return FolderSummaries(self.path.parent / "doclevel")

    def tree_table(self) -> TreeTable:
        """RAPTOR trees in ``<index>/raptor/`` (:class:`citewise.store.derived.FolderTrees`)."""
        from citewise.store.derived import FolderTrees

        return FolderTrees(self.path.parent / "raptor")

    def replication(self) -> None:
        """None: an embedded store has no replicas."""
        return None

    def has_ann_index(self) -> bool:
        """Whether the chunk table has the ANN index on ``vector`` (see :func:`_ann_config`)."""
        t = self._reader()
        return t is not None and any(i.columns == ["vector"] for i in t.list_indices())

    def fragments(self) -> int:
        """Number of data fragments of the chunk table (1 after compaction of a table < 1M rows)."""
        if self._table is None:
            return 0
        self._writable()
        return int(self._table.stats()["fragment_stats"]["num_fragments"])

    def unindexed_rows(self) -> int:
        """Rows not (yet) covered by the FTS index; all rows when there is no FTS index."""
        if self._table is None:
            return 0
        self._writable()
        fts = [i for i in self._table.list_indices() if i.columns == ["lexical"]]
        if not fts:
            return int(self._table.count_rows())
        stats = self._table.index_stats(fts[0].name)
        return int(stats.num_unindexed_rows) if stats is not None else self._table.count_rows()
