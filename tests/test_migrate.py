"""``citewise index migrate`` reads the source index in batches of whole documents
(:func:`citewise.store.migrate.document_batches`), not the whole table at once."""

from __future__ import annotations

import numpy as np

from citewise.core import Chunk, Document
from citewise.store.base import DocumentUpdate
from citewise.store.lance import LanceStore
from citewise.store.migrate import document_batches

DIM = 8


def _update(doc_id: str, n_chunks: int) -> DocumentUpdate:
    doc = Document(doc_id, doc_id.upper(), "x" * n_chunks, f"s/{doc_id}", "text", f"h-{doc_id}", groups=("public",))
    chunks = [Chunk(f"{doc_id}#{i}", doc_id, (doc.title,), "x", i, i + 1, 1) for i in range(n_chunks)]
    vectors = np.ones((n_chunks, DIM), dtype=np.float32) / np.sqrt(DIM)
    return DocumentUpdate(doc, chunks, vectors, ("public",))


def test_batches_are_whole_documents_in_id_order_of_about_the_row_budget(tmp_path):
    store = LanceStore(tmp_path / "s", DIM)
    # written out of order; chunk rows per document: a 3, b 1, c 2, d 5, e 1
    store.upsert([_update("d", 5), _update("a", 3), _update("e", 1)])
    store.upsert([_update("c", 2), _update("b", 1)])
    # a batch closes at the document that brings it to 4 rows: a+b = 4, c+d = 7, e = 1
    assert document_batches(store, rows_per_batch=4) == [["a", "b"], ["c", "d"], ["e"]]
    assert document_batches(store, rows_per_batch=1) == [["a"], ["b"], ["c"], ["d"], ["e"]]
    assert document_batches(store, rows_per_batch=100) == [["a", "b", "c", "d", "e"]]
    assert document_batches(LanceStore(tmp_path / "empty", DIM)) == []
