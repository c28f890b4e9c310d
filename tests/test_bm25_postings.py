"""BM25 from the NumPy postings (citewise.store.postings): scores, filters, freshness, crash safety.

The postings replaced LanceDB's FTS for ``LanceStore.lexical_search`` (issue 12). These tests
check that nothing else changed: the scores are Okapi BM25 as hand-computed and as LanceDB's FTS
computes them, the same top-k comes back on a fixed corpus, filters run inside the search (no
leak, top-k full), replace and delete are reflected at once (also when another process writes),
and postings saved for one table version are never served for another.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from citewise.core import Document, Filters
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store.lance import BM25_FOLDER, LanceStore
from citewise.store import postings as postings_mod
from citewise.store.postings import Postings

DIM = 32


def _store(path: Path) -> LanceStore:
    return LanceStore(path, DIM)


def _ingest(store: LanceStore, docs) -> None:
    Ingestor(store, HashingEmbedder(DIM), units=None).ingest_documents(docs)


def _doc(doc_id: str, text: str, version: str = "1", groups: tuple[str, ...] = ()) -> Document:
    return Document(
        doc_id,
        f"Title {doc_id}",
        text,
        "s",
        "text",
        version=version,
        groups=groups,
        content_hash=f"hash-{doc_id}-{version}-{len(text)}",
    )


# -- the formula -----------------------------------------------------------------------------------

TINY = ["a b c a", "b c d e f g", "a a a x", "x y z", "c c c c c c c c a", "q r s t u v w a b"]


def _hand_bm25(query: list[str], docs: list[list[str]]) -> dict[int, float]:
    """Okapi BM25, k1 = 1.2, b = 0.75, idf = ln(1 + (N - n + 0.5) / (n + 0.5)), per query token."""
    n_docs = len(docs)
    avgdl = sum(map(len, docs)) / n_docs
    out = {}
    for i, d in enumerate(docs):
        s = 0.0
        for term in query:
            tf = d.count(term)
            if tf:
                n = sum(term in other for other in docs)
                idf = math.log(1 + (n_docs - n + 0.5) / (n + 0.5))
                s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(d) / avgdl))
        if s:
            out[i] = s
    return out


def _tiny_postings() -> Postings:
    table = pa.table(
        {
            "chunk_id": [f"c{i}" for i in range(len(TINY))],
            "doc_id": [f"d{i}" for i in range(len(TINY))],
            "title": ["t"] * len(TINY),
            "lexical": TINY,
            "_rowid": pa.array(range(100, 100 + len(TINY)), pa.uint64()),
        }
    )
    return Postings.build(7, table)


def test_scores_equal_hand_computed_bm25():
    p = _tiny_postings()
    # a by hand: N=6, n=4, idf=ln(1+2.5/4.5)=0.44183; doc 2 ("a a a x", dl 4, avgdl 5.5):
    # 0.44183 * 3 * 2.2 / (3 + 1.2 * (0.25 + 0.75 * 4 / 5.5)) = 0.74444
    assert p.top(["a"], 1, None)[0][0] == "c2"
    assert p.top(["a"], 1, None)[0][3] == pytest.approx(0.74444, abs=1e-5)
    docs = [d.split() for d in TINY]
    for q in (["a"], ["a", "b"], ["a", "a"], ["c", "x"], ["z", "nothing"], ["q", "b", "a"]):
        want = _hand_bm25(q, docs)
        got = {int(c[1:]): s for c, _, _, s in p.top(q, 10, None)}
        assert got.keys() == want.keys()
        for i in want:
            assert got[i] == pytest.approx(want[i], rel=1e-6)


def test_long_tokens_are_dropped_as_lancedb_drops_them():
    """LanceDB (max_token_length=64) indexes tokens of up to 63 UTF-8 bytes and leaves longer
    ones out of the row length too (measured on LanceDB 0.40)."""
    table = pa.table(
        {
            "chunk_id": ["c0", "c1", "c2", "c3"],
            "doc_id": ["d"] * 4,
            "title": [""] * 4,
            "lexical": ["a" * 63 + " x", "b" * 64 + " x", "x", "\u00e9" * 32 + " x"],
            "_rowid": pa.array([0, 1, 2, 3], pa.uint64()),
        }
    )
    p = Postings.build(1, table)
    assert [h[0] for h in p.top(["a" * 63], 5, None)] == ["c0"]
    assert p.top(["b" * 64], 5, None) == [] and p.top(["\u00e9" * 32], 5, None) == []  # 64 bytes
    scores = {c: s for c, _, _, s in p.top(["x"], 5, None)}
    assert scores["c1"] == scores["c2"] == scores["c3"] > scores["c0"]  # length 1 vs 2


def test_ties_break_by_chunk_id_and_k_cuts_after_the_tie_break():
    table = pa.table(
        {
            "chunk_id": ["c3", "c1", "c2", "c0"],
            "doc_id": ["d"] * 4,
            "title": [""] * 4,
            "lexical": ["w", "w", "w", "v"],
            "_rowid": pa.array([9, 3, 5, 1], pa.uint64()),
        }
    )
    p = Postings.build(1, table)
    assert [h[0] for h in p.top(["w"], 2, None)] == ["c1", "c2"]
    mask = p.mask_of(np.array([9, 5], dtype=np.uint64))
    assert [h[0] for h in p.top(["w"], 5, mask)] == ["c2", "c3"]


# -- against LanceDB's FTS on a fixed corpus --------------------------------------------------------


def _corpus(n: int, seed: int) -> list[Document]:
    """``n`` documents of random words; the first 1% (at least 2) readable by group ``rare`` only."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)] + ["E-1004", "MT103", "v4.5"]
    rare = max(2, n // 100)
    return [
        _doc(
            f"d{i:03d}",
            " ".join(rng.choice(words) for _ in range(rng.randrange(5, 80))),
            groups=("rare",) if i < rare else (),
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    """200 documents: the first 2 (1%) in group ``rare``, the rest public."""
    store = _store(tmp_path_factory.mktemp("fixed"))
    _ingest(store, _corpus(200, 5))
    return store


QUERIES = [[f"w{i}", f"w{(i * 7) % 300}", "w1"] for i in range(0, 300, 9)] + [["e-1004"], ["mt103", "w5"], ["absent"]]


def test_same_top10_and_scores_as_lancedb_fts(fixed):
    for f in (None, Filters(groups=("public",)), Filters(groups=("public", "rare"))):
        for q in QUERIES:
            got = fixed.lexical_search(q, 10, f)
            want = fixed.fts_search(q, 10, f)
            assert [h.chunk_id for h in got] == [h.chunk_id for h in want], q
            assert [h.score for h in got] == pytest.approx([h.score for h in want], rel=1e-5)


def test_restricted_filter_has_no_leak_and_a_full_top_k(fixed):
    rare = Filters(groups=("rare",))
    hits = fixed.lexical_search([f"w{i}" for i in range(300)], 10, rare)
    assert sorted({h.doc_id for h in hits}) == ["d000", "d001"]  # only the 1% group's documents
    assert len(hits) == len(fixed.fts_search([f"w{i}" for i in range(300)], 10, rare)) == 2
    public = fixed.lexical_search([f"w{i}" for i in range(300)], 50, Filters(groups=("public",)))
    assert len(public) == 50 and not {"d000", "d001"} & {h.doc_id for h in public}
    assert fixed.lexical_search(["w1"], 10, Filters(groups=())) == []


def test_version_and_doc_filters_run_inside_the_search(fixed):
    only = Filters(groups=("public",), doc_ids=("d010", "d011", "d012"))
    hits = fixed.lexical_search([f"w{i}" for i in range(300)], 10, only)
    assert {h.doc_id for h in hits} == {"d010", "d011", "d012"}
    assert fixed.lexical_search(["w1"], 10, Filters(groups=("public",), version="9")) == []


# -- freshness -------------------------------------------------------------------------------------


def test_replace_and_delete_are_reflected_at_once(tmp_path):
    store = _store(tmp_path / "s")
    _ingest(store, [_doc("a", "alpha common"), _doc("b", "beta common")])
    assert [h.doc_id for h in store.lexical_search(["alpha"], 5)] == ["a"]
    _ingest(store, [_doc("a", "gamma common", "2")])
    assert store.lexical_search(["alpha"], 5) == []
    assert [h.doc_id for h in store.lexical_search(["gamma"], 5)] == ["a"]
    store.delete(["b"])  # no refresh: the next query still sees the delete
    assert store.lexical_search(["beta"], 5) == []
    assert [h.doc_id for h in store.lexical_search(["common"], 5)] == ["a"]


WRITER = """
import sys
from citewise.core import Document
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.store.lance import LanceStore
docs = [Document(d, d, t, "s", "text", "h-" + t) for d, t in (a.split("=", 1) for a in sys.argv[2:])]
Ingestor(LanceStore(sys.argv[1], 32), HashingEmbedder(32), units=None).ingest_documents(docs)
"""


def test_long_lived_store_sees_commits_of_another_process(tmp_path):
    path = tmp_path / "s"
    reader = _store(path)
    _ingest(reader, [_doc("a", "alpha")])
    assert [h.doc_id for h in reader.lexical_search(["alpha"], 5)] == ["a"]
    for i in range(3):  # quick successive commits by another process, each seen by the next query
        subprocess.run(
            [sys.executable, "-c", WRITER, str(path), f"a=alpha round{i}", f"n{i}=fresh{i} words"],
            check=True,
            timeout=120,
        )
        assert [h.doc_id for h in reader.lexical_search([f"fresh{i}"], 5)] == [f"n{i}"]
        assert [h.doc_id for h in reader.lexical_search([f"round{i}"], 5)] == ["a"]
        if i:
            assert reader.lexical_search([f"round{i - 1}"], 5) == []


# -- crash safety of the derived postings ---------------------------------------------------------


def test_postings_are_saved_per_version_and_others_pruned(tmp_path):
    store = _store(tmp_path / "s")
    _ingest(store, [_doc("a", "alpha")])
    v1 = store._table.version
    assert [p.name for p in (store.bm25_root).iterdir()] == [f"v{v1}"]
    _ingest(store, [_doc("b", "beta")])
    assert [p.name for p in (store.bm25_root).iterdir()] == [f"v{store._table.version}"]
    assert store.bm25_root == tmp_path / "s" / BM25_FOLDER


def test_postings_of_another_version_are_never_served(tmp_path):
    """A process killed after a Lance commit but before its postings were saved leaves only an
    older version's folder (or none): a reader builds the current version's from the table."""
    path = tmp_path / "s"
    store = _store(path)
    _ingest(store, [_doc("a", "alpha")])
    old = next(store.bm25_root.iterdir())
    keep = tmp_path / "old-postings"
    old.rename(keep)
    store._table.delete("doc_id = 'a'")  # a commit with no postings saved for it
    _ingest_no_refresh = Ingestor(store, HashingEmbedder(DIM), units=None)
    _ingest_no_refresh._refresh = lambda: None  # killed before the index upkeep
    _ingest_no_refresh.ingest_documents([_doc("b", "beta")])
    keep.rename(old)  # the stale folder is back on disk, under its own (old) version
    fresh = _store(path)
    assert fresh.lexical_search(["alpha"], 5) == []
    assert [h.doc_id for h in fresh.lexical_search(["beta"], 5)] == ["b"]
    assert (store.bm25_root / f"v{fresh._table.version}").is_dir()  # built and saved by the reader


def test_a_damaged_or_partial_postings_folder_is_rebuilt(tmp_path):
    path = tmp_path / "s"
    store = _store(path)
    _ingest(store, [_doc("a", "alpha"), _doc("b", "beta")])
    folder = store.bm25_root / f"v{store._table.version}"
    (folder / "rows.npy").write_bytes(b"not numpy")
    (store.bm25_root / "tmp-v99-x").mkdir()  # a save killed half-way
    assert [h.doc_id for h in _store(path).lexical_search(["beta"], 5)] == ["b"]
    (folder / "meta.json").unlink()
    assert [h.doc_id for h in _store(path).lexical_search(["alpha"], 5)] == ["a"]


@pytest.mark.parametrize("damage", ["empty", "short"])
def test_emptied_or_cut_postings_files_are_rebuilt(tmp_path, damage):
    """Empty .npy files (a full disk) made numpy raise EOFError, which Click reported as a bare
    "aborted" for every search, dense too; arrays cut short with a valid header were read as
    postings. Both are now unreadable postings, built again from the table."""
    path = tmp_path / "s"
    store = _store(path)
    _ingest(store, [_doc("a", "alpha"), _doc("b", "beta gamma")])
    folder = store.bm25_root / f"v{store._table.version}"
    for f in folder.glob("*.npy"):
        if damage == "empty":
            f.write_bytes(b"")
        elif f.name == "rows.npy":
            np.save(f, np.load(f)[:1])
    assert Postings.load(store.bm25_root, store._table.version) is None
    assert [h.doc_id for h in _store(path).lexical_search(["gamma"], 5)] == ["b"]


def test_exact_dense_on_the_derived_vectors_equals_lancedb_exact(fixed):
    """Below the ANN threshold dense search runs in NumPy over the vectors kept with the
    postings; it returns what LanceDB's brute force returns (same top-10, same cosines)."""
    queries = HashingEmbedder(DIM).embed([f"w{i} w{i + 1} E-1004" for i in range(0, 300, 25)])
    p = fixed.postings()
    assert p.vectors is not None and p.vectors.shape == (p.n, DIM)
    for f in (
        Filters(groups=("public",)),
        Filters(groups=("rare",)),
        Filters(groups=("public",), doc_ids=("d005", "d006")),
    ):
        ours = [fixed.vector_search(q, 10, f) for q in queries]
        assert fixed.last_vector_path == "exact"
        p.vectors, kept = None, p.vectors  # without them the store asks LanceDB (bypassing no index)
        try:
            theirs = [fixed.vector_search(q, 10, f) for q in queries]
        finally:
            p.vectors = kept
        for a, b in zip(ours, theirs):
            assert [h.chunk_id for h in a] == [h.chunk_id for h in b], (
                [(h.chunk_id, h.score) for h in a],
                [(h.chunk_id, h.score) for h in b],
            )
            assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-5)
        if f.groups == ("rare",):
            assert {h.doc_id for h in ours[0]} == {"d000", "d001"}  # no leak; all the group's chunks


def test_batched_build_is_identical_for_every_batch_size():
    """Postings.build tokenises the rows in batches of rows and of text bytes (memory, issues 12
    and 37): the vocabulary, postings and weights must not depend on the batch size (empty, null
    and over-long rows included; a byte budget below one row still takes that row)."""
    rng = random.Random(5)
    words = [f"w{i}" for i in range(60)] + ["\u00e9t\u00e9", "x" * 63, "y" * 64]
    lex = [
        " ".join(rng.choice(words[: rng.randrange(1, len(words))]) for _ in range(rng.randrange(0, 30)))
        for _ in range(97)
    ]
    lex[3], lex[40] = None, ""
    n = len(lex)
    table = pa.table(
        {
            "chunk_id": [f"c{i:03d}" for i in range(n)],
            "doc_id": ["d"] * n,
            "title": [""] * n,
            "lexical": pa.array(lex, pa.string()),
            "_rowid": pa.array(range(n), pa.uint64()),
        }
    )
    ref = Postings.build(1, table, batch_rows=n)
    assert ref.vocab.tolist()[:3] == [b"w0", b"w1", b"w10"] and b"y" * 64 not in ref.vocab.tolist()
    for size, nbytes in (
        (1, None),
        (7, None),
        (32, None),
        (96, None),
        (1000, None),
        (1000, 1),
        (1000, 50),
        (20, 200),
        (1000, 10**9),
    ):
        p = Postings.build(1, table, batch_rows=size, batch_bytes=nbytes)
        for name in ("vocab", "indptr", "rows", "weights", "rowids", "dl"):
            a, b = getattr(p, name), getattr(ref, name)
            assert a.dtype == b.dtype and np.array_equal(a, b), (size, nbytes, name)


# -- incremental update (issue 12: a one-document re-ingest must not rebuild the postings) -------

ARRAYS = ("vocab", "indptr", "rows", "weights", "rowids", "tf", "dl")


def _assert_identical(p: Postings, q: Postings) -> None:
    assert p.version == q.version
    for name in ARRAYS:
        a, b = getattr(p, name), getattr(q, name)
        assert a is not None and b is not None, name
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert p.ids.equals(q.ids)
    assert (p.vectors is None) == (q.vectors is None)
    if p.vectors is not None:
        assert np.array_equal(p.vectors, q.vectors)


def _df(p: Postings, term: str) -> int:
    i = int(np.searchsorted(p.vocab, term.encode()))
    return int(p.indptr[i + 1] - p.indptr[i]) if i < len(p.vocab) and p.vocab[i] == term.encode() else 0


@pytest.fixture
def count_builds(monkeypatch):
    """Counts full builds (scans of the whole table) made by any LanceStore."""
    calls = []
    real = LanceStore._build_postings

    def counted(self):
        calls.append(self._table.version)
        return real(self)

    monkeypatch.setattr(LanceStore, "_build_postings", counted)
    return calls, real


def test_incremental_update_equals_a_full_rebuild_with_hand_checked_frequencies(tmp_path, count_builds):
    builds, full_build = count_builds
    store = _store(tmp_path / "s")
    _ingest(
        store,
        [
            _doc("a", "alpha common shared"),
            _doc("b", "bravo common"),
            _doc("c", "gamma shared"),
            _doc("d", "delta common shared"),
        ],
    )
    assert len(builds) == 1  # a new table: built from a scan
    p0 = store.postings()
    # analyzed: "titl alpha common share", ... (the title "Title a" gives "titl"; "a" is a stop word)
    assert (_df(p0, "common"), _df(p0, "share"), _df(p0, "gamma"), _df(p0, "titl")) == (3, 3, 1, 4)
    _ingest(store, [_doc("b", "fresh common fresh", "2"), _doc("e", "epsilon fresh shared")])  # replace + add
    assert store.delete(["c"]) == 1
    store.refresh_indexes()
    assert len(builds) == 1, "the two later versions were built from a scan, not updated"
    p = store.postings()
    assert p.version == store._table.version and p.tf is not None
    # rows now a, b', d, e: common in a b' d; share in a d e; fresh in b' (twice) and e; gamma and
    # bravo gone from the vocabulary with their rows
    assert (_df(p, "common"), _df(p, "share"), _df(p, "fresh"), _df(p, "titl")) == (3, 3, 2, 4)
    assert _df(p, "gamma") == 0 and _df(p, "bravo") == 0 and b"gamma" not in p.vocab.tolist()
    i = int(np.searchsorted(p.vocab, b"fresh"))
    assert sorted(p.tf[p.indptr[i] : p.indptr[i + 1]].tolist()) == [1, 2]
    full = full_build(store)
    _assert_identical(p, full)
    _assert_identical(Postings.load(store.bm25_root, p.version), full)  # as saved
    for q in (["fresh"], ["common", "share"], ["alpha", "delta", "epsilon"], ["titl"]):
        assert p.top(q, 10, None) == full.top(q, 10, None)
    assert [h.doc_id for h in store.lexical_search(["fresh"], 10)] == ["b", "e"]  # tf 2 beats tf 1
    assert store.lexical_search(["gamma"], 10) == [] and store.lexical_search(["bravo"], 10) == []


def test_incremental_updates_over_random_rounds_equal_full_rebuilds(tmp_path, count_builds):
    """Several rounds of random adds, replaces (other chunk counts too) and deletes: after each,
    the updated postings equal a full build, and the BM25 top-10 of fixed queries are the same."""
    builds, full_build = count_builds
    rng = random.Random(12)
    words = [f"w{i}" for i in range(80)] + ["E-1004", "MT103", "\u00e9t\u00e9"]

    def text():
        return "\n\n".join(
            f"## Part {s}\n" + " ".join(rng.choice(words) for _ in range(rng.randrange(5, 60)))
            for s in range(rng.randrange(1, 4))
        )

    store = _store(tmp_path / "s")
    docs = {f"d{i:02d}": 1 for i in range(24)}
    _ingest(store, [_doc(d, text()) for d in docs])
    queries = [[rng.choice(words) for _ in range(rng.randrange(1, 4))] for _ in range(12)]
    for round_ in range(4):
        ids = sorted(docs)
        replaced = rng.sample(ids, 4)
        for d in replaced:
            docs[d] += 1
        added = [f"n{round_}{j}" for j in range(3)]
        docs.update({d: 1 for d in added})
        _ingest(store, [_doc(d, text(), str(docs[d])) for d in replaced + added])
        gone = rng.sample([d for d in ids if d not in replaced], 2)
        store.delete(gone)
        for d in gone:
            del docs[d]
        store.refresh_indexes()
        p, full = store.postings(), full_build(store)
        _assert_identical(p, full)
        for q in queries:
            assert p.top(q, 10, None) == full.top(q, 10, None)
    assert len(builds) == 1  # the first ingest; every later version was updated


def test_update_equals_build_when_compaction_reorders_rows(monkeypatch):
    """Postings.update on its own: the rows of the new version in another order than the old
    (the general path, a sort by term and row), a replaced document with more chunks, a
    deleted one, an added one, empty and over-long tokens."""
    rng = random.Random(3)
    words = [f"w{i}" for i in range(40)] + ["x" * 63, "y" * 64]

    def lex():
        return " ".join(rng.choice(words) for _ in range(rng.randrange(0, 25)))

    old = [(f"d{i // 3}#c{i % 3}", f"d{i // 3}", lex()) for i in range(30)]
    table = pa.table(
        {
            "chunk_id": [r[0] for r in old],
            "doc_id": [r[1] for r in old],
            "title": ["t"] * 30,
            "lexical": [r[2] for r in old],
            "_rowid": pa.array(range(30), pa.uint64()),
        }
    )
    prev = Postings.build(1, table)
    changed = {"d2", "d5", "d7", "d99"}  # d2, d5 replaced (d5 by 5 chunks), d7 deleted, d99 new
    new = [r for r in old if r[1] not in changed]
    new += [(f"{d}#n{j}", d, lex() + " brandnew") for d, k in (("d2", 2), ("d5", 5), ("d99", 1)) for j in range(k)]
    for order in (list(range(len(new))), rng.sample(range(len(new)), len(new))):
        rows = [new[i] for i in order]
        t = pa.table(
            {
                "chunk_id": [r[0] for r in rows],
                "doc_id": [r[1] for r in rows],
                "title": ["t"] * len(rows),
                "lexical": [r[2] for r in rows],
                "_rowid": pa.array(range(500, 500 + len(rows)), pa.uint64()),
            }
        )
        fresh = t.filter(pa.array([r[1] in changed for r in rows])).select(["_rowid", "lexical"])
        got = Postings.update(
            prev, 2, t.drop_columns(["lexical"]), fresh.take(pa.array(range(fresh.num_rows - 1, -1, -1))), changed
        )
        _assert_identical(got, Postings.build(2, t))
        for block in (1, 7, 64):  # the old postings are copied block by block
            monkeypatch.setattr(postings_mod, "WEIGHT_BLOCK", block)
            _assert_identical(
                Postings.update(prev, 2, t.drop_columns(["lexical"]), fresh, changed), Postings.build(2, t)
            )
        monkeypatch.undo()
    # a term 70,000 times in one row: counts above 65,535 are stored as int32, and back to uint16
    # once that row is replaced
    big = t.set_column(3, "lexical", pa.array([r[2] + (" w1" * 70_000 if r[0] == "d1#c0" else "") for r in rows]))
    prev_big = Postings.build(1, big)
    already = next(r[2] for r in rows if r[0] == "d1#c0").split().count("w1")
    assert prev_big.tf.dtype == np.int32 and prev_big.tf.max() == 70_000 + already
    again = t.filter(pa.array([r[1] in ("d1", "d2") for r in rows])).select(["_rowid", "lexical"])
    got = Postings.update(prev_big, 2, t.drop_columns(["lexical"]), again, {"d1", "d2"})
    _assert_identical(got, Postings.build(2, t))
    assert got.tf.dtype == np.uint16
    # rows outside the changed documents that do not match the old postings: no update
    t2 = t.set_column(2, "title", pa.array(["other"] * t.num_rows))
    assert Postings.update(prev, 2, t2.drop_columns(["lexical"]), fresh, changed) is None
    assert Postings.update(prev, 2, t.drop_columns(["lexical"]), fresh, changed - {"d7"}) is None
    prev.tf = None  # saved before term frequencies were kept
    assert Postings.update(prev, 2, t.drop_columns(["lexical"]), fresh, changed) is None


def test_full_rebuild_when_the_previous_postings_lack_frequencies_or_another_process_wrote(tmp_path, count_builds):
    builds, full_build = count_builds
    path = tmp_path / "s"
    _ingest(_store(path), [_doc("a", "alpha common"), _doc("b", "beta common")])
    assert len(builds) == 1
    # a new process: the previous postings come from disk
    store = _store(path)
    _ingest(store, [_doc("a", "gamma common", "2")])
    assert len(builds) == 1
    # postings saved before term frequencies were kept: updated would be wrong, so built
    (store.bm25_root / f"v{store._table.version}" / "tf.npy").unlink()
    store = _store(path)
    _ingest(store, [_doc("b", "delta common", "2")])
    assert len(builds) == 2
    _assert_identical(store.postings(), full_build(store))
    # another process replaces a document (same chunk id, so no row count or id tells) between
    # this store's write and its refresh: the change log no longer describes the table, so built
    store = _store(path)
    store.postings()
    w = Ingestor(store, HashingEmbedder(DIM), units=None)
    w._refresh = lambda: None
    w.ingest_documents([_doc("c", "epsilon common")])
    _ingest(_store(path), [_doc("a", "theta common", "3")])
    store.refresh_indexes()
    p = store.postings()
    _assert_identical(p, full_build(store))
    assert [h.doc_id for h in store.lexical_search(["theta"], 5)] == ["a"]
    assert store.lexical_search(["gamma"], 5) == []
    assert [h.doc_id for h in store.lexical_search(["epsilon"], 5)] == ["c"]
