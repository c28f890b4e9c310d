"""Copying chunk rows between stores in whole-document batches (used by ``citewise index migrate``,
:mod:`citewise.migration`, and ``citewise index reembed``).

Every chunk row (text, metadata, vector, answer-unit vectors, lexical text) is copied as it is;
the PostgreSQL store computes its BM25 postings and term statistics from the same lexical text,
so the copy answers the same BM25 queries with the same scores. Documents are read and written
in batches of whole documents (one ``doc_id IN (...)`` read and one transaction each, about
:data:`BATCH_ROWS` rows), so memory stays at one batch whatever the index size, and an
interrupted migration leaves every copied document whole and can be run again (each document is
replaced, not duplicated).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from citewise.store.lance import LanceStore


#: Chunk rows per transaction (cut at document boundaries).
BATCH_ROWS = 2000


def document_batches(src: LanceStore, rows_per_batch: int | None = None) -> list[list[str]]:
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


def document_rows(
    src: LanceStore, rows_per_batch: int | None = None
) -> Iterator[tuple[list[str], list[dict[str, Any]]]]:
    """Yield ``(doc_ids, rows)`` per :func:`document_batches` batch: every row of those documents
    (all columns, as dicts), ordered by document then chunk id."""
    from citewise.store.lance import _q

    for ids in document_batches(src, rows_per_batch):
        rows = src._scan_table(src._table, None, f"doc_id IN ({', '.join(_q(d) for d in ids)})").to_pylist()
        rows.sort(key=lambda r: (r["doc_id"], r["chunk_id"]))
        yield ids, rows
