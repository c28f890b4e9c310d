"""Answer-unit vectors stored at ingest (issue 10 item 11).

* an ``ask`` on a fresh Index handle embeds the question once and nothing else, and answers
  exactly as query-time unit embedding does (hashing and MiniLM);
* a new splitter version re-embeds units of unchanged documents without re-embedding chunks, and
  stored vectors of another version, or that do not line up with ``split_units``, are not used;
* replacing or deleting a document replaces or deletes its unit vectors;
* an index built before the unit columns existed still answers and is upgraded by an ingest.
"""

from __future__ import annotations

import numpy as np
import pytest

from citewise.answer.pipeline import Answerer
from citewise.answer.unit_cache import UnitCache
from citewise.answer.units import ANSWER_UNITS, AnswerUnits, split_units
from citewise.demo import sample_dir
from citewise.index import Index
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder

from conftest import write_doc

QUESTIONS = [
    "How long do I have to request a refund on Pro?",
    "What does error E-1004 mean?",
    "Who approves a refund above 10,000 USD?",
]


class Counting:
    """Embedder wrapper recording every call's texts."""

    def __init__(self, inner):
        self.inner, self.dim, self.name = inner, inner.dim, inner.name
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def hashing_index(tmp_path_factory):
    path = tmp_path_factory.mktemp("units-idx")
    idx = Index.open(path, embedder="hashing")
    report = idx.ingest(sample_dir() / "corpus")
    assert not report.errors and report.units_embedded > report.chunks_embedded > 0
    return path


def _all_chunks(store):
    ids = [c for rows in store.chunk_versions().values() for c, _, _ in rows]
    return list(store.get_chunks(ids).values())


class QueryTimeUnits(UnitCache):
    """A unit cache that embeds every unit at query time, also for the deeper-chunk stage's
    best-unit cosines (which the real cache reads from stored vectors only)."""

    def __init__(self, embedder, store):
        super().__init__(embedder)
        self._chunks_of = store

    def best_cosines(self, chunk_ids, qvec):
        chunks = list(self._chunks_of.get_chunks(list(chunk_ids)).values())
        q = np.asarray(qvec, dtype=np.float32)
        return {c.chunk_id: float((v @ q).max()) for c, (u, v) in zip(chunks, self.get(chunks)) if len(u)}


def _query_time(idx: Index) -> Answerer:
    """An answerer that embeds units at query time (the behaviour before stored vectors)."""
    return Answerer(
        idx.retriever("shipped"),
        idx.store,
        idx.embedder,
        threshold=idx.abstain_threshold,
        units=QueryTimeUnits(idx.embedder, idx.store),
    )


def _same_answer(a, b) -> None:
    assert (a.text, a.outcome, a.abstain_reason) == (b.text, b.outcome, b.abstain_reason)
    assert [c.doc_id for c in a.citations] == [c.doc_id for c in b.citations]
    assert a.best_score == pytest.approx(b.best_score, abs=1e-5)


def test_ask_on_fresh_handle_embeds_only_the_question(hashing_index):
    idx = Index.open(hashing_index)
    idx.embedder = Counting(idx.embedder)
    before = _query_time(Index.open(hashing_index))
    answered = 0
    for q in QUESTIONS:
        idx.embedder.calls.clear()
        got = idx.ask(q)
        assert idx.embedder.calls == [[q]], "the question once, no unit texts"
        _same_answer(got, before.answer(q))
        answered += got.outcome != "abstained"
    assert answered >= 2
    assert idx._units.embedded_chunks == 0 and idx._units.stored_hits > 0


def test_minilm_answers_identical_with_stored_unit_vectors(sample_index):
    fresh = Index.open(sample_index.path)
    fresh.embedder = Counting(fresh.embedder)
    before = _query_time(sample_index)
    for q in QUESTIONS:
        fresh.embedder.calls.clear()
        got = fresh.ask(q)
        assert fresh.embedder.calls == [[q]]
        _same_answer(got, before.answer(q))
    assert fresh._units.embedded_chunks == 0


class Bumped(AnswerUnits):
    version = "test-bumped"


class Splits(AnswerUnits):
    """A new splitter version that also splits differently: one unit per chunk, its whole text."""

    version = "test-whole"

    @staticmethod
    def embedding_units(title, text):
        return [(0, len(text), f"{title}: {text}")]


