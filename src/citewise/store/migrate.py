"""``citewise index migrate``: copy an index's embedded (LanceDB) store into a PostgreSQL store.

Every chunk row (text, metadata, vector, answer-unit vectors, lexical text) is copied as it is;
the PostgreSQL store computes its BM25 postings and term statistics from the same lexical text,
so the copy answers the same BM25 queries with the same scores. Documents are read and written
in batches of whole documents (one ``doc_id IN (...)`` read and one transaction each, about
:data:`BATCH_ROWS` rows), so memory stays at one batch whatever the index size, and an
interrupted migration leaves every copied document whole and can be run again (each document is
replaced, not duplicated).
"""

from __future__ import annotations

import json
from pathlib import Path

from citewise.core import CitewiseError

#: Chunk rows per transaction (cut at document boundaries).
BATCH_ROWS = 2000


def document_batches(src, rows_per_batch: int | None = None) -> list[list[str]]:
    """The document ids of LanceDB store ``src``, sorted, cut into batches of whole documents of
    about ``rows_per_batch`` chunk rows (a batch closes at the first document that brings it to
    ``rows_per_batch``; a larger document is a batch of its own). Only the ``doc_id`` column is
    read (~30 MB at 1M chunks), so a migration holds one batch of rows at a time, not the table
    (reading every row of a 1M-chunk index as Python objects took ~10 GB). ``rows_per_batch``:
    default :data:`BATCH_ROWS`."""
    import numpy as np

    rows_per_batch = rows_per_batch or BATCH_ROWS
    if src._reader() is None:
        return []
    col = src._scan(["doc_id"]).column("doc_id").to_numpy(zero_copy_only=False)
    if not len(col):
        return []
    ids, counts = np.unique(col.astype(str), return_counts=True)
    batches: list[list[str]] = []
    batch: list[str] = []
    rows = 0
    for doc_id, n in zip(ids.tolist(), counts.tolist()):
        batch.append(doc_id)
        rows += n
        if rows >= rows_per_batch:
            batches.append(batch)
            batch, rows = [], 0
    if batch:
        batches.append(batch)
    return batches


def document_rows(src, rows_per_batch: int | None = None):
    """Yield ``(doc_ids, rows)`` per :func:`document_batches` batch: every row of those documents
    (all columns, as dicts), ordered by document then chunk id."""
    from citewise.store.lance import _q

    for ids in document_batches(src, rows_per_batch):
        rows = src._scan_table(src._table, None, f"doc_id IN ({', '.join(_q(d) for d in ids)})").to_pylist()
        rows.sort(key=lambda r: (r["doc_id"], r["chunk_id"]))
        yield ids, rows


def migrate_index(folder: str | Path, url: str) -> dict:
    """Copy the LanceDB store of the index at ``folder`` into the PostgreSQL store at ``url``
    and record ``url`` (without its password) as the index's store.

    Returns: ``{"from", "to", "documents", "chunks", "runs"}`` (counts copied; ``to`` without
    password).

    Raises:
        CitewiseError: ``folder`` is not an index, ``url`` is not a PostgreSQL URL or cannot be
            reached, the target already holds another dimension, or documents the index does not
            have (another index's).
    """
    from citewise.index import Index, IndexSettings, strip_password, write_json
    from citewise.store.lance import LanceStore
    from citewise.store.base import is_store_url
    from citewise.store.postgres import PostgresStore

    folder = Path(folder)
    cfg = folder / "index.json"
    if not cfg.is_file():
        raise CitewiseError(f"{folder}: no index here (no index.json); --from takes an index folder")
    if not is_store_url(url):
        raise CitewiseError(f"--to {url!r}: expected a postgresql:// URL")
    try:
        settings = IndexSettings(**json.loads(cfg.read_text()))
    except (json.JSONDecodeError, TypeError) as e:
        raise CitewiseError(f"{cfg}: not a citewise index settings file ({e})") from None
    src = LanceStore(folder / "lance", settings.dim)
    try:
        dst = PostgresStore(url, settings.dim)
    except CitewiseError as e:  # the store names its URL as --store; here it is --to
        msg = str(e)
        raise CitewiseError("--to " + msg[len("--store "):] if msg.startswith("--store ") else msg) from None
    # a schema holding another index's documents: copying would merge the two (the other index's
    # restricted documents then show in this one's status and history); a re-run after an
    # interrupted copy finds only this index's documents there and goes on
    foreign = sorted(set(dst.documents()) - set(src.documents()))
    if foreign:
        raise CitewiseError(f"--to {strip_password(url)}: schema {dst.schema} already holds {len(foreign)} document(s) "
                            f"this index does not have (e.g. '{foreign[0]}'), so the copy would merge two indexes; "
                            "migrate into an empty schema (?schema=NAME)")
    chunks = 0
    docs = 0
    with dst.bulk_load():  # an empty target: postings keys built once at the end
        for ids, rows in document_rows(src):
            dst.import_rows(rows)
            chunks += len(rows)
            docs += len(ids)
    dst.refresh_indexes()
    have = {(r.started_at, r.root) for r in dst.runs()}
    runs = [r for r in src.runs() if (r.started_at, r.root) not in have]
    for run in runs:
        dst.record_run(run)
    settings.store = strip_password(url)
    write_json(cfg, settings.__dict__)
    dst.close()
    return {"from": str(folder), "to": strip_password(url), "documents": docs, "chunks": chunks, "runs": len(runs)}
