"""Issue 12 (CLI start): a LanceStore opened ``read_only`` reads through LanceDB's native extension
without ``import lancedb``, returns what the full store returns, sees other processes' commits,
and turns into a full store on its first write."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from citewise.core import Filters, Principal
from citewise.index import Index
from citewise.retrieval.retrievers import effective_filters
from citewise.store.lance import LanceStore

from conftest import write_doc


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("ro")
    docs = root / "docs"
    write_doc(
        docs,
        "alpha.md",
        "Refund policy E-1004",
        "The refund window is thirty days for annual plans.\n\n"
        "## Exceptions\n\nChargebacks are handled by the payments team within ten days.",
    )
    write_doc(docs, "beta.md", "Escrow", "Zanzibar escrow accounts settle weekly, refunds monthly.")
    write_doc(
        docs,
        "gamma.md",
        "Finance escrow",
        "Zanzibar escrow is for finance only; refund approvals too.",
        permissions=["finance"],
    )
    idx = Index.open(root / "idx", embedder="hashing")
    idx.ingest(docs)
    return idx


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


def test_read_only_reads_equal_the_full_store(built):
    full = built.store
    ro = LanceStore(full.path, full.dim, read_only=True)
    vec = built.embedder.embed(["refund escrow"])[0]
    for f in (
        effective_filters(None, None),
        effective_filters(Principal("f", ("finance",)), None),
        Filters(groups=("finance",)),
        None,
    ):
        assert ro.lexical_search(["refund", "escrow"], 10, f) == full.lexical_search(["refund", "escrow"], 10, f)
        assert ro.vector_search(vec, 10, f) == full.vector_search(vec, 10, f)
        assert ro.titled_with("E-1004", f) == full.titled_with("E-1004", f)
    ids = [c.chunk_id for c in full.lexical_search(["refund"], 10, Filters(groups=("public", "finance")))]
    assert len(ids) == 3
    assert ro.get_chunks(ids) == full.get_chunks(ids)
    assert {k: v.tolist() for k, v in ro.get_vectors(ids).items()} == {
        k: v.tolist() for k, v in full.get_vectors(ids).items()
    }
    assert ro.get_units(ids).keys() == full.get_units(ids).keys() and ro.get_units(ids)
    assert ro.documents() == full.documents()
    assert ro.stats() == full.stats()
    assert ro.runs() == full.runs()
    assert ro.has_ann_index() is False
    assert ro._read_only  # nothing above needed lancedb's Python package


def test_search_process_does_not_import_lancedb(built):
    code = (
        "import sys, json; from citewise.index import Index; "
        "idx = Index.open(sys.argv[1], read_only=True); "
        "hits = idx.search('refund window', retriever='shipped'); idx.store.get_chunks([h.chunk_id for h in hits]); "
        "print(json.dumps([[h.chunk_id for h in hits], 'lancedb' in sys.modules, 'lancedb._lancedb' in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(built.path)], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    ids, pkg, ext = json.loads(done.stdout.strip().splitlines()[-1])
    assert ids == [h.chunk_id for h in built.search("refund window", retriever="shipped")]
    assert (pkg, ext) == (False, True)


def test_cli_search_json_unchanged_and_without_lancedb(built, monkeypatch):
    """``citewise search`` opens the index read-only: same hits and snippets as the full store."""
    code = (
        "import sys, runpy; sys.argv = ['citewise', 'search', 'refund window', '--index', sys.argv[1], "
        "'--json']; import atexit; atexit.register(lambda: print('LANCEDB', 'lancedb' in sys.modules)); "
        "runpy.run_module('citewise.cli', run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(built.path)], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    body, flag = done.stdout.rsplit("LANCEDB", 1)
    assert flag.strip() == "False"
    got = json.loads(body)["hits"]
    want = built.search("refund window", retriever="shipped")
    assert [h["chunk_id"] for h in got] == [h.chunk_id for h in want]
    assert got[0]["snippet"] and got[0]["snippet_start"] is not None


def test_read_only_store_sees_later_commits_and_upgrades_on_write(tmp_path):
    docs = tmp_path / "docs"
    write_doc(docs, "alpha.md", "Alpha", "The refund window is thirty days.")
    writer = Index.open(tmp_path / "idx", embedder="hashing")
    writer.ingest(docs)
    reader = Index.open(tmp_path / "idx", read_only=True)
    assert [h.doc_id for h in reader.search("refund window", retriever="bm25")] == ["alpha"]
    write_doc(docs, "beta.md", "Beta", "Zanzibar escrow accounts settle weekly.")
    writer.ingest(docs)  # another handle commits
    assert [h.doc_id for h in reader.search("zanzibar escrow", retriever="bm25")] == ["beta"]
    assert [h.doc_id for h in reader.search("zanzibar escrow", retriever="dense")][0] == "beta"
    # a write through the read-only handle imports lancedb and reopens its tables
    write_doc(docs, "gamma.md", "Gamma", "Quokka ledgers close on Fridays.")
    report = reader.ingest(docs)
    assert report.added == 1 and not reader.store._read_only
    assert [h.doc_id for h in reader.search("quokka ledgers", retriever="bm25")] == ["gamma"]
    assert [h.doc_id for h in writer.search("quokka ledgers", retriever="bm25")] == ["gamma"]


def test_read_only_store_without_a_table_yet(tmp_path):
    ro = LanceStore(tmp_path / "empty", 16, read_only=True)
    assert ro.lexical_search(["x"], 5) == [] and ro.vector_search([0.0] * 16, 5) == []
    assert ro.stats()["chunks"] == 0 and ro.runs() == [] and ro.documents() == {}


def test_read_only_store_builds_missing_postings(built, tmp_path):
    """An index whose saved BM25 postings are gone (older citewise, deleted folder): the
    read-only store rebuilds them from its own scan and answers as the full store does."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(built.path, copy)
    shutil.rmtree(copy / "lance" / "_bm25")
    ro = Index.open(copy, read_only=True)
    for name in ("bm25", "dense", "shipped"):
        assert ro.search("refund escrow", retriever=name) == built.search("refund escrow", retriever=name)
    assert (copy / "lance" / "_bm25").is_dir() and ro.store._read_only