def test_new_splitter_version_makes_new_chunk_means_in_units_mean(tmp_path):
    idx = Index.open(tmp_path / "i", embedder="hashing", chunk_vectors="units-mean")
    first = idx.ingest(sample_dir() / "corpus")
    ids = [c.chunk_id for c in _all_chunks(idx.store)]
    emb = Counting(idx.embedder)
    report = Ingestor(idx.store, emb, units=Splits(), chunk_vectors="units-mean").ingest_folder(sample_dir() / "corpus")
    assert report.units_refreshed == first.added and report.units_embedded == len(ids)
    # only unit texts were embedded: each chunk's vector is the mean of its (one) new unit
    assert sum(len(c) for c in emb.calls) == len(ids)
    units, after = idx.store.get_units(ids), idx.store.get_vectors(ids)
    for c in ids:
        assert units[c].version == "test-whole"
        assert np.allclose(after[c], units[c].vectors[0] / np.linalg.norm(units[c].vectors[0]), atol=1e-6)


class DropsLast(AnswerUnits):
    """Same version and key as the real splitter, but one unit short: must not be trusted."""

    @staticmethod
    def embedding_units(title, text):
        return AnswerUnits.embedding_units(title, text)[:-1]


def test_new_splitter_version_reembeds_units_only(tmp_path):
    idx = Index.open(tmp_path / "i", embedder="hashing")
    first = idx.ingest(sample_dir() / "corpus")
    chunks = _all_chunks(idx.store)
    ids = [c.chunk_id for c in chunks]
    vectors = idx.store.get_vectors(ids)
    emb = Counting(idx.embedder)
    report = Ingestor(idx.store, emb, units=Bumped()).ingest_folder(sample_dir() / "corpus")
    assert report.units_refreshed == first.added and report.unchanged == 0
    assert report.chunks_embedded == 0 and report.units_embedded == first.units_embedded
    assert not report.errors and report.updated == report.added == report.metadata_updated == 0
    assert {u.version for u in idx.store.get_units(ids).values()} == {"test-bumped"}
    assert {d.units_version for d in idx.store.documents().values()} == {"test-bumped"}
    after = idx.store.get_vectors(ids)
    assert all(np.array_equal(vectors[c], after[c]) for c in ids), "chunk vectors were reused"
    # query time: stored units of another splitter version are not used
    cache = UnitCache(idx.embedder, store=idx.store)
    cache.warm(chunks)
    assert cache.stored_hits == 0 and cache.embedded_chunks == len(chunks)
    # and the next ingest with the same version changes nothing
    again = Ingestor(idx.store, emb, units=Bumped()).ingest_folder(sample_dir() / "corpus")
    assert again.unchanged == first.added and again.units_refreshed == 0 and again.units_embedded == 0


def test_units_that_do_not_line_up_are_embedded_at_query_time(tmp_path):
    root = tmp_path / "docs"
    write_doc(
        root,
        "a.md",
        "Refunds",
        "Refunds take five days. Ask the owner first.\n\n- Step one is here.\n- Step two is there.",
    )
    write_doc(root, "b.md", "Limits", "| Plan | Limit |\n|---|---|\n| Pro | 10 |\n| Team | 20 |")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    Ingestor(idx.store, idx.embedder, units=DropsLast()).ingest_folder(root)
    chunks = _all_chunks(idx.store)
    cache = UnitCache(idx.embedder, store=idx.store)
    got = cache.get(chunks)
    assert cache.stored_hits == 0 and cache.embedded_chunks == len(chunks)
    want = UnitCache(idx.embedder).get(chunks)
    for (units, vecs), (units2, vecs2) in zip(got, want):
        assert units == units2 and np.allclose(vecs, vecs2)
    # with the real splitter the stored vectors line up and are used
    Ingestor(idx.store, idx.embedder, units=Bumped()).ingest_folder(root)
    Ingestor(idx.store, idx.embedder, units=ANSWER_UNITS).ingest_folder(root)
    cache = UnitCache(idx.embedder, store=idx.store)
    got = cache.get(chunks)
    assert cache.stored_hits == len(chunks) and cache.embedded_chunks == 0
    for (units, vecs), (units2, vecs2) in zip(got, want):
        assert units == units2 and np.allclose(vecs, vecs2, atol=1e-6)


