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
missing: the FTS index, and, from :data:`SCALAR_INDEX_MIN_ROWS` rows, the scalar indexes of
:data:`SCALAR_INDEXES` that the permission, version and id predicates use (a label-list index on
``groups`` and ``title_ids``, bitmaps on ``current`` and ``version``, b-trees on ``chunk_id`` and
``doc_id``). Without them every filtered
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

from citewise.store.lance.schema import (  # noqa: F401
    _ann_config,
    _document_entries,
    _FTS_OPTIONS,
    _ivf_partitions,
    _META_COLS,
    _meta_fields,
    _q,
    _RUN_SCHEMA,
    _scalar_config,
    _schema,
    _unit_fields,
    ANN_EXACT_BELOW_VISIBLE,
    ANN_MIN_ROWS,
    ANN_NPROBES,
    ann_nprobes_for,
    ANN_PROBE_SHARE,
    ANN_RETRAIN_GROWTH,
    BM25_FOLDER,
    EXACT_MAX_CELLS,
    exact_max_rows,
    filter_sql,
    import_lancedb,
    INCREMENTAL_MAX_DOCS,
    page_range,
    PROBE_MARGIN_NS,
    RUNS_TABLE,
    SCALAR_INDEX_MIN_ROWS,
    SCALAR_INDEXES,
    TABLE,
    TIE_MARGIN,
    write_json,
)
from citewise.store.lance.writes import CLEANUP_AFTER  # noqa: F401
from citewise.store.lance.reads import DOC_FILTER_MAX  # noqa: F401
from citewise.store.lance.search import ANN_CAP_MIN_VISIBLE_SHARE  # noqa: F401
from citewise.store.lance.store import LanceStore  # noqa: F401

__all__ = [
    "_ann_config",
    "_document_entries",
    "_FTS_OPTIONS",
    "_ivf_partitions",
    "_META_COLS",
    "_meta_fields",
    "_q",
    "_RUN_SCHEMA",
    "_scalar_config",
    "_schema",
    "_unit_fields",
    "ANN_EXACT_BELOW_VISIBLE",
    "ANN_MIN_ROWS",
    "ANN_NPROBES",
    "ann_nprobes_for",
    "ANN_PROBE_SHARE",
    "ANN_RETRAIN_GROWTH",
    "BM25_FOLDER",
    "EXACT_MAX_CELLS",
    "exact_max_rows",
    "filter_sql",
    "import_lancedb",
    "INCREMENTAL_MAX_DOCS",
    "page_range",
    "PROBE_MARGIN_NS",
    "RUNS_TABLE",
    "SCALAR_INDEX_MIN_ROWS",
    "SCALAR_INDEXES",
    "TABLE",
    "TIE_MARGIN",
    "write_json",
    "CLEANUP_AFTER",
    "DOC_FILTER_MAX",
    "ANN_CAP_MIN_VISIBLE_SHARE",
    "LanceStore",
]
