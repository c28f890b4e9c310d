"""The LanceDB store streams a commit's rows in bounded record batches (issue 37).

``LanceStore.upsert`` used to build all of a commit's rows as one Arrow table: a 50 MB document's
~9,500 chunks were held as Python lists and Arrow arrays together. It now streams batches of at
most ``WRITE_BATCH_ROWS`` rows / ``WRITE_BATCH_BYTES`` bytes of text. These tests pin that the
stored rows (every column but the write time), the search results and the one-commit-per-upsert
rule do not depend on the batch bounds.
"""

from __future__ import annotations

import numpy as np
import pytest

from citewise.answer.units import ANSWER_UNITS
from citewise.core import Document
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store.lance import LanceStore
from citewise.store.lance import writes as writes_mod

DIM = 32
WORDS = "refund window invoice ledger export webhook currency approval limit token archive".split()


def _docs() -> list[Document]:
    rng = np.random.default_rng(3)
    docs = []
    for d in range(4):
        paras = []
        for p in range(6 + d):
            words = [WORDS[i] for i in rng.integers(0, len(WORDS), size=60 + 40 * p)]
            paras.append(f"## Part {p}\n\n" + " ".join(words) + ".")
        text = f"# Doc {d}\n\n" + "\n\n".join(paras)
        docs.append(Document(f"d{d}", f"Doc {d}", text, f"/src/d{d}.md", "md", version="1", content_hash=f"h{d}"))
    return docs


def _ingest(tmp_path, name: str) -> LanceStore:
    store = LanceStore(tmp_path / name, dim=DIM)
    Ingestor(store, HashingEmbedder(dim=DIM), units=ANSWER_UNITS, workers=0).ingest_documents(_docs())
    return store


def _rows(store: LanceStore) -> list[dict]:
    names = [n for n in store._table.schema.names if n != "indexed_at"]
    rows = store._scan(names).to_pylist()
    return sorted(rows, key=lambda r: r["chunk_id"])


def test_batched_write_equals_one_batch(tmp_path, monkeypatch):
    one = _ingest(tmp_path, "one")
    monkeypatch.setattr(writes_mod, "WRITE_BATCH_ROWS", 2)
    rows_small = _ingest(tmp_path, "rows")
    monkeypatch.setattr(writes_mod, "WRITE_BATCH_ROWS", 1024)
    monkeypatch.setattr(writes_mod, "WRITE_BATCH_BYTES", 500)
    bytes_small = _ingest(tmp_path, "bytes")
    want = _rows(one)
    assert len(want) > 8  # several batches at 2 rows, and at 500 bytes (every chunk is larger)
    assert all(len(r["text"]) > 250 for r in want)
    for other in (rows_small, bytes_small):
        got = _rows(other)
        assert [r["chunk_id"] for r in got] == [r["chunk_id"] for r in want]
        for a, b in zip(got, want):
            assert a == b
        for q in (["refund", "window"], ["ledger"], ["archive", "token", "currency"]):
            assert [(h.chunk_id, h.score) for h in other.lexical_search(q, 5)] == [
                (h.chunk_id, h.score) for h in one.lexical_search(q, 5)
            ]
        v = np.asarray(want[3]["vector"], dtype=np.float32)
        assert [(h.chunk_id, h.score) for h in other.vector_search(v, 5)] == [
            (h.chunk_id, h.score) for h in one.vector_search(v, 5)
        ]


def test_streamed_upsert_is_one_commit(tmp_path, monkeypatch):
    """A document replaced in batches of 2 rows: one new table version, old rows gone."""
    from citewise.store.base import DocumentUpdate
    from citewise.text.chunker import Chunker

    monkeypatch.setattr(writes_mod, "WRITE_BATCH_ROWS", 2)
    store = _ingest(tmp_path, "s")
    old = _docs()[1]
    doc = Document("d1", "Doc 1", old.text + "\n\n## Extra\n\nrefund.", old.source, "md", version="2", content_hash="x")
    chunks = Chunker(min_tokens=20, max_tokens=60).chunk(doc.doc_id, doc.title, doc.text)
    assert len(chunks) > 6
    vectors = HashingEmbedder(dim=DIM).embed([c.indexed_text for c in chunks])
    before = store._table.version
    store.upsert([DocumentUpdate(doc, chunks, vectors, ("public",))])
    assert store._table.version == before + 1
    stored = [r for r in _rows(store) if r["doc_id"] == "d1"]
    assert sorted(r["chunk_id"] for r in stored) == sorted(c.chunk_id for c in chunks)
    assert {r["version"] for r in stored} == {"2"}


def test_mismatched_update_writes_nothing(tmp_path):
    from citewise.store.base import DocumentUpdate
    from citewise.text.chunker import Chunker

    store = _ingest(tmp_path, "m")
    before = store._table.version
    doc = Document("d9", "Doc 9", "# Doc 9\n\nsome text here.", "/src/d9.md", "md", version="1", content_hash="h9")
    chunks = Chunker().chunk(doc.doc_id, doc.title, doc.text)
    with pytest.raises(ValueError, match="d9: 1 chunks but 2 vectors"):
        store.upsert([DocumentUpdate(doc, chunks, np.zeros((2, DIM), np.float32), ("public",))])
    assert store._table.version == before
    with pytest.raises(ValueError, match=f"d9: a chunk vector of shape \\(3,\\), the index holds {DIM}-d vectors"):
        store.upsert([DocumentUpdate(doc, chunks, [np.zeros(3, np.float32)], ("public",))])
    assert store._table.version == before


@pytest.mark.parametrize("existing", [False, True])
def test_a_batch_that_fails_mid_stream_raises_its_own_error_and_writes_nothing(tmp_path, monkeypatch, existing):
    """An error raised while the third batch is built reaches the caller as itself (not as
    Arrow's C-stream RuntimeError quoting a traceback); the table keeps its version (or is not
    created)."""
    from citewise.store.base import DocumentUpdate
    from citewise.text import analyzer
    from citewise.text.chunker import Chunker

    store = _ingest(tmp_path, "f") if existing else LanceStore(tmp_path / "f", dim=DIM)
    before = store._table.version if existing else None
    doc = _docs()[3]
    chunks = Chunker(min_tokens=20, max_tokens=60).chunk(doc.doc_id, doc.title, doc.text)
    assert len(chunks) > 6
    vectors = HashingEmbedder(dim=DIM).embed([c.indexed_text for c in chunks])
    calls = []
    real = analyzer.lexical_text

    def failing(text: str) -> str:
        calls.append(text)
        if len(calls) == 5:
            raise ValueError("cannot analyse chunk 5")
        return real(text)

    monkeypatch.setattr(writes_mod, "WRITE_BATCH_ROWS", 2)
    monkeypatch.setattr(analyzer, "lexical_text", failing)
    with pytest.raises(ValueError, match="^cannot analyse chunk 5$"):
        store.upsert([DocumentUpdate(doc, chunks, vectors, ("public",))])
    if existing:
        assert store._table.version == before
    else:
        assert store._table is None
        assert LanceStore(tmp_path / "f", dim=DIM)._table is None  # no committed table to open
