"""Writes of the PostgreSQL store: whole-document replacement in one transaction, bulk
loads, index upkeep and the ingest log (:class:`citewise.store.postgres.PostgresStore`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import numpy as np

from citewise.core import CitewiseError
from citewise import metadata as _metadata
from citewise.store.base import DocumentUpdate, IngestRun
from citewise.store.lance import page_range
from citewise.text.analyzer import find_identifiers

from citewise.store.postgres.schema import (
    HNSW_BUILD_MEMORY,
    HNSW_EF_CONSTRUCTION,
    HNSW_M,
    _HIT_INDEX,
    _ROW_COLS,
    _copy_text_array,
    _postings_keys,
    _vector_text,
    bm25_terms,
    hnsw_build_memory,
    import_psycopg,
)
from citewise.store.postgres.host import PgConnection, PgCursor, _PgHost

#: A chunk row: its values in :data:`_ROW_COLS` order.
ChunkRow = tuple[Any, ...]
#: A posting row: (term, chunk_id, tf, the chunk's length in terms, the chunk's groups).
PostingRow = tuple[str, str, int, int, list[str]]


class _WriteMixin(_PgHost):
    """Writes, index upkeep and the ingest log of :class:`~citewise.store.postgres.PostgresStore`."""

    def _rows(self, updates: Sequence[DocumentUpdate]) -> tuple[list[ChunkRow], list[PostingRow]]:
        """(chunk rows in :data:`_ROW_COLS` order, posting rows (term, chunk_id, tf))."""
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        rows: list[ChunkRow] = []
        postings: list[PostingRow] = []
        for u in updates:
            d = u.document
            if len(u.chunks) != len(u.vectors):
                raise ValueError(f"{d.doc_id}: {len(u.chunks)} chunks but {len(u.vectors)} vectors")
            units = list(u.units) if u.units is not None else [None] * len(u.chunks)
            if len(units) != len(u.chunks):
                raise ValueError(f"{d.doc_id}: {len(u.chunks)} chunks but {len(units)} unit entries")
            title_ids = find_identifiers(d.title)
            lexical = u.lexical_texts()
            meta = (
                _metadata.to_json(d.metadata),
                _metadata.terms(d.metadata),
                json.dumps(_metadata.ranges(d.metadata)),
            )
            for c, v, uv, lex in zip(u.chunks, u.vectors, units, lexical):
                p0, p1 = page_range(d.pages, c.start, c.end)
                terms = bm25_terms(lex)
                for term, tf in sorted(Counter(terms).items()):
                    postings.append((term, c.chunk_id, tf, len(terms), list(u.groups)))
                if uv is None:
                    uver, ukey, uspans, uvecs = "", "", None, None
                else:
                    vecs = np.asarray(uv.vectors, dtype="<f4").reshape(-1, self.dim)
                    if len(vecs) != len(uv.spans):
                        raise ValueError(f"{d.doc_id}: {len(uv.spans)} unit spans but {len(vecs)} unit vectors")
                    uver, ukey = uv.version, uv.key
                    uspans = [int(x) for span in uv.spans for x in span]
                    uvecs = vecs.tobytes()
                vec = np.asarray(v, dtype=np.float32).reshape(-1)
                if len(vec) != self.dim:
                    raise ValueError(f"{d.doc_id}: vector has dim {len(vec)}, store has {self.dim}")
                rows.append(
                    (
                        c.chunk_id,
                        d.doc_id,
                        d.title,
                        title_ids,
                        d.source,
                        d.version,
                        d.updated.isoformat() if d.updated else "",
                        d.effective.isoformat() if d.effective else "",
                        bool(d.current),
                        d.valid_to.isoformat() if d.valid_to else "",
                        list(u.groups),
                        d.content_hash,
                        now,
                        u.source_changed_at,
                        list(c.heading_path),
                        c.text,
                        lex,
                        len(terms),
                        c.start + d.offset_base,
                        c.end + d.offset_base,
                        c.token_count,
                        p0,
                        p1,
                        c.prev_id,
                        c.next_id,
                        c.parent_id,
                        _vector_text(vec),
                        uver,
                        ukey,
                        uspans,
                        uvecs,
                        *meta,
                    )
                )
        return rows, postings

    def _remove(self, cur: PgCursor, doc_ids: list[str]) -> int:
        """Delete documents' rows and take their postings out of the term statistics."""
        s = self.schema
        cur.execute(
            f"""UPDATE {s}.term_stats t SET df = t.df - x.n
                        FROM (SELECT p.term_id, count(*) AS n FROM {s}.postings p JOIN {s}.chunks c ON c.rid = p.rid
                              WHERE c.doc_id = ANY(%s) GROUP BY p.term_id) x
                        WHERE t.term_id = x.term_id""",
            (doc_ids,),
        )
        gone = cur.execute(f"DELETE FROM {s}.chunks WHERE doc_id = ANY(%s) RETURNING doc_len", (doc_ids,)).fetchall()
        cur.execute(f"DELETE FROM {s}.term_stats WHERE df <= 0")
        if gone:
            cur.execute(
                f"UPDATE {s}.corpus_stats SET n_chunks = n_chunks - %s, total_len = total_len - %s",
                (len(gone), sum(r[0] for r in gone)),
            )
        return len(gone)

    def upsert(self, updates: Sequence[DocumentUpdate]) -> None:
        """Replace the given documents (all of them, in one transaction: see module docstring).

        Raises:
            ValueError: chunk, vector and unit counts or the vector dimension disagree.
        """
        if not updates:
            return
        rows, postings = self._rows(updates)
        self._write(rows, postings, [u.document.doc_id for u in updates])

    @contextmanager
    def bulk_load(self) -> Iterator[bool]:
        """Fill an empty store faster: inside the block, :meth:`import_rows` writes postings into
        a table without its primary key, its foreign key to the chunks and its ``rid`` index,
        which are built once at the end (PostgreSQL, "Populating a Database": remove indexes
        and foreign keys, load, recreate). Per-row upkeep of those three was ~half a copy's
        server time at 3,000 chunks (523 -> 1,042 rows/s) and grows with the table.

        Yields True when the store was empty (the keys are off until the block ends), False
        otherwise (nothing changes: rows replace documents as always). Every document may be
        imported once per block. The keys are put back when the block ends, also on an error;
        a process killed inside the block leaves them off, and the next open of the store puts
        them back (:meth:`_setup`). Readers meanwhile get the same rows, more slowly.

        Raises:
            CitewiseError: putting the keys back failed (the message says which).
        """
        s = self.schema
        with self._tx(snapshot=False) as cur:
            empty: bool = cur.execute(f"SELECT NOT EXISTS (SELECT 1 FROM {s}.chunks)").fetchone()[0]
            if empty:
                for _, drop in reversed(_postings_keys(s).values()):
                    cur.execute(drop)
        self._bulk = set() if empty else None
        try:
            yield empty
        finally:
            self._bulk = None
            if empty:
                with self._tx(snapshot=False) as cur:
                    self._restore_postings_keys(cur)

    def _restore_postings_keys(self, cur: PgCursor) -> None:
        """Add whichever of :func:`_postings_keys` the postings table lacks (on ``cur``, in the
        caller's transaction)."""
        s = self.schema
        have = {
            r[0]
            for r in cur.execute(
                "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype IN ('p', 'f') UNION "
                "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = 'postings'",
                (f"{s}.postings", s),
            ).fetchall()
        }
        missing = [add for name, (add, _) in _postings_keys(s).items() if name not in have]
        if not missing:
            return
        cur.execute(f"SET LOCAL maintenance_work_mem = '{HNSW_BUILD_MEMORY}'")
        for stmt in missing:
            try:
                cur.execute(stmt)
            except import_psycopg().Error as e:
                raise CitewiseError(
                    f"--store {self._safe_url()}: could not restore the postings keys "
                    f"after a bulk load ({' '.join(str(e).split())})"
                ) from None

    def import_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        """Write rows read from another store (the LanceDB column names: ``end`` not ``end_``,
        ``vector`` a float list, ``unit_vectors`` a list of float lists) in one transaction,
        replacing the documents they belong to; postings and term statistics are computed from
        each row's ``lexical`` text. For :mod:`citewise.store.migrate`.

        Raises:
            ValueError: a row's vector has another dimension than the store.
            CitewiseError: inside :meth:`bulk_load`, a document imported before in the block.
        """
        if not rows:
            return
        doc_ids = sorted({r["doc_id"] for r in rows})
        if self._bulk is not None:
            again = self._bulk.intersection(doc_ids)
            if again:
                raise CitewiseError(f"document '{min(again)}' imported twice in one bulk load")
        out: list[ChunkRow] = []
        postings: list[PostingRow] = []
        for r in rows:
            terms = bm25_terms(r["lexical"] or "")
            for term, tf in sorted(Counter(terms).items()):
                postings.append((term, r["chunk_id"], tf, len(terms), list(r["groups"] or [])))
            vec = np.asarray(r["vector"], dtype=np.float32).reshape(-1)
            if len(vec) != self.dim:
                raise ValueError(f"{r['chunk_id']}: vector has dim {len(vec)}, store has {self.dim}")
            units = r.get("unit_vectors")
            row = dict(
                r,
                end_=r["end"],
                doc_len=len(terms),
                vector=_vector_text(vec),
                units_version=r.get("units_version") or "",
                units_key=r.get("units_key") or "",
                unit_spans=r.get("unit_spans") if r.get("units_version") else None,
                unit_vectors=np.asarray(units, dtype="<f4").tobytes() if units and r.get("units_version") else None,
                title_ids=r["title_ids"] or [],
                groups=r["groups"] or [],
                heading_path=r["heading_path"] or [],
                page_start=r.get("page_start") or 0,
                page_end=r.get("page_end") or 0,
                source_changed_at=r.get("source_changed_at") or "",
                effective=r.get("effective") or "",
                valid_to=r.get("valid_to") or "",
                metadata=r.get("metadata") or "{}",
                meta_terms=r.get("meta_terms") or [],
                meta_ranges=r.get("meta_ranges") or "{}",
            )
            out.append(tuple(row[c] for c in _ROW_COLS))
        # in a bulk load the documents are new (the store was empty, each comes once): nothing
        # to remove, and the removal's join would read postings that have no rid index then
        self._write(out, postings, doc_ids, remove=self._bulk is None)
        if self._bulk is not None:
            self._bulk.update(doc_ids)

    def _write(self, rows: list[ChunkRow], postings: list[PostingRow], doc_ids: list[str], remove: bool = True) -> None:
        """One transaction: remove ``doc_ids`` (unless ``remove`` is False), then COPY ``rows``
        and ``postings`` in and update the term and corpus statistics."""
        s = self.schema
        with self._tx(snapshot=False) as cur:
            if remove:
                self._remove(cur, doc_ids)
            with cur.copy(f"COPY {s}.chunks ({', '.join(_ROW_COLS)}) FROM STDIN") as copy:
                for r in rows:
                    copy.write_row(r)
            rids = dict(
                cur.execute(
                    f"SELECT chunk_id, rid FROM {s}.chunks WHERE chunk_id = ANY(%s)", ([r[0] for r in rows],)
                ).fetchall()
            )
            df = Counter(p[0] for p in postings)
            names = sorted(df)
            ids = dict(
                cur.execute(
                    f"""INSERT INTO {s}.term_stats (term, df) SELECT * FROM unnest(%s::text[], %s::int[])
                                       ON CONFLICT (term) DO UPDATE SET df = term_stats.df + excluded.df
                                       RETURNING term, term_id""",
                    (names, [df[t] for t in names]),
                ).fetchall()
            )
            with cur.copy(f"COPY {s}.postings (term_id, rid, tf, doc_len, groups) FROM STDIN") as copy:
                # COPY's text format written in blocks: psycopg's write_row (array dumping per row)
                # was a third of a migrate's time (~83 postings per chunk)
                arrays: dict[tuple[str, ...], str] = {}
                lines = []
                for term, chunk_id, tf, doc_len, groups in postings:
                    key = tuple(groups)
                    arr = arrays.get(key)
                    if arr is None:
                        arr = arrays[key] = _copy_text_array(key)
                    lines.append(f"{ids[term]}\t{rids[chunk_id]}\t{tf}\t{doc_len}\t{arr}\n")
                    if len(lines) >= 20_000:
                        copy.write("".join(lines))
                        lines.clear()
                if lines:
                    copy.write("".join(lines))
            cur.execute(
                f"UPDATE {s}.corpus_stats SET n_chunks = n_chunks + %s, total_len = total_len + %s",
                (len(rows), sum(r[_ROW_COLS.index("doc_len")] for r in rows)),
            )

    def delete(self, doc_ids: Sequence[str]) -> int:
        """Delete documents (one transaction); returns how many chunks went."""
        if not doc_ids:
            return 0
        with self._tx(snapshot=False) as cur:
            return self._remove(cur, list(doc_ids))

    def refresh_indexes(self) -> None:
        """Build the HNSW index on ``vector`` once the store has ``ann_min_rows`` rows, and
        ``VACUUM (ANALYZE)`` the tables (planner statistics; the visibility map that lets BM25
        read postings from the covering primary-key index, and its hits from ``chunks_hit``,
        without the heap); creates ``chunks_hit`` in a store made before it existed. Term
        statistics need no refresh."""
        s = self.schema
        with self._connection() as conn:
            n = conn.execute(f"SELECT n_chunks FROM {s}.corpus_stats").fetchone()[0]
            if n >= self.ann_min_rows and not self._has_ann_index(conn):
                # the graph is built in memory when it fits (pgvector: slower once it spills)
                conn.execute(f"SET maintenance_work_mem = '{hnsw_build_memory(n, self.dim)}'")
                try:
                    conn.execute(
                        f"CREATE INDEX IF NOT EXISTS chunks_vector_hnsw ON {s}.chunks "
                        f"USING hnsw (vector vector_cosine_ops) WITH (m = {HNSW_M}, "
                        f"ef_construction = {HNSW_EF_CONSTRUCTION})"
                    )
                finally:
                    conn.execute("RESET maintenance_work_mem")
            conn.execute(_HIT_INDEX.format(s=s))  # stores created before it had it
            # VACUUM sets the visibility map, so BM25 reads postings from the covering index alone
            conn.execute(f"VACUUM (ANALYZE) {s}.chunks, {s}.postings, {s}.term_stats, {s}.corpus_stats")

    def has_ann_index(self) -> bool:
        """Whether the chunk table has the HNSW index on ``vector``."""
        with self._connection() as conn:
            return self._has_ann_index(conn)

    def _has_ann_index(self, conn: PgConnection) -> bool:
        # on the caller's connection: a second borrow while holding one would wait forever
        # with a pool of one
        return (
            conn.execute(
                "SELECT 1 FROM pg_indexes WHERE schemaname = %s AND indexname = %s", (self.schema, "chunks_vector_hnsw")
            ).fetchone()
            is not None
        )

    def unindexed_rows(self) -> int:
        """Always 0: the term statistics are written with the rows."""
        return 0

    def record_run(self, run: IngestRun) -> None:
        """Append one completed ingest run to ``ingest_runs``."""
        names = [f.name for f in dataclasses.fields(IngestRun)]
        with self._tx(snapshot=False) as cur:
            cur.execute(
                f"INSERT INTO {self.schema}.ingest_runs ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))})",
                [getattr(run, n) for n in names],
            )

    def runs(self) -> list[IngestRun]:
        """The ingest log, oldest first (by finish time)."""
        names = [f.name for f in dataclasses.fields(IngestRun)]
        with self._tx() as cur:
            rows = cur.execute(
                f"SELECT {', '.join(names)} FROM {self.schema}.ingest_runs ORDER BY finished_at, started_at, root"
            ).fetchall()
        return [IngestRun(*r) for r in rows]
