"""A damaged or full disk gets a way back (issue 37): real files of a real index are truncated,
and an ingest runs into a real, small tmpfs.

* every store error is one line pointing to ``citewise index check`` / ``repair`` (exit 5), and
  a full disk one line saying what to do (exit 4), never the engine's message alone;
* ``index check`` names the damaged file; ``index repair`` rolls back to the last version whose
  files are whole, or keeps the readable part, rebuilds derived indexes, and says what was lost
  and which folder to ingest again; after it the index reads and a re-ingest restores it;
* on PostgreSQL, derived statistics and policies that no longer match the chunks are found and
  rebuilt from them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from citewise.core import Filters
from citewise.index import Index
from citewise.store.faults import EXIT_DAMAGED, EXIT_DISK_FULL, disk_full_message
from citewise.store.lance_files import manifests, read_manifest

from conftest import write_doc


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "citewise.cli", *args], capture_output=True, text=True, timeout=300)


def pages(root: Path, n: int = 8, extra: str = "") -> Path:
    for i in range(n):
        write_doc(
            root,
            f"p{i}.md",
            f"Page {i}",
            f"## Section\n\nPage {i} explains refunds, invoices and exports number {i}.{extra}",
        )
    return root


def chunk_table(index: Path) -> Path:
    return index / "lance" / "chunks.lance"


def current(index: Path):
    return read_manifest(manifests(chunk_table(index))[max(manifests(chunk_table(index)))])


def hashes(index: Path) -> dict[str, str]:
    return {d: e.content_hash for d, e in Index.open(index).store.documents().items()}


def build(tmp_path: Path, keep_old_versions: bool = True):
    """Eight pages ingested, then two of them changed and ingested again: the change writes the
    two pages' new rows into a data file of their own (an update), and the compaction after it
    rewrites the six untouched pages into another: ``(index, docs, hashes before the change)``.
    Without ``keep_old_versions`` the second ingest runs as one more than
    :data:`citewise.store.lance.writes.CLEANUP_AFTER` after the first does: every older version is
    removed with its files."""
    import datetime as dt

    from citewise.store import lance

    docs, index = pages(tmp_path / "docs"), tmp_path / "index"
    idx = Index.open(index, embedder="hashing")
    idx.ingest(docs)
    first = hashes(index)
    write_doc(docs, "p1.md", "Page 1", "## Section\n\nPage 1 now explains quokkas.")
    write_doc(docs, "p2.md", "Page 2", "## Section\n\nPage 2 now explains wombats.")
    with pytest.MonkeyPatch.context() as mp:
        if not keep_old_versions:
            mp.setattr(lance.writes, "CLEANUP_AFTER", dt.timedelta(0))
        assert idx.ingest(docs).updated == 2
    return index, docs, first


@pytest.fixture()
def built(tmp_path):
    return build(tmp_path)


def data_file_made_by(index: Path, op: str) -> Path:
    """The data file of the current version that the version made by ``op`` (``update``,
    ``compaction``) added."""
    from citewise.store.lance_files import OP_NAMES, operation

    table = chunk_table(index)
    seen: set[Path] = set()
    for _v, p in sorted(manifests(table).items()):
        m = read_manifest(p)
        new = [f.path for f in m.files if f.kind == "data" and f.path not in seen]
        if OP_NAMES.get(operation(table, m)) == op and new and new[0] in {f.path for f in current(index).files}:
            return new[0]
        seen |= {f.path for f in m.files}
    raise AssertionError(f"no data file made by {op}")


def test_a_damaged_compacted_file_rolls_back_over_the_compaction_with_nothing_lost(built):
    index, _, _ = built
    after_change = hashes(index)
    os.truncate(data_file_made_by(index, "compaction"), 5000)
    r = cli("index", "repair", "--index", str(index))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "compaction" in r.stdout and "lost: nothing" in r.stdout and "to bring it back" not in r.stdout
    assert hashes(index) == after_change


def test_a_damaged_file_of_a_change_rolls_back_that_change_and_says_which(built):
    import json

    index, docs, first = built
    os.truncate(data_file_made_by(index, "update"), 100)
    r = cli("index", "repair", "--index", str(index), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["after"]["ok"] and out["reingest"] == [str(docs)]
    assert any(a.startswith("chunks table: restored version") and "update" in a for a in out["actions"])
    assert any("are undone" in x for x in out["lost"])
    assert hashes(index) == first  # every document back at the version before the change
    report = Index.open(index).ingest(docs)
    assert (report.updated, report.unchanged) == (2, 6)


# the build removes every older version on purpose (one process, no concurrent reader); lancedb
# warns about exactly that
@pytest.mark.filterwarnings("ignore:optimize\\(cleanup_older_than=0\\):UserWarning")
def test_a_truncated_data_file_with_no_whole_version_left_keeps_whole_documents(tmp_path):
    index, docs, _ = build(tmp_path, keep_old_versions=False)
    m = current(index)
    # the six unchanged pages (one chunk each), compacted into one file every version left uses
    [old] = [f.path for f in m.files if f.kind == "data" and m.fragments[f.fragment] == 6]
    assert all(old in {f.path for f in read_manifest(p).files} for p in manifests(chunk_table(index)).values())
    os.truncate(old, 5000)
    for args in (
        ["search", "refund", "--index", str(index)],
        ["status", "--index", str(index)],
        ["ingest", str(docs), "--index", str(index)],
    ):
        r = cli(*args)
        assert r.returncode == EXIT_DAMAGED, (args, r.stderr)
        assert r.stderr.startswith(f"error: {index}: the store cannot be read (") and r.stderr.count("\n") == 1
        assert f"run 'citewise index check --index {index}'" in r.stderr and "rs:" not in r.stderr
    r = cli("index", "check", "--index", str(index))
    assert r.returncode == EXIT_DAMAGED and f"{old}: 5,000 bytes, the manifest recorded" in r.stdout
    r = cli("index", "repair", "--index", str(index))
    assert r.returncode == 0, r.stdout + r.stderr
    # p1 and p2 live in the update's data file; the other six in the compacted one
    assert "lost: chunks table: 6 document(s) removed (p0, p3, p4, p5, p6, p7)" in r.stdout
    assert f"to bring it back: citewise ingest {docs} --index {index}" in r.stdout
    assert r.stdout.rstrip().endswith("every part reads now.")
    assert sorted(hashes(index)) == ["p1", "p2"]
    assert cli("index", "check", "--index", str(index)).returncode == 0
    report = Index.open(index).ingest(docs)
    assert (report.added, report.unchanged) == (6, 2)


def test_a_truncated_manifest_of_an_index_update_is_rolled_back_with_nothing_lost(built):
    index, _, _ = built
    before = hashes(index)
    newest = manifests(chunk_table(index))[max(manifests(chunk_table(index)))]
    os.truncate(newest, 40)
    r = cli("index", "check", "--index", str(index))
    assert r.returncode == EXIT_DAMAGED and f"{newest}: manifest of version" in r.stdout
    r = cli("index", "repair", "--index", str(index))
    assert r.returncode == 0 and "lost: nothing" in r.stdout and "only recorded a create index" in r.stdout
    assert hashes(index) == before
    assert any(Path(index, "damaged").rglob(newest.name))  # moved aside, not deleted


def test_damaged_indexes_and_postings_are_rebuilt_from_the_chunks(tmp_path, monkeypatch):
    from citewise.store.lance import store as lance_store

    monkeypatch.setattr(lance_store, "SCALAR_INDEX_MIN_ROWS", 0)  # scalar indexes on these 8 pages too
    index, _, _ = build(tmp_path)
    idx = Index.open(index)
    public = Filters(groups=("public",))
    want = [h.chunk_id for h in idx.search("refunds invoices", 5, retriever="bm25")]
    want_filtered = [h.chunk_id for h in idx.store.lexical_search(["refund"], 5, public)]
    m = current(index)
    groups_index = next(u for u, name in m.indexes.items() if name == "groups_idx")
    for f in (chunk_table(index) / "_indices" / groups_index).iterdir():
        os.truncate(f, 10)
    postings = next((index / "lance" / "_bm25").iterdir())
    os.truncate(postings / "rows.npy", 3)
    r = cli("index", "check", "--index", str(index))
    assert r.returncode == EXIT_DAMAGED
    assert "index groups_idx:" in r.stdout and "BM25 postings:" in r.stdout
    assert "only derived data is damaged" in r.stdout
    # a groups-only filter is computed from the permission columns, not the damaged index; the
    # postings are derived and rebuilt from the table: the read is whole
    r = cli("search", "refund", "--index", str(index), "--retriever", "bm25", "--k", "5", "--json")
    assert r.returncode == 0, r.stderr
    assert [h["chunk_id"] for h in json.loads(r.stdout)["hits"]] == want_filtered
    # a date filter is LanceDB's SQL, which reads the damaged groups index
    r = cli("search", "refund", "--index", str(index), "--as-of", "2030-01-01")
    assert r.returncode == EXIT_DAMAGED and "citewise index repair" in r.stderr
    r = cli("index", "repair", "--index", str(index))
    assert r.returncode == 0 and "lost: nothing" in r.stdout
    idx = Index.open(index)
    # the dropped index is rebuilt although these 8 pages are below SCALAR_INDEX_MIN_ROWS
    assert "groups_idx" in {i.name for i in idx.store._table.list_indices()}
    assert [h.chunk_id for h in idx.search("refunds invoices", 5, retriever="bm25")] == want
    assert [h.chunk_id for h in idx.store.lexical_search(["refund"], 5, public)] == want_filtered


@pytest.fixture()
def tmpfs(tmp_path):
    """A 1 MiB tmpfs mounted at ``tmp_path/disk`` (unmounted after); skips where mounting a
    filesystem is not allowed (not root, or no CAP_SYS_ADMIN in this container)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here to fill a disk for real: {r.stderr.strip() or r.returncode}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_is_one_line_every_document_old_or_new_and_a_rerun_finishes(tmp_path, tmpfs):
    index = tmpfs / "index"
    docs = pages(tmp_path / "docs")
    r = cli("ingest", str(docs), "--index", str(index), "--embedder", "hashing")
    assert r.returncode == 0, r.stderr
    first = hashes(index)
    filler = " ".join(f"word{i} refunds invoices exports" for i in range(60))
    pages(docs, 8, extra=" Changed.")
    for i in range(300):  # ~1 MiB of new text, chunks and vectors: more than the disk holds
        write_doc(docs, f"big/b{i}.md", f"Big {i}", f"## Part\n\n{filler} {uuid.uuid4().hex}.")
    r = cli("ingest", str(docs), "--index", str(index))
    assert r.returncode == EXIT_DISK_FULL, r.stdout + r.stderr
    assert r.stderr == f"error: {disk_full_message(index)}\n"
    new = {d: e.content_hash for d, e in _documents_of(docs).items()}
    store = Index.open(index).store
    for doc, rows in store.chunk_versions().items():
        assert len({h for _, h, _ in rows}) == 1, doc  # one version per document, never a mix
        assert rows and next(iter(rows))[1] in {first.get(doc), new[doc]}, doc
    subprocess.run(["mount", "-o", "remount,size=64m", str(tmpfs)], check=True)
    r = cli("ingest", str(docs), "--index", str(index))
    assert r.returncode == 0, r.stderr
    assert hashes(index) == new
    assert cli("index", "check", "--index", str(index)).returncode == 0


