"""LanceDB embedded store (DESIGN.md: the embedded default, LanceDB pinned at 0.40.0).

One table, ``chunks``: each row is a chunk with its document's metadata, its vector and its
lexical text (our analyzer's output). Keeping document metadata on the chunk rows makes the chunk
table the single source of truth, so one ``merge_insert`` commit replaces a document's chunks,
vectors and lexical entries together (no window in which a document has zero chunks or a mix of
versions).

Answer-unit vectors (:class:`citewise.store.base.UnitVectors`) live on the same rows
(``unit_vectors``: list of ``dim``-vectors, ``unit_spans``: flattened start/end pairs,
``units_version``, ``units_key``), so the same commit writes, replaces or deletes them with their
chunk: a second table could not be committed atomically with this one. Tables created before
these columns existed get them (all null = nothing stored) on the first write.

Lexical search: BM25 over the ``lexical`` column (our analyzer's output, split on whitespace),
scored from NumPy postings derived from the table's current committed version
(:mod:`citewise.store.postings`; LanceDB's FTS had 0.2-5 ms of fixed cost per query, issue 12).
Filters become a SQL predicate that LanceDB evaluates once per table version and filter; the
matching rows are a mask applied inside the scoring, so a filtered top-k is full. The scores equal
those of LanceDB's FTS index over the same column (``whitespace`` base tokenizer, no
lowercasing, stemming or stop words of its own — our analyzer already did that), which is still
built and kept as the reference (:meth:`LanceStore.fts_search`). Below :data:`ANN_MIN_ROWS` rows
the postings also keep the vectors, and exact dense search runs in NumPy too.

Index upkeep: after writes, :meth:`LanceStore.refresh_indexes` compacts the table and merges new
rows into every index (``Table.optimize``: compaction into fragments of up to 1M rows, index
update, and removal of versions older than :data:`CLEANUP_AFTER`), then creates any index that is
missing: the FTS index, and the scalar indexes of :data:`SCALAR_INDEXES` that the permission,
version and id predicates use (a label-list index on ``groups`` and ``title_ids``, bitmaps on
``current`` and ``version``, b-trees on ``chunk_id`` and ``doc_id``). Without them every filtered
query scanned those columns in full (issue 12: 96 of 112 ms per BM25 query at 1M chunks), and an
ingest in batches left one fragment per batch (21 on SciFact, 391 at 100k). BM25 scores after
``optimize`` equal those of a full rebuild, and search results are identical with and without
the scalar indexes and compaction (tests/test_lifecycle.py, tests/test_scale_indexes.py). Rows not
yet in an index are still searched (flat), so a process killed between a commit and the index
update loses nothing; the next refresh (every ingest run calls one) repairs the indexes. A table
folder left by a process killed while creating the table (no committed version) is discarded
when the store opens.

Dense search: exact (brute force over the visible rows) below :data:`ANN_MIN_ROWS` chunks; from
there :meth:`LanceStore.refresh_indexes` also builds an IVF_FLAT index on ``vector`` (cosine; why
this type: :func:`_ann_config`) and :meth:`LanceStore.vector_search` probes it, except for a
filter leaving fewer than :data:`ANN_EXACT_BELOW_VISIBLE` rows visible, which is searched
exactly. The index is created in its own commit after the data commits, kept up to date by
``optimize`` like the others, and retrained once the table has grown :data:`ANN_RETRAIN_GROWTH`
times (new index first, stale one dropped after), so the per-document replace stays one commit and a kill during the
index build leaves a table that is searched exactly until the next refresh
(tests/test_ann.py, tests/test_crash.py).

Reads: one handle per table for the life of the store, opened with strong read consistency
(``read_consistency_interval=0``: before each read LanceDB checks for a newer version and loads it),
so a long-lived store sees commits made by other processes (issue 12: a handle opened before an
ingest in another process served the old version forever); a table created by another process
after the store opened is opened by the first read that needs it. Each read builds its query on
the table's async handle and runs it in one trip to LanceDB's event-loop thread: the synchronous
query builder made 6 trips and fetched the schema 3 times per query (issue 12). The column names
are cached per table version.

A second table, ``ingest_runs``, is the ingest log (one row per completed run) used by
``citewise status`` for staleness.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
import json
import threading
import time
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from citewise.core import CitewiseError, Filters
from citewise import metadata as _metadata
from citewise.store.base import DocumentEntry, DocumentUpdate, IngestRun, ScoredChunk, StoredChunk, UnitVectors
from citewise.text.analyzer import find_identifiers, fold

TABLE = "chunks"
RUNS_TABLE = "ingest_runs"
#: Extra rows fetched beyond k so that ties at the k-th score are broken by chunk id here, not
#: by the engine's arbitrary order (exact unless more than this many rows tie at the cut).
TIE_MARGIN = 16


def _q(value: str) -> str:
    """A SQL string literal (single quotes doubled)."""
    return "'" + str(value).replace("'", "''") + "'"


def filter_sql(filters: Filters | None) -> str | None:
    """The SQL predicate for ``filters`` (None when there is nothing to filter).

    Without a date or a version only current documents match (older versions kept as history
    are found by ``as_of`` or ``version``).

    >>> filter_sql(Filters(groups=("public", "finance"), version="3"))
    "array_has_any(groups, ['public', 'finance']) AND version = '3'"
    >>> filter_sql(None)
    'current = true'
    """
    if filters is None:
        return "current = true"
    parts = []
    if filters.groups is not None:
        if not filters.groups:
            return "false"
        parts.append(f"array_has_any(groups, [{', '.join(_q(g) for g in filters.groups)}])")
    if filters.doc_ids is not None:
        if not filters.doc_ids:
            return "false"
        parts.append(f"doc_id IN ({', '.join(_q(d) for d in filters.doc_ids)})")
    if filters.as_of is not None:
        d = _q(filters.as_of.isoformat())
        parts.append(f"((effective <> '' AND effective <= {d}) OR "
                     f"(effective = '' AND (updated = '' OR updated <= {d})))")
        parts.append(f"(current = true OR (valid_to <> '' AND valid_to > {d}))")
    if filters.version is not None:
        parts.append(f"version = {_q(filters.version)}")
    if filters.as_of is None and filters.version is None:
        parts.append("current = true")
    if filters.metadata:
        from citewise.store.metadata_sql import lance_predicates

        parts += lance_predicates(filters.metadata)
    return " AND ".join(parts)


def _schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("doc_id", pa.string(), nullable=False),
            pa.field("title", pa.string()),
            pa.field("title_ids", pa.list_(pa.string())),
            pa.field("source", pa.string()),
            pa.field("version", pa.string()),
            pa.field("updated", pa.string()),
            pa.field("effective", pa.string()),
            pa.field("current", pa.bool_()),
            pa.field("valid_to", pa.string()),
            pa.field("groups", pa.list_(pa.string())),
            pa.field("content_hash", pa.string()),
            pa.field("indexed_at", pa.string()),
            pa.field("source_changed_at", pa.string()),
            pa.field("heading_path", pa.list_(pa.string())),
            pa.field("text", pa.string()),
            pa.field("lexical", pa.string()),
            pa.field("start", pa.int64()),
            pa.field("end", pa.int64()),
            pa.field("token_count", pa.int32()),
            pa.field("page_start", pa.int32()),
            pa.field("page_end", pa.int32()),
            pa.field("prev_id", pa.string()),
            pa.field("next_id", pa.string()),
            pa.field("parent_id", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
            *_unit_fields(dim),
            *_meta_fields(),
        ]
    )


def _meta_fields() -> list[pa.Field]:
    """Columns of the document metadata (:mod:`citewise.store.metadata_sql`); optional on old
    tables: JSON text, ``key=value`` terms, range values (Arrow JSON, read by ``json_get_*``)."""
    return [
        pa.field("metadata", pa.string()),
        pa.field("meta_terms", pa.list_(pa.string())),
        pa.field("meta_ranges", pa.json_(pa.string())),
    ]


def _unit_fields(dim: int) -> list[pa.Field]:
    """Columns of the answer-unit vectors (see module docstring); optional on old tables."""
    return [
        pa.field("units_version", pa.string()),
        pa.field("units_key", pa.string()),
        pa.field("unit_spans", pa.list_(pa.int32())),
        pa.field("unit_vectors", pa.list_(pa.list_(pa.float32(), dim))),
    ]


_META_COLS = ["chunk_id", "doc_id", "title", "source", "version", "updated", "effective", "groups",
              "heading_path", "text", "start", "end", "token_count", "page_start", "page_end",
              "prev_id", "next_id", "parent_id"]

_RUN_SCHEMA = pa.schema(
    [pa.field(f.name, pa.string() if f.type in (str, "str") else pa.int64()) for f in dataclasses.fields(IngestRun)]
)

#: Scalar indexes kept on the chunk table: column -> LanceDB index type. ``LABEL_LIST`` serves
#: ``array_has_any``/``array_has`` on list columns, ``BITMAP`` equality on low-cardinality columns,
#: ``BTREE`` equality and ``IN`` on near-unique ones (``get_chunks``, ``merge_insert``'s key, deletes).
SCALAR_INDEXES = {"groups": "LABEL_LIST", "title_ids": "LABEL_LIST", "current": "BITMAP", "version": "BITMAP",
                  "chunk_id": "BTREE", "doc_id": "BTREE", "meta_terms": "LABEL_LIST"}

#: Versions older than this are removed by the compaction after each ingest (their data files
#: with them). Long enough that a reader still on an older version finishes its query; a
#: long-lived reader moves to the latest version before each query (:meth:`LanceStore.sync`).
CLEANUP_AFTER = dt.timedelta(minutes=10)

#: The fewest rows from which a store builds an approximate (ANN) index on ``vector`` (the
#: PostgreSQL store's HNSW threshold; LanceDB stores use :func:`exact_max_rows`, which is at
#: least this). Exact search costs one pass over the visible vectors, linear in the rows (2.5 s at
#: 1M through LanceDB's scan, issue 12), so a large table needs an index.
ANN_MIN_ROWS = 50_000

#: Exact dense search (NumPy, over the vectors kept with the BM25 postings) serves tables of up to
#: this many vector cells (rows x dim): 250,000 chunks at dim 384. Below it a one-thread pass over
#: every vector costs less than probing the IVF index (100k x 384: exact 8-10 ms vs 22-25 ms for
#: 160 probes, bench/dense_search.py); at 1M chunks the pass costs ~10x that and the index wins
#: (docs/scaling.md). :func:`exact_max_rows` turns it into the store's ``ann_min_rows``.
EXACT_MAX_CELLS = 96_000_000


def exact_max_rows(dim: int) -> int:
    """Rows up to which a LanceDB store of ``dim``-d vectors searches exactly (:data:`EXACT_MAX_CELLS`),
    at least :data:`ANN_MIN_ROWS`.

    >>> exact_max_rows(384), exact_max_rows(1536)
    (250000, 62500)
    """
    return max(ANN_MIN_ROWS, EXACT_MAX_CELLS // max(int(dim), 1))


#: The ANN index is retrained when the table has grown to this many times the rows it was
#: trained on (new rows otherwise only join the existing partitions, which grow with them).
ANN_RETRAIN_GROWTH = 4

#: IVF partitions probed per ANN query at least (``minimum_nprobes``; ``maximum_nprobes`` is 0 =
#: no limit, so a filtered query probes further partitions until its top-k is full). 64 gave
#: recall@10 vs exact 1.000 on 100k hashing-embedder vectors (316 partitions) and 0.996 on
#: SciFact-derived MiniLM vectors, but 0.958-0.974 on NFCorpus-derived ones (each real vector's 26
#: noisy copies straddle partitions); on that set (kept build, 300 queries, bench/scale.py
#: --minilm-base, docs/benchmarks.md) 96 / 128 / 160 / 200 probes gave 0.977 / 0.983 / 0.991 /
#: 0.995 at p50 15.7 / 18.1 / 21.5 / 24.7 ms (64: 0.974, 15.5 ms; exact ~94 ms).
ANN_NPROBES = 160

#: Share of the index's IVF partitions probed per ANN query when more than :data:`ANN_NPROBES`
#: (:func:`ann_nprobes_for`): the share that gave recall 1.000 at 100k (64 of 316). A fixed 64
#: probes of the 1,000 partitions at 1M chunks scanned 6.4% of the vectors and recall@10 fell to
#: 0.762 (hashing vectors, 50 queries, bench/scale.py's queries); the same 20% share (200 probes)
#: gave 0.886 public / 0.826 under a 1% filter at p50 101 / 37 ms, 320 probes 0.958 / 0.944 at
#: 119 / 53 ms, exact 918 / 131 ms (one process, load ~4, docs/scaling.md).
ANN_PROBE_SHARE = 0.2

#: An ANN query whose filter leaves at least this share of the table's rows visible (or that has
#: no filter) probes exactly its configured IVF partitions whatever its depth
#: (:meth:`LanceStore.vector_search`, ``ann_cap_probes=None``); a more selective filter may probe
#: on (LanceDB's open maximum), since the probed partitions then hold proportionally fewer
#: visible rows. Measured at hybrid's depth (limit 116) against the exact top 100 on the 1M
#: MiniLM-derived sets (bench/scale.py --minilm-base, 100 real queries each, 200 of 1,000
#: partitions): broad filter capped recall@100 1.000 (SciFact) / 0.990 (NFCorpus), recall@10
#: 1.000 / 0.993, p50 41 / 39 ms vs 96 / 93 ms open; 1% filter capped recall@100 only 0.973 /
#: 0.935 (open: 1.000, p95 75-80 ms). docs/benchmarks.md, twelfth session.
ANN_CAP_MIN_VISIBLE_SHARE = 0.5

#: A filtered dense query whose filter leaves fewer visible rows than this bypasses the ANN
#: index and runs exact over the visible rows (cheap: a few thousand distances), so a selective
#: permission/version filter (e.g. a 1% group at 100k) never depends on how many visible rows the
#: probed partitions happen to hold.
ANN_EXACT_BELOW_VISIBLE = 5_000

#: A table folder unchanged for this long is trusted not to have committed since it was last
#: looked at when its mtime is the same (:meth:`LanceStore._version_probe`); well above the
#: kernel's timestamp granularity (one tick, <= 10 ms).
PROBE_MARGIN_NS = 50_000_000

#: Folder (inside the LanceDB folder) of the saved BM25 postings, one subfolder per table version.
BM25_FOLDER = "_bm25"
#: Up to this many changed documents, the postings of a new version are derived from the
#: previous version's (:meth:`LanceStore._updated_postings`; their rows are read by a
#: ``doc_id IN (...)`` predicate); above, a full build from a scan of the table, which a change of
#: that size costs little more than.
INCREMENTAL_MAX_DOCS = 5_000
#: :meth:`LanceStore.documents` reads up to this many requested ids through a ``doc_id IN (...)``
#: predicate (the ``doc_id`` index); more are filtered from a scan of the whole table.
DOC_FILTER_MAX = 5_000

_FTS_OPTIONS = dict(with_position=False, base_tokenizer="whitespace", lower_case=False, stem=False,
                    remove_stop_words=False, ascii_folding=False, max_token_length=64)


def _ann_config(rows: int):
    """The LanceDB config of the ANN index on ``vector`` for a table of ``rows`` rows.

    IVF_FLAT with cosine distance and ``round(sqrt(rows))`` partitions.

    Cosine, because :meth:`LanceStore.vector_search` ranks by cosine (an index trained on
    another distance gives wrong results). IVF_FLAT keeps the full float32 vectors in each
    partition, so the distances it returns are exact and only the partition choice
    (:func:`ann_nprobes_for`) costs recall; no refine step is needed. Measured against the
    quantized types on 100k hashing-embedder vectors (dim 256, 100 queries, public filter,
    recall@10 vs exact; LanceDB's default partitioning): IVF_HNSW_SQ (one partition) 0.45 / 0.65
    / 0.74 at ef 100 / 300 / 600 (36 s build); IVF_PQ (32 sub-vectors) 0.54 / 0.67 with nprobes
    20 / 40 and refine_factor 5 / 10 (26 s build); IVF_FLAT 0.968 / 1.000 at nprobes 20 / 60
    (1.3 s build). Partitions are set
    explicitly: LanceDB 0.40.0's IVF_FLAT default derives them from a target partition size
    (8,192 rows), which puts a few thousand rows in one partition (nothing approximate left to
    test) and gives few, large partitions at 100k; sqrt(rows) is the usual IVF choice.
    """
    from lancedb.index import IvfFlat

    return IvfFlat(distance_type="cosine", num_partitions=max(1, round(rows ** 0.5)))


def ann_nprobes_for(partitions: int, minimum: int = ANN_NPROBES, share: float = ANN_PROBE_SHARE) -> int:
    """IVF partitions to probe in an index of ``partitions`` partitions: ``ceil(share *
    partitions)``, at least ``minimum`` (and at most ``partitions`` when that is known, > 0).

    >>> ann_nprobes_for(316), ann_nprobes_for(1000), ann_nprobes_for(20)
    (160, 200, 20)
    """
    import math

    n = max(int(minimum), math.ceil(share * partitions - 1e-9))
    return min(n, partitions) if partitions > 0 else n


def _ivf_partitions(index_names) -> int:
    """Partitions of the ANN index from its name ``vector_ivf_p<N>`` (the largest N; 0 if none)."""
    best = 0
    for name in index_names:
        tail = name.rsplit("_p", 1)[-1]
        if name.startswith("vector_ivf_p") and tail.isdigit():
            best = max(best, int(tail))
    return best


def _scalar_config(kind: str):
    """The LanceDB index config object for a :data:`SCALAR_INDEXES` type name."""
    from lancedb.index import BTree, Bitmap, LabelList

    return {"LABEL_LIST": LabelList, "BITMAP": Bitmap, "BTREE": BTree}[kind]()


def page_range(pages: Sequence[int], start: int, end: int) -> tuple[int, int]:
    """1-based (first, last) page of the text span ``[start, end)`` given page start offsets.

    >>> page_range((0, 90, 200), 80, 120)
    (1, 2)
    >>> page_range((), 0, 10)
    (0, 0)
    """
    if not pages:
        return 0, 0
    first = bisect.bisect_right(pages, start)
    last = bisect.bisect_right(pages, max(start, end - 1))
    return max(first, 1), max(last, 1)


def import_lancedb():
    """``import lancedb``, without building the validators of its REST namespace client up front.

    ``import lancedb`` (0.40.0) imports ``lance_namespace_urllib3_client``, whose API classes
    decorate every method with ``pydantic.validate_call``; building those validators was 0.25 of
    the 0.80 s the import took (2-core machine, ``python -X importtime``), on every ``citewise
    search``, for a REST client an embedded store never calls. While lancedb is first imported,
    ``pydantic.validate_call`` is replaced by a decorator that builds the same validator on the
    first call of the decorated function (same checks, later). Any other pydantic use is
    untouched; when lancedb is already imported this is a plain import.
    """
    import sys

    if "lancedb" in sys.modules:
        return sys.modules["lancedb"]
    import functools

    import pydantic

    real = pydantic.validate_call

    def deferred(func=None, /, **options):
        def decorate(f):
            built = None

            @functools.wraps(f)
            def call(*args, **kwargs):
                nonlocal built
                if built is None:
                    built = real(**options)(f)
                return built(*args, **kwargs)

            return call

        return decorate(func) if func is not None else decorate

    pydantic.validate_call = deferred
    try:
        import lancedb
    finally:
        pydantic.validate_call = real
    return lancedb


class LanceStore:
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

    Raises:
        CitewiseError: the existing table has another vector dimension.
    """

    def __init__(self, path: str | Path, dim: int, ann_min_rows: int | None = None,
                 ann_nprobes: int | None = None, ann_exact_below: int | None = None, read_only: bool = False,
                 ann_cap_probes: bool | None = None):
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
        self._changes: list | None = None
        self.bm25_root = self.path / BM25_FOLDER
        self.ann_min_rows = exact_max_rows(dim) if ann_min_rows is None else ann_min_rows
        self.ann_nprobes = ann_nprobes
        self.ann_cap_probes = ann_cap_probes
        self.ann_exact_below = ANN_EXACT_BELOW_VISIBLE if ann_exact_below is None else ann_exact_below
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
            missing = sorted(set(_schema(dim).names) - set(self._table.schema.names)
                             - {f.name for f in _unit_fields(dim) + _meta_fields()})
            if missing:
                raise CitewiseError(f"{self.path}: index built by an older citewise (no column {', '.join(missing)}); "
                                    "re-ingest into a new --index folder")
        if RUNS_TABLE in tables:
            self._runs = self._open_or_discard(RUNS_TABLE)

    def _table_names(self) -> list[str]:
        return self._db.table_names() if self._read_only else self._db.list_tables().tables

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

    def _open_or_discard(self, name: str):
        """Open a table; a table folder without any committed version is discarded (None).

        A process killed while *creating* a table leaves ``<name>.lance`` with data files but no
        manifest: LanceDB lists it yet cannot open it. Nothing was committed, so nothing is lost by
        removing it (found by tests/test_crash.py). A table with committed versions that fails to
        open is reported, never removed.

        Raises:
            CitewiseError: the table has committed versions but cannot be opened.
        """
        try:
            return self._db.open_table(name)
        except (ValueError, OSError, RuntimeError) as e:
            folder = self.path / f"{name}.lance"
            if folder.is_dir() and not any((folder / "_versions").glob("*.manifest")):
                import shutil

                shutil.rmtree(folder)
                return None
            raise CitewiseError(f"{folder}: cannot open the index table ({' '.join(str(e).split())})") from None

    # -- writes -------------------------------------------------------------------------------
    def _rows(self, updates: Sequence[DocumentUpdate]) -> pa.Table:
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        cols: dict[str, list] = {f.name: [] for f in _schema(self.dim)}
        vectors = []
        for u in updates:
            d = u.document
            if len(u.chunks) != len(u.vectors):
                raise ValueError(f"{d.doc_id}: {len(u.chunks)} chunks but {len(u.vectors)} vectors")
            title_ids = find_identifiers(d.title)
            lexical = u.lexical_texts()
            meta_json, meta_terms = _metadata.to_json(d.metadata), _metadata.terms(d.metadata)
            meta_ranges = json.dumps(_metadata.ranges(d.metadata))
            for c, v, lex in zip(u.chunks, u.vectors, lexical):
                cols["metadata"].append(meta_json)
                cols["meta_terms"].append(meta_terms)
                cols["meta_ranges"].append(meta_ranges)
                p0, p1 = page_range(d.pages, c.start, c.end)
                cols["chunk_id"].append(c.chunk_id)
                cols["doc_id"].append(d.doc_id)
                cols["title"].append(d.title)
                cols["title_ids"].append(title_ids)
                cols["source"].append(d.source)
                cols["version"].append(d.version)
                cols["updated"].append(d.updated.isoformat() if d.updated else "")
                cols["effective"].append(d.effective.isoformat() if d.effective else "")
                cols["current"].append(bool(d.current))
                cols["valid_to"].append(d.valid_to.isoformat() if d.valid_to else "")
                cols["groups"].append(list(u.groups))
                cols["content_hash"].append(d.content_hash)
                cols["indexed_at"].append(now)
                cols["source_changed_at"].append(u.source_changed_at)
                cols["heading_path"].append(list(c.heading_path))
                cols["text"].append(c.text)
                cols["lexical"].append(lex)
                cols["start"].append(c.start + d.offset_base)
                cols["end"].append(c.end + d.offset_base)
                cols["token_count"].append(c.token_count)
                cols["page_start"].append(p0)
                cols["page_end"].append(p1)
                cols["prev_id"].append(c.prev_id)
                cols["next_id"].append(c.next_id)
                cols["parent_id"].append(c.parent_id)
                vectors.append(v)
        cols.pop("vector")
        unit_vecs = self._unit_columns(updates, cols)
        schema = _schema(self.dim)
        arrays = []
        for f in schema:
            if f.name == "vector":
                flat = np.asarray(vectors, dtype=np.float32).reshape(-1)
                arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(flat, type=pa.float32()), self.dim))
            elif f.name == "unit_vectors":
                arrays.append(unit_vecs)
            else:
                arrays.append(pa.array(cols[f.name], type=f.type))
        return pa.Table.from_arrays(arrays, schema=schema)

    def _unit_columns(self, updates: Sequence[DocumentUpdate], cols: dict[str, list]) -> pa.Array:
        """Fill the scalar unit columns in ``cols``; returns the ``unit_vectors`` array."""
        offsets = [0]
        parts: list[np.ndarray] = []
        for u in updates:
            units = list(u.units) if u.units is not None else [None] * len(u.chunks)
            if len(units) != len(u.chunks):
                raise ValueError(f"{u.document.doc_id}: {len(u.chunks)} chunks but {len(units)} unit entries")
            for uv in units:
                if uv is None:
                    cols["units_version"].append("")
                    cols["units_key"].append("")
                    cols["unit_spans"].append([])
                    offsets.append(offsets[-1])
                    continue
                vecs = np.asarray(uv.vectors, dtype=np.float32).reshape(-1, self.dim)
                if len(vecs) != len(uv.spans):
                    raise ValueError(f"{u.document.doc_id}: {len(uv.spans)} unit spans but {len(vecs)} unit vectors")
                cols["units_version"].append(uv.version)
                cols["units_key"].append(uv.key)
                cols["unit_spans"].append([int(x) for span in uv.spans for x in span])
                parts.append(vecs)
                offsets.append(offsets[-1] + len(vecs))
        flat = np.concatenate(parts).reshape(-1) if parts else np.zeros(0, np.float32)
        inner = pa.FixedSizeListArray.from_arrays(pa.array(flat, type=pa.float32()), self.dim)
        return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), inner)

    def _ensure_unit_columns(self) -> None:
        """Add the unit and metadata columns (all null) to a table created before they existed."""
        have = set(self._table.schema.names)
        new = [f for f in _unit_fields(self.dim) + _meta_fields() if f.name not in have]
        if new:
            self._table.add_columns(pa.schema(new))

    def upsert(self, updates: Sequence[DocumentUpdate]) -> None:
        """Replace the given documents (all of them, in one commit).

        Rows of these documents that are not in the new set are deleted in the same commit
        (``merge_insert ... when_not_matched_by_source_delete``), so readers see either the old
        or the new version of every document, never a mix. A batch of documents none of which
        has rows yet (a first ingest) is appended instead (``Table.add``, also one commit): the
        merge joins the batch against every row of the table, which grew with the table
        (0.15 s per batch of 256 at 100k rows, most of a large ingest). Which documents have
        rows is known from :meth:`_stored_doc_ids`.
        """
        if not updates:
            return
        self._writable()
        data = self._rows(updates)
        if self._table is None:  # another process (this one waited for its lock) may have created it
            self._table = self._open_existing(TABLE)
        if self._table is not None:
            self._ensure_unit_columns()
        batch_ids = {u.document.doc_id for u in updates}
        if self._table is None:
            self._table = self._db.create_table(TABLE, data=data, schema=_schema(self.dim))
            stored: set[str] = set()
            self._changes = None  # a new table: no earlier postings to update
        else:
            stored = self._stored_doc_ids()
            before = self._table.version
            if stored.isdisjoint(batch_ids):
                self._table.add(data)
            else:
                ids = ", ".join(_q(u.document.doc_id) for u in updates)
                (
                    self._table.merge_insert("chunk_id")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .when_not_matched_by_source_delete(f"doc_id IN ({ids})")
                    .execute(data)
                )
            self._note_changes(before, self._table.version, batch_ids)
        stored |= batch_ids  # in place: a copy per batch made a large ingest quadratic
        stored -= {u.document.doc_id for u in updates if not len(u.chunks)}
        self._doc_ids = (self._table.version, stored)
        self._fts_dirty = True

    def _stored_doc_ids(self) -> set[str]:
        """Ids of the documents with rows in the table's latest version.

        Kept with the version it describes and updated by :meth:`upsert` after its own commit,
        so a run of upserts scans the ``doc_id`` column once; any other commit (delete,
        compaction, another process) changes the version and the next call scans again. Like the
        merge it replaces, this relies on one writer at a time (the ingest lock).
        """
        import pyarrow.compute as pc

        version = self._table.version
        if self._doc_ids is None or self._doc_ids[0] != version:
            ids = pc.unique(self._scan(["doc_id"]).column("doc_id"))
            self._doc_ids = (version, set(ids.to_pylist()))
        return self._doc_ids[1]

    def delete(self, doc_ids: Sequence[str]) -> int:
        """Delete documents (one commit); returns how many chunks went."""
        if self._table is None or not doc_ids:
            return 0
        self._writable()
        pred = f"doc_id IN ({', '.join(_q(d) for d in doc_ids)})"
        n = self._table.count_rows(pred)
        if n:
            before = self._table.version
            self._table.delete(pred)
            self._note_changes(before, self._table.version, set(doc_ids))
            self._fts_dirty = True
        return n

    def _note_changes(self, before: int, after: int, doc_ids: set[str]) -> None:
        """Record that this store's commit turned version ``before`` into ``after`` and touched
        (wrote or deleted) the documents ``doc_ids``.

        Consecutive commits accumulate: the log says "version ``after`` = version ``base`` with
        these documents changed", which lets :meth:`postings` update ``base``'s postings instead
        of scanning the table (:meth:`Postings.update`). A commit that does not start from the
        log's last version (another process committed in between, or a commit of ours failed
        half-way) starts a new log at ``before``; a commit that made more than one version
        (``after != before + 1``) leaves no log, so only a full build follows. Like
        :meth:`_stored_doc_ids` this relies on one writer at a time (the ingest lock).
        """
        if after != before + 1:
            self._changes = None
        elif self._changes is not None and self._changes[1] == before:
            self._changes[1] = after
            self._changes[2] |= set(doc_ids)
        else:
            self._changes = [before, after, set(doc_ids)]

    def refresh_indexes(self) -> None:
        """Compact the table and bring every index up to date with the rows (see module docstring).

        When rows were written by this store, or rows are not yet in the FTS index (e.g. left by
        a killed process), runs ``Table.optimize`` (compaction, incremental index update, cleanup
        of versions older than :data:`CLEANUP_AFTER`); then creates the FTS index and the
        :data:`SCALAR_INDEXES` that are missing (a new table, a table built by an older citewise,
        or a process killed before it built them).
        """
        if self._table is None:
            return
        self._writable()
        if self._changes is not None and self._changes[1] != self._table.version:
            self._changes = None  # someone else committed since our last write: rows unknown
        have = {tuple(i.columns) for i in self._table.list_indices()}
        if not have or self._fts_dirty or self.unindexed_rows() > 0:
            self._table.optimize(cleanup_older_than=CLEANUP_AFTER)
        if ("lexical",) not in have:
            from lancedb.index import FTS

            self._table.create_index("lexical", config=FTS(**_FTS_OPTIONS), replace=True)
        names = set(self._table.schema.names)
        for column, kind in SCALAR_INDEXES.items():
            if (column,) not in have and column in names:
                self._table.create_index(column, config=_scalar_config(kind), replace=True)
        self._refresh_ann()
        self._fts_dirty = False
        if self._changes is not None:  # compaction and index commits (ours) change no row's content
            self._changes[1] = self._table.version
        self._refresh_postings()

    def _refresh_postings(self) -> None:
        """Save the BM25 postings of the version the refresh ended on; drop other versions'."""
        from citewise.store.postings import Postings

        p = self.postings()
        if p is not None:
            Postings.prune(self.bm25_root, keep=p.version)

    def _refresh_ann(self) -> None:
        """Create the ANN index on ``vector`` from ``ann_min_rows`` rows; retrain it on growth.

        The index is named ``vector_ivf_p<partitions>``. Rows added after it was trained go into
        its existing partitions (``optimize``), so once the table has grown to
        :data:`ANN_RETRAIN_GROWTH` times the rows it was trained on (sqrt(rows) partitions at
        least twice the trained count) a new index is trained and the old one dropped afterwards.
        Each step is its own commit after the data commits: a process killed before the first
        leaves the table without an index (searched exactly; the next refresh builds it), one
        killed between them leaves two valid indexes (the next refresh drops the stale one).
        """
        rows = self._table.count_rows()
        vector = [i.name for i in self._table.list_indices() if i.columns == ["vector"]]
        want = max(1, round(rows ** 0.5))
        trained = [int(n.rsplit("_p", 1)[1]) for n in vector if n.startswith("vector_ivf_p") and n.rsplit("_p", 1)[1].isdigit()]
        current = max(trained, default=0)
        name = f"vector_ivf_p{current}"
        if rows >= self.ann_min_rows and (not current or want * want >= ANN_RETRAIN_GROWTH * current * current):
            name = f"vector_ivf_p{want}"
            self._table.create_index("vector", config=_ann_config(rows), name=name, replace=True)
        for stale in vector:
            if stale != name:
                self._table.drop_index(stale)

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
            return self._table.count_rows()
        stats = self._table.index_stats(fts[0].name)
        return int(stats.num_unindexed_rows) if stats is not None else self._table.count_rows()

    # -- ingest log ---------------------------------------------------------------------------
    def record_run(self, run: IngestRun) -> None:
        """Append one completed ingest run to the ``ingest_runs`` table (one commit)."""
        self._writable()
        data = pa.Table.from_pylist([dataclasses.asdict(run)], schema=_RUN_SCHEMA)
        if self._runs is None:
            self._runs = self._open_existing(RUNS_TABLE)
        if self._runs is None:
            self._runs = self._db.create_table(RUNS_TABLE, data=data, schema=_RUN_SCHEMA)
        else:
            self._runs.add(data)

    def runs(self) -> list[IngestRun]:
        """The ingest log, oldest first (by finish time)."""
        if self._runs is None:
            self._runs = self._open_existing(RUNS_TABLE)
        if self._runs is None:
            return []
        rows = self._scan_table(self._runs, None).to_pylist()
        names = [f.name for f in dataclasses.fields(IngestRun)]
        out = [IngestRun(**{k: r[k] for k in names}) for r in rows]
        out.sort(key=lambda r: (r.finished_at, r.started_at, r.root))
        return out

    # -- reads --------------------------------------------------------------------------------
    def _reader(self):
        """The chunk table to read, or None when there is none (yet).

        A table created by another process after this store opened is opened here; unlike
        :meth:`_open_or_discard` nothing is ever removed (the creator may still be writing).
        """
        if self._table is None:
            self._table = self._open_existing(TABLE)
        return self._table

    def _open_existing(self, name: str):
        """Open table ``name`` if it exists and has a committed version, else None."""
        if name not in self._table_names():
            return None
        try:
            return self._db.open_table(name)
        except (ValueError, OSError, RuntimeError):
            return None

    def _run(self, coro):
        """Run ``coro`` on LanceDB's event-loop thread (one round trip) and return its result
        (this process's own loop thread while lancedb is not imported:
        :func:`citewise.store.lance_native.run`)."""
        from citewise.store.lance_native import run

        return run(coro)

    def _query(self, make, table=None) -> pa.Table:
        """Rows of the query ``make(async_query)`` on the chunk table (or ``table``), as Arrow.

        ``make`` receives ``AsyncTable.query()`` and returns the finished query; building and
        executing it take one trip to LanceDB's loop.
        """
        at = (table or self._table)._table  # the AsyncTable behind the synchronous handle

        async def go():
            return await make(at.query()).to_arrow()

        return self._run(go())

    def column_names(self) -> frozenset[str]:
        """Column names of the chunk table (empty without one); cached per table version."""
        t = self._reader()
        if t is None:
            return frozenset()
        at = t._table

        async def go():
            version = await at.version()
            if version != self._names[0]:
                self._names = (version, frozenset((await at.schema()).names))
            return self._names[1]

        return self._run(go())

    def _where(self, filters: Filters | None) -> str:
        """:func:`filter_sql` of ``filters``, after checking that a table asked for metadata
        conditions has the metadata columns.

        Raises:
            CitewiseError: metadata conditions on a table written before metadata was stored.
        """
        if filters is not None and filters.metadata and "meta_terms" not in self.column_names():
            raise CitewiseError(f"{self.path}: this index was built before document metadata was stored; "
                                "ingest the documents again to filter on metadata")
        return filter_sql(filters)

    def _scored(self, rows: list[dict], score_of) -> list[ScoredChunk]:
        out = [ScoredChunk(r["chunk_id"], r["doc_id"], r["title"], float(score_of(r))) for r in rows]
        out.sort(key=lambda h: (-h.score, h.chunk_id))
        return out

    def lexical_search(self, terms: Sequence[str], k: int, filters: Filters | None = None) -> list[ScoredChunk]:
        """BM25 over already-analyzed terms (OR semantics), filters applied inside the search.

        Scored from the postings of the table's current version (:mod:`citewise.store.postings`:
        loaded from ``_bm25/v<version>/``, or built from the table and saved when absent); the
        filter's SQL predicate (:func:`filter_sql`) is evaluated by LanceDB once per table
        version and filter and kept as a row mask. Results equal LanceDB FTS's BM25 (same
        formula and tokens), best first, ties by chunk id.
        """
        if not terms or k <= 0 or self._reader() is None:
            return []
        where = self._where(filters)
        if where == "false":
            return []
        postings = self.postings()
        if postings is None:
            return []
        mask = self._mask(postings, where, filters) if where else None
        if mask is None and where:
            return self.lexical_search(terms, k, filters)  # a commit landed meanwhile: redo on the new version
        return [ScoredChunk(c, d, t, s) for c, d, t, s in postings.top(terms, k, mask)]

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        """The analyzed ``terms`` that occur in some chunk of the current version (any
        permission: callers check what a principal may see with :meth:`lexical_search`). One
        ``searchsorted`` over the BM25 postings' sorted vocabulary."""
        postings = self.postings() if terms and self._reader() is not None else None
        if postings is None or not len(postings.vocab):
            return set()
        size = postings.vocab.dtype.itemsize  # a longer term is in no vocabulary entry (no truncation)
        terms = [t for t in terms if 0 < len(t.encode("utf-8")) <= size]
        if not terms:
            return set()
        keys = np.array([t.encode("utf-8") for t in terms], dtype=postings.vocab.dtype)
        at = np.minimum(np.searchsorted(postings.vocab, keys), len(postings.vocab) - 1)
        return {t for t, i, key in zip(terms, at, keys) if postings.vocab[i] == key}

    def fts_search(self, terms: Sequence[str], k: int, filters: Filters | None = None) -> list[ScoredChunk]:
        """BM25 by LanceDB's own FTS index (the path :meth:`lexical_search` replaced; kept as the
        reference its scores are tested against and as the peer in bench/bm25_speed.py)."""
        if not terms or k <= 0 or self._reader() is None:
            return []
        self._writable()  # LanceDB's FTS query builder lives in the lancedb package
        from lancedb.query import MatchQuery

        where = self._where(filters)
        match = MatchQuery(" ".join(terms), "lexical")

        def make(q):
            q = q.nearest_to_text(match)
            if where:
                q = q.where(where)  # a prefilter: applied inside the search
            return q.select(["chunk_id", "doc_id", "title", "_score"]).limit(k + TIE_MARGIN)

        rows = self._query(make).to_pylist()
        return self._scored(rows, lambda r: r["_score"])[:k]

    def postings(self):
        """The BM25 postings of the chunk table's current version (None without a table).

        One trip to LanceDB's loop to read the version; on a new version the postings are
        loaded from ``_bm25/v<version>/`` or built from a scan of the table and saved there.
        """
        if self._reader() is None:
            return None
        at = self._table._table
        probe = self._version_probe()
        if self._postings is not None and probe is not None and probe == self._probe:
            return self._postings
        with self._postings_lock:
            return self._load_postings(at, probe)

    def _load_postings(self, at, probe):
        """:meth:`postings` past its fast path (under ``_postings_lock``)."""
        from citewise.store.postings import Postings

        for _ in range(5):
            version = self._run(at.version())
            self._probe = probe if probe is not None and probe[1] >= 0 else None
            if self._postings is not None and self._postings.version == version:
                return self._postings
            p = Postings.load(self.bm25_root, version)
            if p is None:
                p = self._updated_postings(version) or self._build_postings()
                if p is None:
                    continue  # the table moved on during the scan: try the newer version
                p.save(self.bm25_root)
            if self._changes is not None and self._changes[1] == p.version:
                self._changes = None  # the next write starts a log from these postings
            self._postings = p
            return p
        raise CitewiseError(f"{self.path}: the index changed during 5 consecutive BM25 index builds; retry")

    @property
    def concurrent_legs(self) -> bool:
        """Whether a hybrid query may run its dense leg in a second thread beside BM25
        (:class:`citewise.retrieval.retrievers.HybridRetriever`): once postings of at least
        ``ann_min_rows`` rows are loaded, dense search is LanceDB's scan, which runs in Rust
        without the GIL, while BM25 scores in NumPy. Below that both legs are NumPy in this
        process (sharing the postings' filter masks), and before the first search nothing is
        loaded, so they run one after the other. The two legs share only :meth:`postings`,
        whose reload after another process's commit takes a lock."""
        p = self._postings
        return p is not None and p.n >= self.ann_min_rows

    def _version_probe(self):
        """A cheap stand-in for "has the table committed since the last look?" (no LanceDB call).

        Every commit adds a manifest to ``chunks.lance/_versions/``, which sets the folder's
        mtime. Timestamps are coarse (one clock tick, a few ms), so two commits within a tick can
        leave one mtime; the probe is therefore trusted only when it was taken at least
        :data:`PROBE_MARGIN_NS` after the folder last changed: any later commit then stamps a
        strictly later mtime. Returns ``(mtime_ns, ok)`` with ``ok`` = -1 when the probe must
        not be trusted (then the version is read from LanceDB), or None when the folder cannot
        be read.
        """
        import os
        import time

        now = time.time_ns()
        versions = self.__dict__.get("_versions_dir")
        if versions is None:
            versions = self._versions_dir = str(self.path / f"{TABLE}.lance" / "_versions")
        try:
            mtime = os.stat(versions).st_mtime_ns
        except OSError:
            return None
        return (mtime, 0 if now - mtime >= PROBE_MARGIN_NS else -1)

    def _updated_postings(self, version: int):
        """Postings of ``version`` derived from an older version's (:meth:`Postings.update`), or
        None when that is not possible: no change log ending at ``version`` (another process
        wrote, or this store never saw the older postings), more than
        :data:`INCREMENTAL_MAX_DOCS` changed documents, the older postings are not at hand (in
        memory or saved) or lack term frequencies, or a commit landed during the reads.

        Reads the new version's ids (``chunk_id``, ``doc_id``, ``title``, ``_rowid``; vectors
        below ``ann_min_rows``) and the ``lexical`` text of the changed documents only, in one
        trip, both at one version: at 1M chunks the full build's scan of ``lexical`` was 1.5 GB.
        """
        from citewise.store.postings import Postings

        changes = self._changes
        if changes is None or changes[1] != version or len(changes[2]) > INCREMENTAL_MAX_DOCS:
            return None
        base, _, docs = changes
        prev = self._postings if self._postings is not None and self._postings.version == base else None
        if prev is None:
            prev = Postings.load(self.bm25_root, base)
        if prev is None or prev.tf is None:
            return None
        at = self._table._table
        where = f"doc_id IN ({', '.join(_q(d) for d in sorted(docs))})" if docs else "false"

        async def go():
            v0 = await at.version()
            rows = await at.count_rows()
            cols = ["chunk_id", "doc_id", "title"] + (["vector"] if rows < self.ann_min_rows else [])
            ids = await at.query().select(cols).with_row_id().limit(max(rows, 1)).to_arrow()
            fresh = await at.query().where(where).select(["lexical"]).with_row_id().limit(max(rows, 1)).to_arrow()
            return v0, await at.version(), ids, fresh

        v0, v1, ids, fresh = self._run(go())
        if not v0 == v1 == version:
            return None
        return Postings.update(prev, version, ids, fresh, docs)

    def _build_postings(self):
        """Postings from a scan of the current version, or None when a commit landed during it."""
        from citewise.store.postings import Postings

        at = self._table._table

        async def go():
            v0 = await at.version()
            rows = await at.count_rows()
            cols = ["chunk_id", "doc_id", "title", "lexical"] + (["vector"] if rows < self.ann_min_rows else [])
            tbl = await at.query().select(cols).with_row_id().limit(max(rows, 1)).to_arrow()
            return v0, await at.version(), tbl

        v0, v1, tbl = self._run(go())
        return Postings.build(v0, tbl) if v0 == v1 else None

    def _mask(self, postings, where: str, filters: Filters | None = None):
        """Row mask of ``where`` (the SQL of ``filters``) on ``postings``' version (cached), or
        None if the table moved on. A groups-only filter is computed in NumPy from the version's
        permission columns (:class:`citewise.store.row_filters.RowFilters`, read once per
        version); any other by LanceDB."""
        from citewise.store.postings import MASK_CACHE
        from citewise.store.row_filters import RowFilters

        mask = postings.masks.get(where)
        if mask is not None:
            return mask
        if RowFilters.expressible(filters):
            rf = self._row_filters(postings)
            if rf is None:
                return None
            mask = rf.mask(filters)
            if len(postings.masks) >= MASK_CACHE:
                postings.masks.pop(next(iter(postings.masks)))
            postings.masks[where] = mask
            return mask
        at = self._table._table

        async def go():
            v0 = await at.version()
            rows = await at.count_rows()
            tbl = await at.query().where(where).select([]).with_row_id().limit(max(rows, 1)).to_arrow()
            return v0, await at.version(), tbl

        v0, v1, tbl = self._run(go())
        if not (v0 == v1 == postings.version):
            return None
        mask = postings.mask_of(tbl.column("_rowid").to_numpy())
        if len(postings.masks) >= MASK_CACHE:
            postings.masks.pop(next(iter(postings.masks)))
        postings.masks[where] = mask
        return mask

    def _row_filters(self, postings):
        """The :class:`~citewise.store.row_filters.RowFilters` of ``postings``' version (one scan
        of ``groups`` and ``current``, kept on the postings), or None if the table moved on."""
        from citewise.store.row_filters import RowFilters

        rf = getattr(postings, "row_filters", None)
        if rf is not None:
            return rf
        at = self._table._table

        async def go():
            v0 = await at.version()
            rows = await at.count_rows()
            tbl = await at.query().select(["groups", "current"]).with_row_id().limit(max(rows, 1)).to_arrow()
            return v0, await at.version(), tbl

        v0, v1, tbl = self._run(go())
        if not (v0 == v1 == postings.version):
            return None
        rf = RowFilters(postings.n, postings.positions(tbl.column("_rowid").to_numpy().astype(np.uint64)),
                        tbl.column("groups"), tbl.column("current").combine_chunks())
        postings.row_filters = rf
        return rf

    def vector_search(self, vector: np.ndarray, k: int, filters: Filters | None = None) -> list[ScoredChunk]:
        """Cosine search; score = cosine similarity = 1 - cosine distance, best first.

        Args:
            vector: query vector, shape ``(dim,)`` (cast to float32).
            k: hits wanted; fewer only when fewer rows are visible under ``filters``.
            filters: permission/version filter, applied inside the search (prefilter).

        Below ``ann_min_rows`` rows the exact search runs in NumPy over the vectors kept with the
        BM25 postings of the table's version (:meth:`postings`; LanceDB's brute force cost ~5 ms
        of fixed overhead per query at 5k rows, issue 12), with the same filter mask. Otherwise:
        exact (every visible vector) unless the table has the ANN index (built by
        :meth:`refresh_indexes` from ``ann_min_rows`` rows), has at least ``ann_min_rows`` rows
        and the filter leaves at least ``ann_exact_below`` rows visible; then the
        IVF index is probed (``ann_nprobes`` partitions at least, by default
        :func:`ann_nprobes_for` the index's partitions; more until k visible hits are found).
        LanceDB 0.40 chooses "more" itself, and above a limit of 100 (hybrid's depth 100 plus
        the tie margin) it probes in effect every partition at 1M chunks (its top 100 equalled
        the exact one; ~2.3x the time of 200 probes). A capped query probes exactly the
        configured partitions whatever ``k`` (more only when they hold fewer than k + the tie
        margin visible hits): by default when there is no filter or the filter leaves at least
        :data:`ANN_CAP_MIN_VISIBLE_SHARE` of the rows visible (up to a limit of 100 LanceDB
        probes no more than that anyway), always with ``ann_cap_probes=True``, never with
        False. Capped at 1M: hybrid p95 120 -> 76 ms public; the depth-116 leg's recall@100 vs
        exact 1.000 / 0.990 on MiniLM-derived vectors (0.931 top-10 overlap on hashing-embedder
        vectors, which have no cluster structure for IVF).
        Rows committed after the index was last updated are searched flat as well, so
        nothing committed is missed. The visible-row count is cached per table version and
        filter. ``last_vector_path`` records the path taken ("ann" or "exact").
        """
        if k <= 0 or self._reader() is None:
            return []
        where = self._where(filters)
        vec = np.asarray(vector, dtype=np.float32)
        if where == "false":
            return []
        postings = self.postings()
        if postings is not None and postings.vectors is not None and postings.n < self.ann_min_rows:
            mask = self._mask(postings, where, filters) if where else None
            if mask is not None or not where:
                self.last_vector_path = "exact"
                return [ScoredChunk(c, d, t, s) for c, d, t, s in postings.nearest(vec, k, mask)]
        at = self._table._table
        cols = ["chunk_id", "doc_id", "title", "_distance"]

        async def go():
            _, rows, use_ann, visible, partitions = await self._ann_info(at)
            use_ann = use_ann and rows >= self.ann_min_rows
            if use_ann and where:
                if where not in visible:
                    visible[where] = await at.count_rows(where)
                use_ann = visible[where] >= self.ann_exact_below
            def query(max_probes: int | None):
                q = at.query().nearest_to(vec).column("vector").distance_type("cosine")
                if max_probes is not None:
                    # open the maximum, set the minimum, then cap: each call checks min <= max
                    q = q.maximum_nprobes(0).minimum_nprobes(nprobes)
                    if max_probes:
                        q = q.maximum_nprobes(max_probes)
                else:
                    q = q.bypass_vector_index()
                if where:
                    q = q.where(where)  # a prefilter: applied inside the search
                return q.select(cols).limit(k + TIE_MARGIN).to_arrow()

            if not use_ann:
                return False, await query(None)
            nprobes = self.ann_nprobes if self.ann_nprobes is not None else ann_nprobes_for(partitions)
            self.last_nprobes = nprobes
            cap = self.ann_cap_probes
            if cap is None:
                cap = not where or visible[where] >= ANN_CAP_MIN_VISIBLE_SHARE * rows
            self.last_capped = cap
            if not cap:
                return True, await query(0)
            # Exactly nprobes partitions first. With an open maximum (0), LanceDB 0.40 probes
            # far more than the minimum once the limit exceeds 100 (hybrid's depth 100 + the tie
            # margin): at 1M chunks its top 100 equalled the exact one (all partitions, p50 192
            # vs 77 ms capped at 200 of 1,000; docs/scaling.md). Up to limit 100 the open maximum
            # gave the same rows as this capped pass.
            tbl = await query(nprobes)
            if tbl.num_rows < k + TIE_MARGIN:
                tbl = await query(0)  # too few visible hits in those partitions: probe on (prefilter)
            return True, tbl

        use_ann, tbl = self._run(go())
        self.last_vector_path = "ann" if use_ann else "exact"
        return self._scored(tbl.to_pylist(), lambda r: 1.0 - r["_distance"])[:k]

    async def _ann_info(self, at) -> tuple[int, int, bool, dict[str, int], int]:
        """``(version, rows, has ANN index, {where: visible rows}, IVF partitions)`` of the open
        table ``at`` (LanceDB's async table), cached per table version."""
        version = await at.version()
        if version != self._ann_state[0]:
            rows = await at.count_rows()
            vec_idx = [i.name for i in await at.list_indices() if i.columns == ["vector"]]
            self._ann_state = (version, rows, bool(vec_idx), {}, _ivf_partitions(vec_idx))
        return self._ann_state

    def warm(self) -> dict:
        """Load what the first queries would otherwise load: the BM25 postings of the current
        version and, when dense search uses the ANN index, every IVF partition (one query
        probing all of them, limit 1), into LanceDB's index cache. Without it, each of the
        first queries of a process at 1M chunks reads the ~200 partitions it probes that no
        earlier query did (150-600 ms each for the first ~10 hybrid queries, vs ~60 ms warm);
        with it, 3.6 s once (1M chunks, 1,000 partitions). ``citewise serve`` calls it before
        accepting requests.

        Returns:
            ``{"postings_s": float, "ann_s": float, "partitions": int}`` (seconds; 0 partitions
            when dense search does not use the ANN index).
        """
        t0 = time.perf_counter()
        if self._reader() is None:
            return {"postings_s": 0.0, "ann_s": 0.0, "partitions": 0}
        self.postings()
        t1 = time.perf_counter()
        at = self._table._table

        async def go():
            _, rows, use_ann, _, partitions = await self._ann_info(at)
            if not (use_ann and rows >= self.ann_min_rows and partitions):
                return 0
            probe = np.zeros(self.dim, dtype=np.float32)
            probe[0] = 1.0
            await (at.query().nearest_to(probe).column("vector").distance_type("cosine")
                   .maximum_nprobes(0).minimum_nprobes(partitions).select(["chunk_id", "_distance"])
                   .limit(1).to_arrow())
            return partitions

        partitions = self._run(go())
        return {"postings_s": t1 - t0, "ann_s": time.perf_counter() - t1, "partitions": partitions}

    def titled_with(self, identifier: str, filters: Filters | None = None) -> list[ScoredChunk]:
        """Chunks of documents whose title names ``identifier`` (first chunk of each doc first).

        The identifier is folded as titles are (case, Unicode dashes: ``E\u20111004`` = ``e-1004``).
        """
        if self._reader() is None:
            return []
        where = f"array_has(title_ids, {_q(fold(identifier))})"
        extra = self._where(filters)
        if extra:
            where = f"{where} AND {extra}"
        rows = self._query(lambda q: q.where(where).select(["chunk_id", "doc_id", "title", "prev_id"]).limit(1000)).to_pylist()
        rows.sort(key=lambda r: (r["doc_id"], r["prev_id"] is not None, r["chunk_id"]))
        return [ScoredChunk(r["chunk_id"], r["doc_id"], r["title"], 1.0) for r in rows]

    def has_group(self, group: str) -> bool:
        """Whether any chunk names ``group`` among its groups (the label-list index answers it)."""
        if self._reader() is None:
            return False
        tbl = self._query(lambda q: q.where(f"array_has(groups, {_q(group)})").select(["chunk_id"]).limit(1))
        return tbl.num_rows > 0

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, StoredChunk]:
        """Chunks by id with their document metadata."""
        if not chunk_ids or self._reader() is None:
            return {}
        ids = ", ".join(_q(c) for c in set(chunk_ids))
        cols = _META_COLS + (["metadata"] if "metadata" in self.column_names() else [])
        rows = self._query(lambda q: q.where(f"chunk_id IN ({ids})").select(cols).limit(len(chunk_ids) + 1)).to_pylist()
        out = {}
        for r in rows:
            out[r["chunk_id"]] = StoredChunk(
                chunk_id=r["chunk_id"], doc_id=r["doc_id"], title=r["title"], source=r["source"],
                version=r["version"], updated=r["updated"], groups=tuple(r["groups"] or ()),
                heading_path=tuple(r["heading_path"] or ()), text=r["text"], start=r["start"],
                end=r["end"], token_count=r["token_count"], prev_id=r["prev_id"],
                next_id=r["next_id"], parent_id=r["parent_id"], effective=r["effective"],
                page_start=r["page_start"] or 0, page_end=r["page_end"] or 0,
                metadata=json.loads(r["metadata"]) if r.get("metadata") else {},
            )
        return out

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by chunk id (float32, shape (dim,))."""
        if not chunk_ids or self._reader() is None:
            return {}
        ids = ", ".join(_q(c) for c in set(chunk_ids))
        tbl = self._query(lambda q: q.where(f"chunk_id IN ({ids})").select(["chunk_id", "vector"]).limit(len(chunk_ids) + 1))
        vecs = tbl.column("vector").combine_chunks().flatten().to_numpy().reshape(-1, self.dim)
        return dict(zip(tbl.column("chunk_id").to_pylist(), vecs.astype(np.float32)))

    def get_units(self, chunk_ids: Sequence[str]) -> dict[str, UnitVectors]:
        """Stored answer-unit vectors by chunk id (one query; rows without units are absent)."""
        if not chunk_ids or "unit_vectors" not in self.column_names():
            return {}
        ids = ", ".join(_q(c) for c in set(chunk_ids))
        tbl = self._query(lambda q: q.where(f"chunk_id IN ({ids}) AND units_version <> ''")
                          .select(["chunk_id", "units_version", "units_key", "unit_spans", "unit_vectors"])
                          .limit(len(chunk_ids) + 1))
        if tbl.num_rows == 0:
            return {}
        col = tbl.column("unit_vectors").combine_chunks()
        offsets = col.offsets.to_numpy()
        # flatten() honours a slice offset (values would not), so offsets are rebased to 0
        flat = col.flatten().flatten().to_numpy(zero_copy_only=False).astype(np.float32).reshape(-1, self.dim)
        out = {}
        for i, (cid, ver, key, spans) in enumerate(zip(tbl.column("chunk_id").to_pylist(),
                                                        tbl.column("units_version").to_pylist(),
                                                        tbl.column("units_key").to_pylist(),
                                                        tbl.column("unit_spans").to_pylist())):
            spans = spans or []
            out[cid] = UnitVectors(ver, key or "", tuple(zip(spans[0::2], spans[1::2])),
                                   flat[offsets[i] - offsets[0]:offsets[i + 1] - offsets[0]])
        return out

    def documents(self, doc_ids: Iterable[str] | None = None) -> dict[str, DocumentEntry]:
        """Every stored document by id (only those of ``doc_ids`` when given), from its chunk rows.

        A document's fields come from its first row in scan order, ``chunks`` counts its rows,
        and ``units_version`` is its rows' one units version ("" when they differ). Grouped in
        Arrow/NumPy, so only one row per document becomes Python objects: materialising every
        row as a dict (``to_pylist``) cost 19 s and ~2 GB at 1M chunks (issue 12). With
        ``doc_ids`` (up to :data:`DOC_FILTER_MAX` of them) only those documents' rows are read,
        through the ``doc_id`` index: an ingest needs no more than the documents it brings.
        """
        if self._reader() is None:
            return {}
        with_units = "units_version" in self.column_names()
        cols = ["doc_id", "title", "title_ids", "source", "content_hash", "version", "updated", "indexed_at",
                "effective", "groups", "source_changed_at"] + (["units_version"] if with_units else [])
        if doc_ids is None:
            tbl = self._scan(cols)
        else:
            wanted = sorted(set(doc_ids))
            if not wanted:
                return {}
            if len(wanted) <= DOC_FILTER_MAX:
                where = f"doc_id IN ({', '.join(_q(d) for d in wanted)})"
                tbl = self._scan(cols, where)
            else:
                import pyarrow.compute as pc

                tbl = self._scan(cols)
                tbl = tbl.filter(pc.is_in(tbl.column("doc_id"), value_set=pa.array(wanted, pa.string())))
        return _document_entries(tbl, with_units)

    def chunk_versions(self) -> dict[str, set[tuple[str, str, str]]]:
        """Per document, the set of (chunk_id, content_hash, version) of its rows.

        For consistency checks: a document is whole when all its rows carry one content hash.
        """
        if self._reader() is None:
            return {}
        out: dict[str, set[tuple[str, str, str]]] = {}
        for r in self._scan(["doc_id", "chunk_id", "content_hash", "version"]).to_pylist():
            out.setdefault(r["doc_id"], set()).add((r["chunk_id"], r["content_hash"], r["version"]))
        return out

    def _scan(self, columns: list[str], where: str | None = None) -> pa.Table:
        """All rows of the chunk table (those matching the SQL predicate ``where``), only
        ``columns`` (no vectors read)."""
        return self._scan_table(self._table, columns, where)

    def _scan_table(self, table, columns: list[str] | None, where: str | None = None) -> pa.Table:
        """All rows of ``table`` (``columns`` only, or all; those matching ``where``), in one trip
        to LanceDB's loop.

        One query reads one table version, but its row limit comes from a count that may have
        read an older one (a commit in between): a result that fills the limit is read again
        with the new count, so a concurrent ingest never truncates the scan (half a document)."""
        at = table._table

        async def go():
            while True:
                n = max(await at.count_rows(), 1)
                q = at.query()
                if where is not None:
                    q = q.where(where)
                if columns is not None:
                    q = q.select(columns)
                rows = await q.limit(n + 1).to_arrow()
                if rows.num_rows <= n:
                    return rows

        return self._run(go())

    def stats(self) -> dict:
        """Document and chunk counts, and the table version."""
        if self._reader() is None:
            return {"documents": 0, "chunks": 0, "backend": "lancedb", "version": 0}
        tbl = self._scan(["doc_id"])
        return {
            "documents": len(tbl.column("doc_id").unique()),
            "chunks": tbl.num_rows,
            "backend": "lancedb",
            "version": self._table.version,
        }


def _document_entries(tbl: pa.Table, with_units: bool) -> dict[str, DocumentEntry]:
    """:class:`DocumentEntry` per document of the chunk rows ``tbl`` (see
    :meth:`LanceStore.documents`), sorted by id; one Python row per document."""
    import pyarrow.compute as pc

    if tbl.num_rows == 0:
        return {}
    enc = pc.dictionary_encode(tbl.column("doc_id").combine_chunks())
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    ndocs = len(enc.dictionary)
    _, first = np.unique(codes, return_index=True)  # each document's first row (codes 0..ndocs-1)
    counts = np.bincount(codes, minlength=ndocs)
    if with_units:
        units = pc.dictionary_encode(tbl.column("units_version").combine_chunks().fill_null(""))
        pairs = np.unique(codes * len(units.dictionary) + units.indices.to_numpy(zero_copy_only=False).astype(np.int64))
        distinct = np.bincount(pairs // len(units.dictionary), minlength=ndocs)
    head = tbl.take(pa.array(first))
    col = {c: head.column(c).to_pylist() for c in head.column_names}
    out = {}
    for i, d in enumerate(col["doc_id"]):
        unit_version = (col["units_version"][i] or "") if with_units and distinct[i] == 1 else ""
        out[d] = DocumentEntry(d, col["title"][i], col["source"][i], col["content_hash"][i], col["version"][i],
                               col["updated"][i], int(counts[i]), col["indexed_at"][i], col["effective"][i] or "",
                               tuple(col["groups"][i] or ()), col["source_changed_at"][i] or "", unit_version,
                               tuple(col["title_ids"][i] or ()))
    return dict(sorted(out.items()))


def write_json(path: Path, data: dict) -> None:
    """Write JSON atomically (temp file + rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True))
    tmp.replace(path)