def test_replace_and_delete_take_unit_vectors_along(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "a.md", "Alpha", "## One\nAlpha text is here. It has two sentences.")
    b = write_doc(root, "b.md", "Beta", "Beta text is short but real.")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    idx.ingest(root)
    old_a = {c: k for c, k in ((c.chunk_id, c) for c in _all_chunks(idx.store)) if c.startswith("a#")}
    write_doc(root, "a.md", "Alpha", "## Two\nAlpha changed completely. Now three. And more words here.")
    b.unlink()
    report = idx.ingest(root)
    assert report.updated == 1 and report.deleted == 1
    chunks = _all_chunks(idx.store)
    assert {c.doc_id for c in chunks} == {"a"}
    units = idx.store.get_units([c.chunk_id for c in chunks] + list(old_a) + ["b", "b#beta"])
    assert set(units) == {c.chunk_id for c in chunks}
    for c in chunks:
        u = units[c.chunk_id]
        assert u.key == ANSWER_UNITS.key(c.title, c.text)
        assert list(u.spans) == [(x.start, x.end) for x in split_units(c.text)]


def test_index_without_unit_columns_answers_and_is_upgraded(tmp_path):
    idx = Index.open(tmp_path / "i", embedder="hashing")
    idx.ingest(sample_dir() / "corpus")
    idx.store._table.drop_columns(["units_version", "units_key", "unit_spans", "unit_vectors"])
    old = Index.open(tmp_path / "i")
    assert old.store.get_units(["help/refunds/refunds-pro#refunds-on-pro"]) == {}
    got = old.ask(QUESTIONS[0])
    assert got.outcome != "abstained" and old._units.embedded_chunks > 0
    report = old.ingest(sample_dir() / "corpus")
    # units-mean (the default): each chunk's vector is made anew as the mean of its new units; no
    # chunk text is embedded (every sample chunk has units)
    assert report.chunks_embedded == old.store.stats()["chunks"] and not report.errors
    assert report.units_embedded > report.chunks_embedded
    assert report.units_refreshed == len(old.store.documents())
    fresh = Index.open(tmp_path / "i")
    fresh.embedder = Counting(fresh.embedder)
    again = fresh.ask(QUESTIONS[0])
    assert fresh.embedder.calls == [[QUESTIONS[0]]]
    _same_answer(again, got)


def test_store_rejects_unit_vectors_that_do_not_match_their_spans(tmp_path):
    from citewise.core import Document
    from citewise.store.base import DocumentUpdate, UnitVectors
    from citewise.store.lance import LanceStore
    from citewise.text.chunker import Chunker

    doc = Document(
        doc_id="d",
        title="D",
        text="# D\n\nSome text here. More text.",
        source="d.md",
        format="markdown",
        content_hash="h",
    )
    chunks = Chunker().chunk(doc.doc_id, doc.title, doc.text)
    emb = HashingEmbedder(16)
    store = LanceStore(tmp_path / "s", 16)
    bad = [UnitVectors("1", "k", ((0, 1), (1, 2)), np.zeros((1, 16), np.float32)) for _ in chunks]
    with pytest.raises(ValueError, match="unit spans"):
        store.upsert([DocumentUpdate(doc, chunks, emb.embed([c.indexed_text for c in chunks]), ("public",), "", bad)])


def test_permission_change_reuses_unit_vectors(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "hr/leave.md", "Leave", "Leave requests go to your manager. They answer within two days.")
    write_doc(root, "pub.md", "Public", "Everyone may read this page. It is short.")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    first = idx.ingest(root)
    policy = tmp_path / "policy.yaml"
    policy.write_text('rules:\n  - glob: "hr/**"\n    groups: [hr]\n')
    report = idx.ingest(root, policy=policy)
    assert report.metadata_updated == 1 and report.units_refreshed == 0
    assert report.chunks_embedded == 0 and report.units_embedded == 0 and first.units_embedded > 0
    chunks = _all_chunks(idx.store)
    assert {c.groups for c in chunks if c.doc_id == "hr/leave"} == {("hr",)}
    cache = UnitCache(idx.embedder, store=idx.store)
    cache.warm(chunks)
    assert cache.stored_hits == len(chunks) and cache.embedded_chunks == 0