def _documents_of(root: Path) -> dict:
    from citewise.text.loaders import load_folder

    return {d.doc_id: d for d in load_folder(root) if hasattr(d, "doc_id")}


# -- PostgreSQL ---------------------------------------------------------------------------------
def test_postgres_check_finds_and_repair_rebuilds_derived_state(tmp_path, pg_url):
    docs, index = pages(tmp_path / "docs"), tmp_path / "index"
    idx = Index.open(index, embedder="hashing", store=pg_url)
    idx.ingest(docs)
    store = idx.store
    want = store.lexical_search(["refund", "number"], 8)
    s = store.schema
    with store._tx(snapshot=False) as cur:
        cur.execute(f"DELETE FROM {s}.postings WHERE rid IN (SELECT rid FROM {s}.chunks WHERE doc_id = 'p3')")
        cur.execute(f"UPDATE {s}.corpus_stats SET n_chunks = n_chunks + 5")
        cur.execute(f"DROP POLICY by_chunk ON {s}.postings")
    r = cli("index", "check", "--index", str(index))
    assert r.returncode == EXIT_DAMAGED, r.stdout + r.stderr
    for part in (
        "BM25 postings:",
        "BM25 term statistics:",
        "BM25 corpus statistics:",
        "permissions of postings: ",
        "row-level security policy by_chunk is missing",
    ):
        assert part in r.stdout, part
    r = cli("index", "repair", "--index", str(index))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rebuilt the BM25 postings and statistics from 8 stored chunks" in r.stdout and "lost: nothing" in r.stdout
    store = Index.open(index).store
    got = store.lexical_search(["refund", "number"], 8)
    assert [h.chunk_id for h in got] == [h.chunk_id for h in want]
    assert [round(h.score, 5) for h in got] == [round(h.score, 5) for h in want]
    assert cli("index", "check", "--index", str(index)).returncode == 0


def test_engine_errors_are_classified_by_what_the_user_can_do():
    from citewise.store.faults import DiskFull, StoreDamaged, translate

    class PgError(Exception):  # what psycopg raises: the SQLSTATE on the exception
        def __init__(self, state, text):
            super().__init__(text)
            self.sqlstate = state

    full = translate(
        PgError("53100", 'could not extend file "base/5/16390": No space left on device'), "postgresql://h/db"
    )
    assert isinstance(full, DiskFull) and str(full) == disk_full_message("postgresql://h/db")
    bad = translate(PgError("XX001", 'invalid page in block 7 of relation "base/5/16390"'), "postgresql://h/db")
    assert isinstance(bad, StoreDamaged) and "invalid page in block 7" in str(bad)
    lance = RuntimeError(
        "lance error: LanceError(IO): No space left on device (os error 28), /root/.cargo/x/writer.rs:191:9"
    )
    assert isinstance(translate(lance, "/idx"), DiskFull)
    assert translate(ValueError("k must be positive"), "/idx") is None  # not a store fault: left as it is
