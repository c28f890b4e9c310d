"""Reads of the LanceDB store: table handles, queries on LanceDB's loop thread, chunk,
vector and document lookups (:class:`citewise.store.lance.LanceStore`)."""

from __future__ import annotations

import json
from typing import Any, Callable, Coroutine, Iterable, Sequence, TypeVar

import numpy as np
import pyarrow as pa

from citewise.core import CitewiseError, Filters
from citewise.store.base import DocumentEntry, ScoredChunk, StoredChunk, UnitVectors
from citewise.store.faults import guarded
from citewise.text.analyzer import fold

from citewise.store.lance.host import AsyncHandle, TableHandle, _LanceHost
from citewise.store.lance.schema import TABLE, _META_COLS, _document_entries, _q, filter_sql

_T = TypeVar("_T")


#: :meth:`LanceStore.documents` reads up to this many requested ids through a ``doc_id IN (...)``
#: predicate (the ``doc_id`` index); more are filtered from a scan of the whole table.
DOC_FILTER_MAX = 5_000


class _ReadMixin(_LanceHost):
    """Handles, queries and lookups of :class:`~citewise.store.lance.LanceStore`."""

    def _reader(self) -> TableHandle | None:
        """The chunk table to read, or None when there is none (yet).

        A table created by another process after this store opened is opened here; unlike
        :meth:`_open_or_discard` nothing is ever removed (the creator may still be writing).
        """
        if self._table is None:
            self._table = self._open_existing(TABLE)
        return self._table

    def _open_existing(self, name: str) -> TableHandle | None:
        """Open table ``name`` if it exists and has a committed version, else None."""
        if name not in self._table_names():
            return None
        try:
            return self._db.open_table(name)
        except (ValueError, OSError, RuntimeError):
            return None

    @guarded
    def _run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run ``coro`` on LanceDB's event-loop thread (one round trip) and return its result
        (this process's own loop thread while lancedb is not imported:
        :func:`citewise.store.lance_native.run`)."""
        from citewise.store.lance_native import run

        return run(coro)

    def _query(self, make: Callable[[Any], Any], table: TableHandle | None = None) -> pa.Table:
        """Rows of the query ``make(async_query)`` on the chunk table (or ``table``), as Arrow.

        ``make`` receives ``AsyncTable.query()`` and returns the finished query; building and
        executing it take one trip to LanceDB's loop.
        """
        at = (table or self._table)._table  # the AsyncTable behind the synchronous handle

        async def go() -> pa.Table:
            rows: pa.Table = await make(at.query()).to_arrow()
            return rows

        return self._run(go())

    def column_names(self) -> frozenset[str]:
        """Column names of the chunk table (empty without one); cached per table version."""
        t = self._reader()
        if t is None:
            return frozenset()
        at = t._table

        async def go() -> frozenset[str]:
            version = await at.version()
            if version != self._names[0]:
                self._names = (version, frozenset((await at.schema()).names))
            return self._names[1]

        return self._run(go())

    def _where(self, filters: Filters | None) -> str | None:
        """:func:`filter_sql` of ``filters``, after checking that a table asked for metadata
        conditions has the metadata columns.

        Raises:
            CitewiseError: metadata conditions on a table written before metadata was stored.
        """
        if filters is not None and filters.metadata and "meta_terms" not in self.column_names():
            raise CitewiseError(
                f"{self.path}: this index was built before document metadata was stored; "
                "ingest the documents again to filter on metadata"
            )
        return filter_sql(filters)

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
        rows = self._query(
            lambda q: q.where(where).select(["chunk_id", "doc_id", "title", "prev_id"]).limit(1000)
        ).to_pylist()
        rows.sort(key=lambda r: (r["doc_id"], r["prev_id"] is not None, r["chunk_id"]))
        return [ScoredChunk(r["chunk_id"], r["doc_id"], r["title"], 1.0) for r in rows]

    def has_group(self, group: str) -> bool:
        """Whether any chunk names ``group`` among its groups (the label-list index answers it)."""
        if self._reader() is None:
            return False
        tbl = self._query(lambda q: q.where(f"array_has(groups, {_q(group)})").select(["chunk_id"]).limit(1))
        return bool(tbl.num_rows > 0)

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, StoredChunk]:
        """Chunks by id with their document metadata."""
        if not chunk_ids or self._reader() is None:
            return {}
        ids = ", ".join(_q(c) for c in set(chunk_ids))
        cols = _META_COLS + (["metadata"] if "metadata" in self.column_names() else [])
        rows = self._query(lambda q: q.where(f"chunk_id IN ({ids})").select(cols).limit(len(chunk_ids) + 1)).to_pylist()
        out: dict[str, StoredChunk] = {}
        for r in rows:
            out[r["chunk_id"]] = StoredChunk(
                chunk_id=r["chunk_id"],
                doc_id=r["doc_id"],
                title=r["title"],
                source=r["source"],
                version=r["version"],
                updated=r["updated"],
                groups=tuple(r["groups"] or ()),
                heading_path=tuple(r["heading_path"] or ()),
                text=r["text"],
                start=r["start"],
                end=r["end"],
                token_count=r["token_count"],
                prev_id=r["prev_id"],
                next_id=r["next_id"],
                parent_id=r["parent_id"],
                effective=r["effective"],
                page_start=r["page_start"] or 0,
                page_end=r["page_end"] or 0,
                metadata=json.loads(r["metadata"]) if r.get("metadata") else {},
            )
        return out

    def document_chunks(self, doc_id: str, groups: Sequence[str] | None) -> list[StoredChunk]:
        """Every chunk of ``doc_id`` readable by ``groups``, in text order (the Store contract)."""
        if (groups is not None and not groups) or self._reader() is None:
            return []
        where = f"doc_id = {_q(doc_id)}"
        if groups is not None:
            where += f" AND array_has_any(groups, [{', '.join(_q(g) for g in groups)}])"
        ids = self._query(lambda q: q.where(where).select(["chunk_id"]).limit(1_000_000)).column("chunk_id")
        chunks = self.get_chunks(ids.to_pylist())
        return sorted(chunks.values(), key=lambda c: (c.start, c.chunk_id))

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by chunk id (float32, shape (dim,))."""
        if not chunk_ids or self._reader() is None:
            return {}
        ids = ", ".join(_q(c) for c in set(chunk_ids))
        tbl = self._query(
            lambda q: q.where(f"chunk_id IN ({ids})").select(["chunk_id", "vector"]).limit(len(chunk_ids) + 1)
        )
        vecs = tbl.column("vector").combine_chunks().flatten().to_numpy().reshape(-1, self.dim)
        return dict(zip(tbl.column("chunk_id").to_pylist(), vecs.astype(np.float32)))

    def get_units(self, chunk_ids: Sequence[str]) -> dict[str, UnitVectors]:
        """Stored answer-unit vectors by chunk id (one query; rows without units are absent)."""
        if not chunk_ids or "unit_vectors" not in self.column_names():
            return {}
        ids = ", ".join(_q(c) for c in set(chunk_ids))
        tbl = self._query(
            lambda q: (
                q.where(f"chunk_id IN ({ids}) AND units_version <> ''")
                .select(["chunk_id", "units_version", "units_key", "unit_spans", "unit_vectors"])
                .limit(len(chunk_ids) + 1)
            )
        )
        if tbl.num_rows == 0:
            return {}
        col = tbl.column("unit_vectors").combine_chunks()
        offsets = col.offsets.to_numpy()
        # flatten() honours a slice offset (values would not), so offsets are rebased to 0
        flat = col.flatten().flatten().to_numpy(zero_copy_only=False).astype(np.float32).reshape(-1, self.dim)
        out: dict[str, UnitVectors] = {}
        for i, (cid, ver, key, spans) in enumerate(
            zip(
                tbl.column("chunk_id").to_pylist(),
                tbl.column("units_version").to_pylist(),
                tbl.column("units_key").to_pylist(),
                tbl.column("unit_spans").to_pylist(),
            )
        ):
            spans = spans or []
            out[cid] = UnitVectors(
                ver,
                key or "",
                tuple(zip(spans[0::2], spans[1::2])),
                flat[offsets[i] - offsets[0] : offsets[i + 1] - offsets[0]],
            )
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
        cols = [
            "doc_id",
            "title",
            "title_ids",
            "source",
            "content_hash",
            "version",
            "updated",
            "indexed_at",
            "effective",
            "groups",
            "source_changed_at",
        ] + (["units_version"] if with_units else [])
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

    def _scan_table(self, table: TableHandle, columns: list[str] | None, where: str | None = None) -> pa.Table:
        """All rows of ``table`` (``columns`` only, or all; those matching ``where``), in one trip
        to LanceDB's loop.

        One query reads one table version, but its row limit comes from a count that may have
        read an older one (a commit in between): a result that fills the limit is read again
        with the new count, so a concurrent ingest never truncates the scan (half a document)."""
        at: AsyncHandle = table._table

        async def go() -> pa.Table:
            while True:
                n = max(await at.count_rows(), 1)
                q = at.query()
                if where is not None:
                    q = q.where(where)
                if columns is not None:
                    q = q.select(columns)
                rows: pa.Table = await q.limit(n + 1).to_arrow()
                if rows.num_rows <= n:
                    return rows

        return self._run(go())

    def stats(self) -> dict[str, Any]:
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
