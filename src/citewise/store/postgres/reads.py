"""Lookups of the PostgreSQL store: chunks, vectors, units, documents and statistics
(:class:`citewise.store.postgres.PostgresStore`)."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from citewise.store.base import DocumentEntry, StoredChunk, UnitVectors

from citewise.store.postgres.host import _PgHost
from citewise.store.postgres.schema import _META_COLS


class _ReadMixin(_PgHost):
    """Chunk, vector and document lookups of :class:`~citewise.store.postgres.PostgresStore`."""

    def document_chunks(self, doc_id: str, groups: Sequence[str] | None) -> list[StoredChunk]:
        """Every chunk of ``doc_id`` readable by ``groups``, in text order (the Store contract)."""
        if groups is not None and not groups:
            return []
        sql = f"SELECT chunk_id FROM {self.schema}.chunks WHERE doc_id = %s"
        params: list[object] = [doc_id]
        if groups is not None:
            sql += " AND groups && %s::text[]"
            params.append(list(groups))
        with self._tx() as cur:
            ids = [r[0] for r in cur.execute(sql, params).fetchall()]
        chunks = self.get_chunks(ids)
        return sorted(chunks.values(), key=lambda c: (c.start, c.chunk_id))

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, StoredChunk]:
        """Chunks by id with their document metadata."""
        if not chunk_ids:
            return {}
        with self._tx() as cur:
            rows = cur.execute(
                f"SELECT {', '.join(_META_COLS)} FROM {self.schema}.chunks WHERE chunk_id = ANY(%s)",
                (list(set(chunk_ids)),),
            ).fetchall()
        out: dict[str, StoredChunk] = {}
        for r in rows:
            m = dict(zip(_META_COLS, r))
            out[m["chunk_id"]] = StoredChunk(
                chunk_id=m["chunk_id"],
                doc_id=m["doc_id"],
                title=m["title"],
                source=m["source"],
                version=m["version"],
                updated=m["updated"],
                groups=tuple(m["groups"]),
                heading_path=tuple(m["heading_path"]),
                text=m["text"],
                start=m["start"],
                end=m["end_"],
                token_count=m["token_count"],
                prev_id=m["prev_id"],
                next_id=m["next_id"],
                parent_id=m["parent_id"],
                effective=m["effective"],
                page_start=m["page_start"],
                page_end=m["page_end"],
                metadata=m["metadata"] or {},
            )
        return out

    def get_vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by chunk id (float32, shape (dim,))."""
        if not chunk_ids:
            return {}
        with self._tx() as cur:
            rows = cur.execute(
                f"SELECT chunk_id, vector::text FROM {self.schema}.chunks WHERE chunk_id = ANY(%s)",
                (list(set(chunk_ids)),),
            ).fetchall()
        return {cid: np.array(v[1:-1].split(","), dtype=np.float32) for cid, v in rows}

    def get_units(self, chunk_ids: Sequence[str]) -> dict[str, UnitVectors]:
        """Stored answer-unit vectors by chunk id (one query; rows without units are absent)."""
        if not chunk_ids:
            return {}
        with self._tx() as cur:
            rows = cur.execute(
                f"SELECT chunk_id, units_version, units_key, unit_spans, unit_vectors "
                f"FROM {self.schema}.chunks WHERE chunk_id = ANY(%s) AND units_version <> ''",
                (list(set(chunk_ids)),),
            ).fetchall()
        out: dict[str, UnitVectors] = {}
        for cid, ver, key, spans, blob in rows:
            spans = spans or []
            vecs = np.frombuffer(bytes(blob or b""), dtype="<f4").astype(np.float32).reshape(-1, self.dim)
            out[cid] = UnitVectors(ver, key, tuple(zip(spans[0::2], spans[1::2])), vecs)
        return out

    def documents(self, doc_ids: Iterable[str] | None = None) -> dict[str, DocumentEntry]:
        """Every stored document (only those of ``doc_ids`` when given), from its chunk rows (one
        aggregate query)."""
        where = ""
        params: tuple[list[str], ...] = ()
        if doc_ids is not None:
            ids = sorted(set(doc_ids))
            if not ids:
                return {}
            where, params = "WHERE doc_id = ANY(%s::text[])", (ids, ids)
        with self._tx() as cur:
            rows = cur.execute(
                f"""
                SELECT a.*, f.groups FROM (
                    SELECT doc_id, min(title), min(source), min(content_hash), min(version), min(updated),
                           count(*), min(indexed_at), min(effective), min(source_changed_at),
                           CASE WHEN count(DISTINCT units_version) = 1 THEN min(units_version) ELSE '' END,
                           min(title_ids)
                    FROM {self.schema}.chunks {where} GROUP BY doc_id) a
                JOIN (SELECT DISTINCT ON (doc_id) doc_id, groups FROM {self.schema}.chunks {where}
                      ORDER BY doc_id, chunk_id) f USING (doc_id)
                ORDER BY doc_id""",
                params or None,
            ).fetchall()
        return {
            r[0]: DocumentEntry(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                int(r[6]),
                r[7],
                r[8],
                tuple(r[12] or ()),
                r[9],
                r[10],
                tuple(r[11] or ()),
            )
            for r in rows
        }

    def chunk_versions(self) -> dict[str, set[tuple[str, str, str]]]:
        """Per document, the set of (chunk_id, content_hash, version) of its rows."""
        out: dict[str, set[tuple[str, str, str]]] = {}
        with self._tx() as cur:
            for doc, cid, h, v in cur.execute(
                f"SELECT doc_id, chunk_id, content_hash, version FROM {self.schema}.chunks"
            ):
                out.setdefault(doc, set()).add((cid, h, v))
        return out

    def term_statistics(self) -> dict[str, Any]:
        """{'n_chunks', 'total_len', 'df': {term: df}} as stored (for checks against a recount)."""
        with self._tx() as cur:
            n, total = cur.execute(f"SELECT n_chunks, total_len FROM {self.schema}.corpus_stats").fetchone()
            df = dict(cur.execute(f"SELECT term, df FROM {self.schema}.term_stats").fetchall())
        return {"n_chunks": n, "total_len": total, "df": df}

    def stats(self) -> dict[str, Any]:
        """Document and chunk counts, and the backend."""
        with self._tx() as cur:
            docs, chunks = cur.execute(f"SELECT count(DISTINCT doc_id), count(*) FROM {self.schema}.chunks").fetchone()
        return {"documents": int(docs), "chunks": int(chunks), "backend": "postgresql", "schema": self.schema}
