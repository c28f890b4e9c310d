"""Writes of the LanceDB store: rows of a document update, upsert/delete commits, index
upkeep after writes and the ingest log (:class:`citewise.store.lance.LanceStore`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any, Iterator, Sequence

import numpy as np
import pyarrow as pa

from citewise import metadata as _metadata
from citewise.store.base import DocumentUpdate, IngestRun
from citewise.store.faults import guarded
from citewise.store.lance.host import _LanceHost
from citewise.text.analyzer import find_identifiers

from citewise.store.lance.schema import (
    ANN_RETRAIN_GROWTH,
    RUNS_TABLE,
    SCALAR_INDEXES,
    TABLE,
    _FTS_OPTIONS,
    _RUN_SCHEMA,
    _ann_config,
    _meta_fields,
    _q,
    _scalar_config,
    _schema,
    _unit_fields,
    page_range,
)


#: Versions older than this are removed by the compaction after each ingest (their data files
#: with them). Long enough that a reader still on an older version finishes its query; a
#: long-lived reader moves to the latest version before each query (:meth:`LanceStore.sync`).
CLEANUP_AFTER = dt.timedelta(minutes=10)
#: Rows per Arrow record batch streamed into a write (:meth:`_WriteMixin._row_batches`) ...
WRITE_BATCH_ROWS = 1024
#: ... and at most about this many bytes of chunk and lexical text per batch: one 50 MB document
#: built as one table held its ~9,500 rows' texts as Python lists and as Arrow arrays together
#: (bench/huge_line.py).
WRITE_BATCH_BYTES = 8_000_000


class _WriteMixin(_LanceHost):
    """Writes, index upkeep and the ingest log of :class:`~citewise.store.lance.LanceStore`."""

    def _row_batches(self, updates: Sequence[DocumentUpdate]) -> tuple[pa.RecordBatchReader, list[Exception]]:
        """``(reader, failed)``: the rows of ``updates`` (one per chunk, in order) as a stream of
        Arrow record batches of at most :data:`WRITE_BATCH_ROWS` rows and about
        :data:`WRITE_BATCH_BYTES` bytes of chunk and lexical text each, built as the write
        consumes them.

        A document's lexical texts are computed per batch (unless given), so a document of
        10,000 chunks never holds all its rows as Python lists and Arrow arrays at once.

        An exception raised while a batch is built reaches the writer wrapped by Arrow's C
        stream interface (a ``RuntimeError`` quoting a traceback); the original is kept in
        ``failed`` so that :meth:`upsert` raises it instead.

        Raises:
            ValueError: an update whose chunks, vectors or unit entries disagree in number, or a
                vector of another dimension than the store's (checked before the first batch, so
                nothing is written).
        """
        for u in updates:
            d = u.document
            if len(u.chunks) != len(u.vectors):
                raise ValueError(f"{d.doc_id}: {len(u.chunks)} chunks but {len(u.vectors)} vectors")
            if not len(u.vectors):
                bad = None
            elif isinstance(u.vectors, np.ndarray):  # the embedders' (n, dim) matrix: one check
                bad = None if u.vectors.ndim == 2 and u.vectors.shape[1] == self.dim else u.vectors.shape[1:]
            else:
                bad = next((np.shape(v) for v in u.vectors if np.shape(v) != (self.dim,)), None)
            if bad is not None:
                raise ValueError(f"{d.doc_id}: a chunk vector of shape {bad}, the index holds {self.dim}-d vectors")
            if u.units is not None and len(u.units) != len(u.chunks):
                raise ValueError(f"{d.doc_id}: {len(u.chunks)} chunks but {len(u.units)} unit entries")
            for uv in u.units or ():
                n = len(np.asarray(uv.vectors).reshape(-1, self.dim)) if uv is not None else 0
                if uv is not None and n != len(uv.spans):
                    raise ValueError(f"{d.doc_id}: {len(uv.spans)} unit spans but {n} unit vectors")
        schema = _schema(self.dim)

        def batches() -> Iterator[pa.RecordBatch]:
            try:
                yield from self._batches(updates, schema)
            except Exception as e:
                failed.append(e)
                raise

        failed: list[Exception] = []
        return pa.RecordBatchReader.from_batches(schema, batches()), failed

    def _batches(self, updates: Sequence[DocumentUpdate], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
        """The record batches of :meth:`_row_batches` (the updates already checked there)."""
        from citewise.text.analyzer import lexical_text

        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        cols: dict[str, list[Any]] = {f.name: [] for f in schema}
        vectors: list[np.ndarray] = []
        units: list[np.ndarray] = []
        offsets = [0]
        size = 0
        emitted = False
        for u in updates:
            d = u.document
            title_ids = find_identifiers(d.title)
            meta_json, meta_terms = _metadata.to_json(d.metadata), _metadata.terms(d.metadata)
            meta_ranges = json.dumps(_metadata.ranges(d.metadata))
            unit_vectors = list(u.units) if u.units is not None else [None] * len(u.chunks)
            for j, (c, v, uv) in enumerate(zip(u.chunks, u.vectors, unit_vectors)):
                lex = u.lexical[j] if u.lexical is not None else lexical_text(c.indexed_text)
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
                if uv is None:
                    cols["units_version"].append("")
                    cols["units_key"].append("")
                    cols["unit_spans"].append([])
                    offsets.append(offsets[-1])
                else:
                    vecs = np.asarray(uv.vectors, dtype=np.float32).reshape(-1, self.dim)
                    cols["units_version"].append(uv.version)
                    cols["units_key"].append(uv.key)
                    cols["unit_spans"].append([int(x) for span in uv.spans for x in span])
                    units.append(vecs)
                    offsets.append(offsets[-1] + len(vecs))
                size += len(c.text) + len(lex)
                if len(vectors) >= WRITE_BATCH_ROWS or size >= WRITE_BATCH_BYTES:
                    yield self._batch(schema, cols, vectors, units, offsets)
                    emitted = True
                    cols = {f.name: [] for f in schema}
                    vectors, units, offsets, size = [], [], [0], 0
        if vectors or not emitted:  # the last rows; an update of only chunkless documents: no rows
            yield self._batch(schema, cols, vectors, units, offsets)

    def _batch(
        self,
        schema: pa.Schema,
        cols: dict[str, list[Any]],
        vectors: list[np.ndarray],
        units: list[np.ndarray],
        offsets: list[int],
    ) -> pa.RecordBatch:
        """One record batch from the column lists, the rows' vectors and their unit vectors
        (``units``, concatenated, the rows' slices given by ``offsets``)."""
        arrays: list[pa.Array] = []
        for f in schema:
            if f.name == "vector":
                flat = np.asarray(vectors, dtype=np.float32).reshape(-1)
                arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(flat, type=pa.float32()), self.dim))
            elif f.name == "unit_vectors":
                flat = np.concatenate(units).reshape(-1) if units else np.zeros(0, np.float32)
                inner = pa.FixedSizeListArray.from_arrays(pa.array(flat, type=pa.float32()), self.dim)
                arrays.append(pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), inner))
            else:
                arrays.append(pa.array(cols[f.name], type=f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def _ensure_unit_columns(self) -> None:
        """Add the unit and metadata columns (all null) to a table created before they existed."""
        have = set(self._table.schema.names)
        new = [f for f in _unit_fields(self.dim) + _meta_fields() if f.name not in have]
        if new:
            self._table.add_columns(pa.schema(new))

    @guarded
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
        data, failed = self._row_batches(updates)
        if self._table is None:  # another process (this one waited for its lock) may have created it
            self._table = self._open_existing(TABLE)
        if self._table is not None:
            self._ensure_unit_columns()
        batch_ids = {u.document.doc_id for u in updates}
        try:
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
        except Exception:
            if failed:  # building a batch failed: its own error, not Arrow's wrapping of it
                raise failed[0] from None
            raise
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

    @guarded
    def delete(self, doc_ids: Sequence[str]) -> int:
        """Delete documents (one commit); returns how many chunks went."""
        if self._table is None or not doc_ids:
            return 0
        self._writable()
        pred = f"doc_id IN ({', '.join(_q(d) for d in doc_ids)})"
        n: int = self._table.count_rows(pred)
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

    @guarded
    def refresh_indexes(self) -> None:
        """Compact the table and bring every index up to date with the rows (see module docstring).

        When rows were written by this store, or rows are not yet in the FTS index (e.g. left by
        a killed process), runs ``Table.optimize`` (compaction, incremental index update, cleanup
        of versions older than :data:`CLEANUP_AFTER`); then creates the FTS index and, from
        ``scalar_min_rows`` rows, the :data:`SCALAR_INDEXES` that are missing (a new table, a
        table built by an older citewise, or a process killed before it built them). An index
        built once is kept up to date by ``optimize`` whatever the table's size later.
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
        scalar = self._table.count_rows() >= self.scalar_min_rows
        for column, kind in SCALAR_INDEXES.items():
            if scalar and (column,) not in have and column in names:
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
        want = max(1, round(rows**0.5))
        trained = [
            int(n.rsplit("_p", 1)[1]) for n in vector if n.startswith("vector_ivf_p") and n.rsplit("_p", 1)[1].isdigit()
        ]
        current = max(trained, default=0)
        name = f"vector_ivf_p{current}"
        if rows >= self.ann_min_rows and (not current or want * want >= ANN_RETRAIN_GROWTH * current * current):
            name = f"vector_ivf_p{want}"
            self._table.create_index("vector", config=_ann_config(rows), name=name, replace=True)
        for stale in vector:
            if stale != name:
                self._table.drop_index(stale)

    @guarded
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
