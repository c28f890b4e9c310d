"""Issue 12: scalar indexes on the filter columns and compaction change speed, never results.

A 240-document corpus (every 10th document readable by ``restricted`` only, 12 with an older
version kept as history) is ingested in 12 commits of 20 documents with the FTS index alone and
no compaction, as citewise stored it before issue 12. Every retriever is queried with and without
filters; then :meth:`LanceStore.refresh_indexes` compacts the table and builds the scalar
indexes, and the same queries must return the same chunk ids with the same scores.
"""

from __future__ import annotations

import datetime as dt
import random

import pytest

from citewise.core import Document, Filters, Principal
from citewise.ingest import Ingestor
from citewise.models.embedders import HashingEmbedder
from citewise.retrieval.retrievers import make_retriever
from citewise.store.lance import _FTS_OPTIONS, SCALAR_INDEXES, LanceStore

N_DOCS = 240
WORDS = [
    f"{a}{b}" for a in ("ka", "lo", "mi", "nu", "pe", "ro", "su", "ti") for b in ("ba", "de", "fi", "go", "hu", "ja")
]
QUERIES = ["kaba lode", "mifi nugo pehu", "roja", "suba tide kaba", "lofi mide", "tiju pede rofi", "nuba"]


def _corpus() -> list[Document]:
    rng = random.Random(12)
    docs = []
    for i in range(N_DOCS):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 80)))
        groups = ("restricted",) if i % 10 == 0 else ()
        docs.append(
            Document(
                f"d{i:03d}",
                f"Doc {i}",
                body,
                f"s/{i}",
                "text",
                f"h{i}",
                version="2",
                updated=dt.date(2026, 1, 1 + i % 28),
                groups=groups,
            )
        )
        if i % 20 == 5:  # an older version, kept as history (doc_id@1, current = False)
            docs.append(
                Document(
                    f"d{i:03d}",
                    f"Doc {i}",
                    body + " roja roja",
                    f"s/{i}-old",
                    "text",
                    f"o{i}",
                    version="1",
                    updated=dt.date(2025, 6, 1),
                    groups=groups,
                )
            )
    return docs


CASES = [
    ("anonymous", None, None),
    ("restricted member", Principal("r", ("restricted",)), None),
    ("restricted only", Principal("r", ("restricted",)), Filters(groups=("restricted",))),
    ("version 1", None, Filters(version="1")),
    ("as of 2026-01-10", Principal("r", ("restricted",)), Filters(as_of=dt.date(2026, 1, 10))),
]


def _results(store, embedder):
    out = {}
    for name in ("bm25", "dense", "hybrid", "shipped"):
        r = make_retriever(name, store, embedder)
        for label, principal, filters in CASES:
            for q in QUERIES:
                hits = r.search(q, 10, principal=principal, filters=filters)
                out[(name, label, q)] = [(h.chunk_id, round(h.score, 6)) for h in hits]
    return out


@pytest.fixture(scope="module")
def before_after(tmp_path_factory):
    from lancedb.index import FTS

    emb = HashingEmbedder(64)
    store = LanceStore(tmp_path_factory.mktemp("scale") / "s", 64, scalar_min_rows=0)
    ing = Ingestor(store, emb, batch_docs=20, workers=0)  # one commit per batch (workers would share commits)
    ing._refresh = lambda: None  # no upkeep: one fragment per commit, as before issue 12
    ing.ingest_documents(_corpus())
    store._table.create_index("lexical", config=FTS(**_FTS_OPTIONS))
    before = {
        "fragments": store.fragments(),
        "indexes": sorted(tuple(i.columns) for i in store._table.list_indices()),
        "results": _results(store, emb),
    }
    store._fts_dirty = True
    store.refresh_indexes()
    reopened = LanceStore(store.path, 64, scalar_min_rows=0)
    after = {
        "fragments": reopened.fragments(),
        "indexes": sorted(tuple(i.columns) for i in reopened._table.list_indices()),
        "results": _results(reopened, emb),
    }
    return before, after


def test_refresh_compacts_and_builds_every_scalar_index(before_after):
    before, after = before_after
    assert before["fragments"] >= 12 and before["indexes"] == [("lexical",)]
    assert after["fragments"] == 1
    assert after["indexes"] == sorted([("lexical",)] + [(c,) for c in SCALAR_INDEXES])


def test_results_are_identical_before_and_after_indexes_and_compaction(before_after):
    before, after = before_after
    assert len(before["results"]) == 4 * len(CASES) * len(QUERIES)
    for key, hits in before["results"].items():
        assert after["results"][key] == hits, key


def test_filters_shape_the_results_as_expected(before_after):
    _, after = before_after
    res = after["results"]
    only = res[("bm25", "restricted only", "kaba lode")]
    assert len(only) == 10 and all(int(c[1:4]) % 10 == 0 for c, _ in only)
    anon = [c for key, hits in res.items() if key[1] == "anonymous" for c, _ in hits]
    assert anon and not any(int(c[1:4]) % 10 == 0 for c in anon) and not any("@" in c for c in anon)
    old = res[("bm25", "version 1", "roja")]
    assert old and all("@1" in c for c, _ in old)


def test_scalar_indexes_are_built_once_the_table_reaches_scalar_min_rows(tmp_path):
    """Below ``scalar_min_rows`` rows a refresh builds the FTS index alone; the ingest that takes
    the table to the threshold builds every scalar index, and results equal a store that had
    them from the start."""
    emb = HashingEmbedder(64)
    docs = _corpus()  # 240 documents and 12 older versions: 252 one-chunk rows
    lazy = LanceStore(tmp_path / "lazy", 64, scalar_min_rows=200)
    eager = LanceStore(tmp_path / "eager", 64, scalar_min_rows=0)
    for store in (lazy, eager):
        Ingestor(store, emb, workers=0).ingest_documents(docs[:150])
    assert lazy._table.count_rows() == 150
    assert sorted(tuple(i.columns) for i in lazy._table.list_indices()) == [("lexical",)]
    assert len(eager._table.list_indices()) == 1 + len(SCALAR_INDEXES)
    assert _results(lazy, emb) == _results(eager, emb)
    for store in (lazy, eager):
        Ingestor(store, emb, workers=0).ingest_documents(docs)
    assert lazy._table.count_rows() == 252
    assert sorted(tuple(i.columns) for i in lazy._table.list_indices()) == sorted(
        [("lexical",)] + [(c,) for c in SCALAR_INDEXES]
    )
    assert _results(lazy, emb) == _results(eager, emb)
