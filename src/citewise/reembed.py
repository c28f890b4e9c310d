"""``citewise index reembed``: move an index to another embedding model.

The new vectors are built beside the old ones: every chunk row of the embedded store is copied
into a new LanceDB folder inside the index folder (``lance-<fingerprint>``) with its vector and
answer-unit vectors made by the new embedder in one pass (:mod:`citewise.models.chunk_vectors`:
each unit embedded once, the chunk's vector their mean, or its own text's vector), then the
folder's indexes (BM25 postings, FTS, scalar, ANN) are built. Until then every reader keeps using
the old folder and the old model, which ``index.json`` names. The switch is one atomic rewrite
of ``index.json`` (embedder spec, model, dimension, fingerprint and folder together); the old
folder is removed after it (``keep_old`` keeps it). The ingest lock is held throughout, so no
ingest writes to the old folder meanwhile; a process killed during the build leaves the index on
its old model (the half-built folder is removed by the next ``reembed``).

A running ``citewise serve`` keeps its open store and model: restart it after the switch.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa

from citewise.core import CitewiseError, without_markup

#: Texts per embedding call (units and chunk texts of whole documents).
EMBED_BATCH_ROWS = 500


def _row_texts(row: dict, units) -> tuple[str, list[tuple[int, int, str]]]:
    """(the chunk's indexed text, its answer units' ``(start, end, text to embed)``)."""
    head = " > ".join(h for h in (row.get("heading_path") or []) if h)
    body = without_markup(row["text"] or "")
    return (f"{head}\n{body}" if head else body), units.embedding_units(row["title"] or "", row["text"] or "")


def embed_rows(rows: pa.Table, embedder, mode: str, units) -> tuple[np.ndarray, list]:
    """New vectors for the chunk rows ``rows`` (one embedding pass).

    Returns:
        ``(vectors, unit_columns)``: float32 (rows, dim) chunk vectors, and per row
        ``(units_version, units_key, spans, unit vectors)``.
    """
    from citewise.models.chunk_vectors import mean_of_units

    cols = rows.select(["title", "heading_path", "text"]).to_pylist()
    texts: list[str] = []
    plans = []
    for r in cols:
        own, us = _row_texts(r, units)
        first = len(texts)
        texts.extend(t for _, _, t in us)
        plans.append((own, tuple((s, e) for s, e, _ in us), first, len(us)))
    lone = [i for i, p in enumerate(plans) if mode == "chunk" or not p[3]]
    base = len(texts)
    texts.extend(plans[i][0] for i in lone)
    vecs = np.asarray(embedder.embed(texts), dtype=np.float32) if texts else np.zeros((0, embedder.dim), np.float32)
    unit_vecs = [vecs[p[2] : p[2] + p[3]] for p in plans]
    chunk_vecs, _ = mean_of_units(unit_vecs, embedder.dim)
    for k, i in enumerate(lone):
        chunk_vecs[i] = vecs[base + k]
    unit_cols = [
        (units.version, units.key(r["title"] or "", r["text"] or ""), p[1], uv)
        for r, p, uv in zip(cols, plans, unit_vecs)
    ]
    return chunk_vecs, unit_cols


def _with_vectors(rows: pa.Table, dim: int, vectors: np.ndarray, unit_cols: list, schema: pa.Schema) -> pa.Table:
    """``rows`` with the vector and answer-unit columns replaced (new dimension ``dim``)."""
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    offsets = [0]
    parts = []
    for _, _, _, uv in unit_cols:
        parts.append(uv)
        offsets.append(offsets[-1] + len(uv))
    uflat = np.concatenate(parts).reshape(-1) if parts else np.zeros(0, np.float32)
    new = {
        "vector": pa.FixedSizeListArray.from_arrays(flat, dim),
        "unit_vectors": pa.ListArray.from_arrays(
            pa.array(offsets, type=pa.int32()),
            pa.FixedSizeListArray.from_arrays(pa.array(uflat, type=pa.float32()), dim),
        ),
        "units_version": pa.array([c[0] for c in unit_cols], type=pa.string()),
        "units_key": pa.array([c[1] for c in unit_cols], type=pa.string()),
        "unit_spans": pa.array([[int(x) for span in c[2] for x in span] for c in unit_cols], type=pa.list_(pa.int32())),
    }
    arrays = [new[f.name] if f.name in new else rows.column(f.name).cast(f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def reembed_index(
    path: str | Path, spec: str, *, keep_old: bool = False, progress: Callable[[int, int], None] | None = None
) -> dict:
    """Move the index at ``path`` to the embedder ``spec`` (see module docstring).

    Args:
        progress: called with (chunks done, chunks in all) after each batch.

    Returns:
        ``{"index", "from", "to", "model", "dim", "fingerprint", "chunks", "folder", "removed"}``.

    Raises:
        CitewiseError: the index uses a PostgreSQL store, ``spec`` is the model the index already
            uses, or ``spec`` is not a usable embedder.
        IndexBusy: an ingest is running on the index.
    """
    from citewise.answer.units import ANSWER_UNITS
    from citewise.index import Index, ingest_lock, model_record
    from citewise.models.embedders import make_embedder
    from citewise.store.lance import RUNS_TABLE, TABLE, LanceStore, _schema, write_json
    from citewise.store.migrate import document_batches

    idx = Index.open(path)
    if idx.store_url:
        raise CitewiseError(
            f"{idx.path}: 'index reembed' moves the embedded (LanceDB) store; this index uses "
            "PostgreSQL: reembed its LanceDB copy (--store lancedb), then 'citewise index migrate'"
        )
    new = make_embedder(spec)
    record = model_record(new)
    s = idx.settings
    if record["fingerprint"] == s.fingerprint and new.dim == s.dim:
        raise CitewiseError(
            f"{idx.path}: already embedded with this model ({s.model or s.embedder}, fingerprint "
            f"{s.fingerprint}); nothing to do"
        )
    with ingest_lock(idx.path):
        folder = f"lance-{record['fingerprint']}"
        if folder == s.lance_dir:
            folder += "-new"
        target = idx.path / folder
        if target.exists():
            shutil.rmtree(target)  # left by a reembed that did not finish
        src = idx.store
        dst = LanceStore(target, new.dim)
        schema = _schema(new.dim)
        batches = document_batches(src) if src._reader() is not None else []
        total = src.stats()["chunks"] if batches else 0
        done = 0
        from citewise.store.lance import _q

        for ids in batches:
            rows = src._scan_table(src._table, None, f"doc_id IN ({', '.join(_q(d) for d in ids)})")
            vectors, unit_cols = embed_rows(rows, new, s.chunk_vectors, ANSWER_UNITS)
            data = _with_vectors(rows, new.dim, vectors, unit_cols, schema)
            dst._writable()
            if dst._table is None:
                dst._table = dst._db.create_table(TABLE, data=data, schema=schema)
            else:
                dst._table.add(data)
            done += rows.num_rows
            if progress:
                progress(done, total)
        runs = src.runs()
        if runs:
            import dataclasses

            from citewise.store.lance import _RUN_SCHEMA

            dst._runs = dst._db.create_table(
                RUNS_TABLE,
                data=pa.Table.from_pylist([dataclasses.asdict(r) for r in runs], schema=_RUN_SCHEMA),
                schema=_RUN_SCHEMA,
            )
        dst._fts_dirty = True
        dst.refresh_indexes()
        old = idx.path / s.lance_dir
        before = (s.embedder, s.model)
        s.embedder, s.dim, s.lance_dir = spec, new.dim, folder
        s.model, s.fingerprint, s.probe = record["model"], record["fingerprint"], record["probe"]
        write_json(idx.path / "index.json", s.__dict__)  # the switch: one atomic rename
        removed = False
        if not keep_old and old.exists() and old != target:
            shutil.rmtree(old, ignore_errors=True)
            removed = True
    return {
        "index": str(idx.path),
        "from": before[1] or before[0],
        "to": spec,
        "model": record["model"],
        "dim": new.dim,
        "fingerprint": record["fingerprint"],
        "chunks": done,
        "folder": folder,
        "removed": removed,
    }
