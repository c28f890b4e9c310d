"""Re-ingesting a few documents into a large index reads only what it needs (issue 12).

At 1M chunks a one-document re-ingest spent 40 s and 2 GB turning every row into a Python dict
(``LanceStore.documents``) and 57 s rebuilding the BM25 postings from the whole table. These
tests pin the behaviour of the cheaper paths: ``documents(doc_ids=...)`` equals the full listing
restricted to those ids (by predicate and by scan), the grouped listing keeps the per-document
fields of the row-by-row one, and an ingest asks only for the entries of the documents it brings
while reporting added / updated / unchanged / moved / superseded as before. (The incremental
postings are tested in tests/test_bm25_postings.py.)
"""

from __future__ import annotations


import pytest

from citewise.answer.units import ANSWER_UNITS
from citewise.core import Document
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store import lance as lance_mod
from citewise.store.base import DocumentEntry
from citewise.store.lance import LanceStore

DIM = 32


def _doc(doc_id: str, text: str, version: str = "1", source: str = "s", groups=("public",)) -> Document:
    return Document(
        doc_id,
        f"Title {doc_id}",
        text,
        source,
        "text",
        version=version,
        groups=groups,
        content_hash=f"h-{doc_id}-{version}-{len(text)}",
    )


def _row_by_row(store: LanceStore) -> dict[str, DocumentEntry]:
    """The listing as the code before issue 12's fix computed it: every row a dict, first row wins."""
    tbl = store._scan(
        [
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
            "units_version",
        ]
    )
    out, counts, units = {}, {}, {}
    for r in tbl.to_pylist():
        counts[r["doc_id"]] = counts.get(r["doc_id"], 0) + 1
        out.setdefault(r["doc_id"], r)
        units.setdefault(r["doc_id"], set()).add(r["units_version"] or "")
    return {
        d: DocumentEntry(
            d,
            r["title"],
            r["source"],
            r["content_hash"],
            r["version"],
            r["updated"],
            counts[d],
            r["indexed_at"],
            r["effective"] or "",
            tuple(r["groups"] or ()),
            r["source_changed_at"] or "",
            next(iter(units[d])) if len(units[d]) == 1 else "",
            tuple(r["title_ids"] or ()),
        )
        for d, r in sorted(out.items())
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = LanceStore(tmp_path_factory.mktemp("reingest") / "s", DIM)
    long = "\n\n".join(f"## Part {i}\n" + " ".join(f"w{i}x{j}" for j in range(150)) for i in range(3))  # 3 chunks
    Ingestor(s, HashingEmbedder(DIM), units=ANSWER_UNITS).ingest_documents(
        [_doc("a", long), _doc("b", "beta words", groups=("team", "public")), _doc("c", "gamma")]
    )
    Ingestor(s, HashingEmbedder(DIM), units=None).ingest_documents(
        [_doc("d", "delta one", version="1"), _doc("d", "delta two", version="2"), _doc("e", "x'y quote")]
    )
    return s


def test_grouped_listing_equals_the_row_by_row_one(store):
    docs = store.documents()
    assert docs == _row_by_row(store)
    assert list(docs) == ["a", "b", "c", "d", "d@1", "e"]
    assert docs["a"].chunk_count == 3 and docs["a"].units_version == ANSWER_UNITS.version
    assert docs["d"].units_version == "" and docs["d@1"].version == "1" and docs["b"].groups == ("team", "public")


@pytest.mark.parametrize("by_scan", [False, True])
def test_documents_by_id_equal_the_full_listing_restricted(store, monkeypatch, by_scan):
    if by_scan:  # more ids than the predicate takes: filtered from a scan instead
        monkeypatch.setattr(lance_mod.reads, "DOC_FILTER_MAX", 1)
    full = store.documents()
    for ids in (["a"], ["e", "d@1", "zz", "a"], ["zz"], list(full)):
        assert store.documents(doc_ids=ids) == {d: full[d] for d in sorted(set(ids)) if d in full}
    assert store.documents(doc_ids=[]) == {}


def test_an_ingest_asks_only_for_the_documents_it_brings(tmp_path, monkeypatch):
    s = LanceStore(tmp_path / "s", DIM)
    ingest = Ingestor(s, HashingEmbedder(DIM), units=None)
    src = tmp_path / "a.txt"
    src.write_text("x")
    ingest.ingest_documents(
        [_doc(f"k{i}", f"kept {i}") for i in range(5)] + [_doc("r", "refund 14 days", source=str(src))]
    )
    asked = []
    real = LanceStore.documents

    def spy(self, doc_ids=None):
        asked.append(None if doc_ids is None else set(doc_ids))
        return real(self, doc_ids)

    monkeypatch.setattr(LanceStore, "documents", spy)
    moved = tmp_path / "b.txt"
    moved.write_text("x")
    r = ingest.ingest_documents(
        [
            _doc("k1", "kept 1, changed", "2"),
            _doc("k2", "kept 2"),
            _doc("new", "fresh"),
            _doc("r", "refund 14 days", source=str(moved)),
        ]
    )
    assert asked == [{"k1", "k1@2", "k2", "k2@1", "new", "new@1", "r", "r@1"}]
    assert (r.updated, r.added, r.unchanged, r.moved) == (1, 1, 2, 1)
    # two versions of a stored id: the older is kept as history, looked up by its history id
    asked.clear()
    r = ingest.ingest_documents([_doc("k3", "kept 3 v2", "2"), _doc("k3", "kept 3")])
    assert asked == [{"k3", "k3@1", "k3@2"}]
    assert (r.updated, r.added) == (1, 1) and len(r.superseded) == 1
    docs = real(s)
    assert docs["k3"].version == "2" and docs["k3@1"].version == "1" and docs["r"].source == str(moved)
