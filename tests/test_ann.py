"""Issue 12: dense search through an ANN index above a size threshold, exact below it.

3,000 one-chunk documents whose vectors are drawn (seed 7) from a mixture of 40 Gaussian
clusters in 32 dimensions (noise 0.6 per coordinate; so that near neighbours exist, as with sentence embeddings); every
100th document (30, 1%) is readable by group ``restricted`` only. The same corpus is ingested
twice: with the ANN threshold lowered to 1,000 rows (the IVF index is built, 55 partitions by
LanceDB's default, 8 probed per query, filters leaving < 100 rows visible searched exactly) and with the default threshold (exact search). Ground
truth is a numpy cosine top-10 over the vectors read back from the store.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from citewise.core import Document, Filters, Principal
from citewise.ingest import Ingestor
from citewise.store import lance
from citewise.store.lance import LanceStore

N, DIM, K, CLUSTERS = 3000, 32, 10, 40
RESTRICTED_EVERY = 100


def _vectors() -> np.ndarray:
    rng = np.random.default_rng(7)
    centers = rng.normal(size=(CLUSTERS, DIM))
    x = centers[rng.integers(0, CLUSTERS, N)] + 0.6 * rng.normal(size=(N, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


VECTORS = _vectors()


class TableEmbedder:
    """Embeds a text by the ``vecNNNN`` token it contains: row NNNN of :data:`VECTORS`."""

    dim = DIM
    name = "table-32"

    def embed(self, texts):
        return np.stack([VECTORS[int(re.search(r"vec(\d{4})", t).group(1))] for t in texts])


def _docs() -> list[Document]:
    return [
        Document(
            f"d{i:04d}",
            f"Item {i}",
            f"vec{i:04d} body text",
            f"s/{i}",
            "text",
            f"h{i}",
            groups=("restricted",) if i % RESTRICTED_EVERY == 0 else ("public",),
        )
        for i in range(N)
    ]


def _queries(n: int = 50) -> np.ndarray:
    rng = np.random.default_rng(8)
    q = VECTORS[rng.integers(0, N, n)] + 0.2 * rng.normal(size=(n, DIM)).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def _chunk_id(i: int) -> str:
    return f"d{i:04d}#item-{i}"  # the chunker's id: doc id + slug of the title


def _truth(store: LanceStore, q: np.ndarray, restricted_only: bool = False) -> list[str]:
    """Exact cosine top-k over the stored vectors (numpy), visible rows only."""
    ids = [_chunk_id(i) for i in range(N) if not restricted_only or i % RESTRICTED_EVERY == 0]
    vecs = store.get_vectors(ids)
    mat = np.stack([vecs[c] for c in ids])
    sims = mat @ q
    order = np.lexsort((np.array(ids), -sims))[:K]
    return [ids[i] for i in order]


def _build(path, **kw) -> LanceStore:
    store = LanceStore(path, DIM, **kw)
    Ingestor(store, TableEmbedder(), batch_docs=1000).ingest_documents(_docs())
    return store


@pytest.fixture(scope="module")
def ann_store(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("ann") / "s", ann_min_rows=1000, ann_nprobes=8, ann_exact_below=100)


@pytest.fixture(scope="module")
def exact_store(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("exact") / "s")


PUBLIC = Principal("anon", ("public",))


def test_above_the_threshold_the_ann_index_is_built_and_used(ann_store):
    assert ann_store.stats()["chunks"] == N
    assert ann_store.has_ann_index()
    assert [i.name for i in ann_store._table.list_indices() if i.columns == ["vector"]] == ["vector_ivf_p55"]
    stats = ann_store._table.index_stats("vector_ivf_p55")
    assert (stats.index_type, stats.distance_type, stats.num_indexed_rows) == ("IVF_FLAT", "cosine", N)
    hits = ann_store.vector_search(_queries(1)[0], K, Filters(groups=("public",)))
    assert ann_store.last_vector_path == "ann" and len(hits) == K


def test_ann_recall_at_10_vs_exact(ann_store):
    recalls = []
    for q in _queries():
        got = [h.chunk_id for h in ann_store.vector_search(q, K, Filters(groups=("public", "restricted")))]
        assert ann_store.last_vector_path == "ann"
        recalls.append(len(set(got) & set(_truth(ann_store, q))) / K)
    print(f"recall@10 vs exact: {np.mean(recalls):.3f}")
    assert np.mean(recalls) >= 0.95, np.mean(recalls)


@pytest.mark.parametrize("force_ann", [False, True])
def test_a_1_percent_filter_returns_k_visible_hits(ann_store, monkeypatch, force_ann):
    # as built: 30 visible rows < ann_exact_below (100) -> exact; forced: the IVF index with a
    # prefilter, which probes further partitions until k visible hits are found
    if force_ann:
        monkeypatch.setattr(ann_store, "ann_exact_below", 0)
    for q in _queries(20):
        hits = ann_store.vector_search(q, K, Filters(groups=("restricted",)))
        assert ann_store.last_vector_path == ("ann" if force_ann else "exact")
        assert len(hits) == K
        assert all(int(h.doc_id[1:]) % RESTRICTED_EVERY == 0 for h in hits)
        if not force_ann:
            assert [h.chunk_id for h in hits] == _truth(ann_store, q, restricted_only=True)


def test_below_the_threshold_search_is_exact(exact_store, ann_store):
    assert exact_store.ann_min_rows == lance.exact_max_rows(DIM) > N
    assert not exact_store.has_ann_index()
    for q in _queries(20):
        hits = exact_store.vector_search(q, K, Filters(groups=("public", "restricted")))
        assert exact_store.last_vector_path == "exact"
        assert [h.chunk_id for h in hits] == _truth(exact_store, q)
        assert [h.score for h in hits] == pytest.approx([float(VECTORS[int(h.doc_id[1:])] @ q) for h in hits], abs=1e-5)


def test_index_built_after_the_data_commits_and_replace_stays_atomic(tmp_path):
    """A store killed before the index build is searched exactly; a replaced document is found
    by its new vector and no longer by its old one once the index exists."""
    n = 1200
    store = LanceStore(tmp_path / "s", DIM, ann_min_rows=1000, ann_nprobes=8, ann_exact_below=100)
    ing = Ingestor(store, TableEmbedder(), batch_docs=400)
    ing._refresh = lambda: None  # as if killed after the data commits, before any index upkeep
    ing.ingest_documents(_docs()[:n])
    assert not store.has_ann_index()
    q = VECTORS[7]
    assert store.vector_search(q, 1, Filters(groups=("public",)))[0].doc_id == "d0007"
    assert store.last_vector_path == "exact"
    store.refresh_indexes()
    assert store.has_ann_index()
    # d0005 re-ingested with the vector of row 2999 (not otherwise in this store)
    changed = Document("d0005", "Item 5", "vec2999 changed", "s/5", "text", "changed", groups=("public",))
    Ingestor(store, TableEmbedder()).ingest_documents([changed])
    assert store.stats()["chunks"] == n
    hits = store.vector_search(VECTORS[2999], 3, Filters(groups=("public",)))
    assert store.last_vector_path == "ann"
    assert hits[0].doc_id == "d0005" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    old = store.vector_search(VECTORS[5], 10, Filters(groups=("public",)))
    assert "d0005" not in [h.doc_id for h in old]
    assert len(store.chunk_versions()["d0005"]) == 1


def test_the_index_is_retrained_when_the_table_has_grown_fourfold(tmp_path):
    store = LanceStore(tmp_path / "s", DIM, ann_min_rows=500, ann_nprobes=8, ann_exact_below=100)
    docs = _docs()

    def names():
        return [i.name for i in store._table.list_indices() if i.columns == ["vector"]]

    Ingestor(store, TableEmbedder(), batch_docs=500).ingest_documents(docs[:499])
    assert names() == []  # 499 rows: below the threshold
    Ingestor(store, TableEmbedder(), batch_docs=500).ingest_documents(docs[499:501])
    assert names() == ["vector_ivf_p22"]  # 501 rows: round(sqrt(501)) partitions
    Ingestor(store, TableEmbedder(), batch_docs=1000).ingest_documents(docs[501:1850])
    assert names() == ["vector_ivf_p22"]  # 1,850 rows: 43^2 < 4 x 22^2, merged into the old partitions
    assert store._table.index_stats("vector_ivf_p22").num_indexed_rows == 1850
    Ingestor(store, TableEmbedder(), batch_docs=1000).ingest_documents(docs[1850:2100])
    assert names() == ["vector_ivf_p46"]  # 2,100 rows: 46^2 >= 4 x 22^2, retrained, old one dropped
    assert store._table.index_stats("vector_ivf_p46").num_indexed_rows == 2100
    q = VECTORS[2050]
    assert store.vector_search(q, 1, Filters(groups=("public",)))[0].doc_id == "d2050"
    assert store.last_vector_path == "ann"


def test_read_only_store_takes_the_same_ann_and_exact_paths(ann_store):
    """A ``read_only`` store (LanceDB's native extension, no ``import lancedb`` needed) probes the
    same IVF index with the same options and returns the same hits as the full store."""
    ro = LanceStore(ann_store.path, DIM, read_only=True, ann_min_rows=1000, ann_nprobes=8, ann_exact_below=100)
    assert ro.has_ann_index()
    for f in (Filters(groups=("public",)), Filters(groups=("restricted",))):
        for q in _queries(10):
            want = ann_store.vector_search(q, K, f)
            path = ann_store.last_vector_path
            assert ro.vector_search(q, K, f) == want
            assert ro.last_vector_path == path
    assert ro._read_only


def test_default_nprobes_follow_the_partition_count(ann_store):
    """Without ``ann_nprobes`` the store probes ANN_PROBE_SHARE of the index's partitions (at
    least ANN_NPROBES, at most all of them): a fixed count probed a shrinking share as the index
    grew (issue 12: 64 of 1,000 partitions at 1M chunks, recall@10 0.76)."""
    from citewise.store.lance import ann_nprobes_for

    assert [ann_nprobes_for(p) for p in (55, 316, 320, 1000, 5000)] == [55, 160, 160, 200, 1000]
    assert ann_nprobes_for(1000, minimum=8, share=0.05) == 50
    auto = LanceStore(ann_store.path, DIM, ann_min_rows=1000, ann_exact_below=100)
    q = _queries(1)[0]
    hits = auto.vector_search(q, K, Filters(groups=("public",)))
    assert auto.last_vector_path == "ann" and auto.last_nprobes == 55  # all 55 partitions: exact
    assert [h.chunk_id for h in hits] == _truth(ann_store, q)
    ann_store.vector_search(q, K, Filters(groups=("public",)))
    assert ann_store.last_nprobes == 8  # an explicit count is kept


def test_capped_probes_make_a_deep_search_probe_what_a_shallow_one_does(ann_store, monkeypatch):
    """Hybrid asks the dense leg for 100 (+ tie margin) hits. LanceDB 0.40 with an open probe
    maximum probes more partitions than the minimum once the limit passes 100 (at 1M: in
    effect all of them, 2.3x slower). With ``ann_cap_probes=False`` the store keeps that (the
    top 50 of a 150-deep search differ from the 50-deep search's: more partitions were probed);
    capped, it probes the configured 8 whatever the depth, so the two agree hit for hit. By
    default (None) a query is capped when its filter leaves at least half the rows visible and
    not under a selective filter, whose visible rows the probed partitions hold few of."""
    every = Filters(groups=("public", "restricted"))
    public = Filters(groups=("public",))  # 99% of the rows

    def deep_differs_from_shallow(filters, queries=_queries(20)):
        differ = 0
        for q in queries:
            shallow = [(h.chunk_id, h.score) for h in ann_store.vector_search(q, 50, filters)]
            deep = [(h.chunk_id, h.score) for h in ann_store.vector_search(q, 150, filters)]
            assert ann_store.last_vector_path == "ann" and ann_store.last_nprobes == 8
            assert len(deep) == 150
            differ += deep[:50] != shallow
        return differ

    assert ann_store.ann_cap_probes is None  # the default
    assert deep_differs_from_shallow(every) == 0 and ann_store.last_capped
    assert deep_differs_from_shallow(public) == 0 and ann_store.last_capped
    monkeypatch.setattr(lance.search, "ANN_CAP_MIN_VISIBLE_SHARE", 0.995)  # 99% visible is now "selective"
    assert deep_differs_from_shallow(public) > 0 and not ann_store.last_capped
    assert deep_differs_from_shallow(every) == 0 and ann_store.last_capped
    monkeypatch.setattr(ann_store, "ann_cap_probes", False)
    assert deep_differs_from_shallow(every) > 0 and not ann_store.last_capped
    monkeypatch.setattr(ann_store, "ann_cap_probes", True)
    assert deep_differs_from_shallow(public) == 0 and ann_store.last_capped


def test_hybrid_runs_its_dense_leg_beside_bm25_at_scale_with_the_same_results(ann_store, exact_store, monkeypatch):
    import threading

    from citewise.retrieval.retrievers import HybridRetriever

    exact_store.postings()
    assert not exact_store.concurrent_legs()  # below ann_min_rows both legs are NumPy: one after the other
    ann_store.postings()
    assert ann_store.concurrent_legs()
    hybrid = HybridRetriever(ann_store, TableEmbedder())
    rows = range(7, N, 150)
    threads: list[str] = []
    search = ann_store.vector_search

    def spy(*a, **kw):
        threads.append(threading.current_thread().name)
        return search(*a, **kw)

    monkeypatch.setattr(ann_store, "vector_search", spy)
    together = [hybrid.search(f"vec{i:04d} body", K, principal=PUBLIC) for i in rows]
    assert len(threads) == len(rows) and all(t.startswith("citewise-dense-leg") for t in threads)
    monkeypatch.setattr(LanceStore, "concurrent_legs", lambda self: False)
    threads.clear()
    apart = [hybrid.search(f"vec{i:04d} body", K, principal=PUBLIC) for i in rows]
    assert threads == ["MainThread"] * len(rows)
    assert together == apart
    assert [h[0].chunk_id for h in together] == [_chunk_id(i) for i in rows]  # both legs rank it first
    assert all(len(h) == K for h in together)


def test_warm_loads_the_postings_and_probes_every_ann_partition(ann_store, exact_store):
    """``citewise serve`` warms its store before accepting requests: capped queries each probe
    their own partitions, so without it the first ~10 queries of a 1M-chunk process each read
    ~200 partitions no earlier query had (150-600 ms vs ~60 ms warm)."""
    auto = LanceStore(ann_store.path, DIM, ann_min_rows=1000, ann_exact_below=100, read_only=True)
    assert auto._postings is None
    warmed = auto.warm()
    assert warmed["partitions"] == 55 and auto._postings is not None  # round(sqrt(3000)) partitions
    q = _queries(1)[0]
    assert [h.chunk_id for h in auto.vector_search(q, K, Filters(groups=("public",)))] == _truth(ann_store, q)
    assert LanceStore(exact_store.path, DIM).warm()["partitions"] == 0  # below ann_min_rows: no ANN index
    assert LanceStore(exact_store.path.parent / "empty", DIM).warm() == {
        "postings_s": 0.0,
        "ann_s": 0.0,
        "partitions": 0,
    }
