"""Document lifecycle: versions, as-of dates, freshness (status), index upkeep, failures, watch."""

from __future__ import annotations

import datetime as dt
import json
import os
import queue
import random
import shutil
import threading
import time

import pytest
from typer.testing import CliRunner

from citewise.cli import app
from citewise.core import Document, Filters, InputError
from citewise.index import Index
from citewise.ingest import Ingestor
from citewise.lifecycle import compute_status, parse_duration, percentile, version_key
from citewise.models.embedders import HashingEmbedder
from citewise.store.base import DocumentEntry, IngestRun
from citewise.store.lance import LanceStore
from citewise.watch import FolderWatcher

from conftest import write_doc

UTC = dt.timezone.utc


# -- versions -------------------------------------------------------------------------------------


def test_version_order_is_natural():
    assert sorted(["10", "9", "v2", "4.10", "4.2", "", "4.2.1"], key=version_key) == [
        "",
        "v2",
        "4.2",
        "4.2.1",
        "4.10",
        "9",
        "10",
    ]
    assert version_key("V3") == version_key("3")


@pytest.mark.parametrize("first,second", [("a", "b"), ("b", "a")])
def test_newer_version_of_one_id_wins_whatever_the_file_order(tmp_path, first, second):
    root = tmp_path / "docs"
    versions = {"a": "9", "b": "10"}
    for name in (first, second):
        write_doc(
            root,
            f"{name}.md",
            f"Policy {name}",
            f"Refund text of file {name}.",
            id="refund-policy",
            version=versions[name],
        )
    idx = Index.open(tmp_path / "i", embedder="hashing")
    report = idx.ingest(root)
    assert report.errors == [] and report.added == 2  # the current version and version 9 as history
    assert report.superseded == [
        f"{root / 'a.md'}: version '9' of 'refund-policy' superseded by version '10' in "
        f"{root / 'b.md'}; kept as history ('refund-policy@9')"
    ]
    entry = idx.store.documents()["refund-policy"]
    assert (entry.version, entry.source) == ("10", str(root / "b.md"))
    assert idx.store.documents()["refund-policy@9"].source == str(root / "a.md")
    # default searches see only the current version
    assert [h.doc_id for h in idx.search("refund text file", 5, retriever="bm25")] == ["refund-policy"]


def test_same_version_is_a_duplicate_error_and_dates_break_version_ties(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "a.md", "A", "alpha", id="x", version="2")
    write_doc(root, "b.md", "B", "beta", id="x", version="2")
    write_doc(root, "c.md", "C", "gamma", id="y", version="2", updated="2026-01-01")
    write_doc(root, "d.md", "D", "delta", id="y", version="2", effective="2026-03-01")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    report = idx.ingest(root)
    assert report.errors == [
        f"{root / 'b.md'}: duplicate document id 'x' (already used by {root / 'a.md'}, same version); skipped"
    ]
    docs = idx.store.documents()
    assert docs["x"].source == str(root / "a.md")
    assert (docs["y"].source, docs["y"].effective) == (str(root / "d.md"), "2026-03-01")


def test_indexed_newer_version_from_another_folder_is_kept_until_its_file_goes(tmp_path):
    new_dir, old_dir = tmp_path / "current", tmp_path / "archive"
    write_doc(new_dir, "p.md", "Policy", "Current text.", id="policy", version="5")
    write_doc(old_dir, "p.md", "Policy", "Archived text.", id="policy", version="4")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    idx.ingest(new_dir)
    report = idx.ingest(old_dir)
    assert (
        report.chunks_embedded == 0
        and len(report.superseded) == 1
        and "older than the indexed version '5'" in report.superseded[0]
    )
    assert idx.store.documents()["policy"].version == "5"
    (new_dir / "p.md").unlink()
    assert idx.ingest(new_dir).deleted == 1
    assert idx.ingest(old_dir).added == 1 and idx.store.documents()["policy"].version == "4"


# -- as of a date, a version -----------------------------------------------------------------------
def test_older_versions_answer_as_of_queries_and_leave_with_their_files(tmp_path):
    root = tmp_path / "docs"
    write_doc(
        root,
        "v1.md",
        "Refund policy",
        "Refunds within 14 days.",
        id="refund-policy",
        version="1",
        effective="2025-01-01",
    )
    write_doc(
        root,
        "v2.md",
        "Refund policy",
        "Refunds within 30 days.",
        id="refund-policy",
        version="2",
        effective="2026-01-01",
    )
    write_doc(
        root,
        "v3.md",
        "Refund policy",
        "Refunds within 45 days.",
        id="refund-policy",
        version="3",
        effective="2026-06-01",
    )
    idx = Index.open(tmp_path / "i", embedder="hashing")
    assert idx.ingest(root).added == 3

    def found(**kw):
        hits = idx.search("refunds within days", 5, retriever="hybrid", filters=Filters(**kw) if kw else None)
        return sorted(h.doc_id for h in hits)

    assert found() == ["refund-policy"]  # current only
    assert found(as_of=dt.date(2025, 6, 1)) == ["refund-policy@1"]  # v2 not in force yet
    assert found(as_of=dt.date(2026, 3, 1)) == ["refund-policy@2"]
    assert found(as_of=dt.date(2026, 7, 1)) == ["refund-policy"]
    assert found(as_of=dt.date(2024, 1, 1)) == []  # nothing was in force
    assert found(version="1") == ["refund-policy@1"]
    docs = idx.store.documents()
    assert (docs["refund-policy@1"].version, docs["refund-policy@2"].version, docs["refund-policy"].version) == (
        "1",
        "2",
        "3",
    )
    # re-ingest: nothing changes; removing a version's file removes that version only
    again = idx.ingest(root)
    assert (again.unchanged, again.chunks_embedded, again.deleted) == (3, 0, 0)
    (root / "v1.md").unlink()
    assert idx.ingest(root).deleted == 1
    assert found(as_of=dt.date(2025, 6, 1)) == []
    assert found(as_of=dt.date(2026, 3, 1)) == ["refund-policy@2"]


@pytest.fixture()
def dated(tmp_path):
    root = tmp_path / "docs"
    write_doc(
        root,
        "a.md",
        "Fee schedule A",
        "fee schedule wire transfer",
        version="3",
        updated="2026-01-01",
        effective="2026-03-01",
    )
    write_doc(root, "b.md", "Fee schedule B", "fee schedule wire transfer", version="2", updated="2026-02-01")
    write_doc(root, "c.md", "Fee schedule C", "fee schedule wire transfer")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    assert idx.ingest(root).added == 3
    return idx


@pytest.mark.parametrize("name", ["bm25", "dense", "hybrid", "shipped"])
@pytest.mark.parametrize(
    "day,expected",
    [
        ("2025-12-31", {"c"}),  # only the undated document
        ("2026-02-15", {"b", "c"}),  # a is updated earlier but in force only from March
        ("2026-03-01", {"a", "b", "c"}),
    ],
)
def test_as_of_uses_effective_else_updated(dated, name, day, expected):
    hits = dated.search(
        "fee schedule wire transfer", 10, retriever=name, filters=Filters(as_of=dt.date.fromisoformat(day))
    )
    assert {h.doc_id for h in hits} == expected


def test_version_filter_and_cli_options(dated):
    assert {h.doc_id for h in dated.search("fee schedule", 10, filters=Filters(version="2"))} == {"b"}
    runner = CliRunner()
    res = runner.invoke(
        app, ["search", "fee schedule wire", "--index", str(dated.path), "--as-of", "2026-02-15", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert {h["doc_id"] for h in json.loads(res.output)["hits"]} == {"b", "c"}
    res = runner.invoke(
        app, ["ask", "fee schedule wire transfer", "--index", str(dated.path), "--version", "3", "--json"]
    )
    assert res.exit_code == 0, res.output
    cites = json.loads(res.output)["citations"]
    assert cites and {(c["doc_id"], c["version"], c["updated"]) for c in cites} == {("a", "3", "2026-01-01")}


def test_effective_front_matter_must_be_a_date(tmp_path):
    write_doc(tmp_path, "a.md", "A", "text", effective="soon")
    from citewise.text.loaders import load_markdown

    with pytest.raises(InputError, match=r"a.md:3: front matter 'effective' must be an ISO date"):
        load_markdown(tmp_path / "a.md", tmp_path)


# -- freshness ----------------------------------------------------------------------------------


def _entry(doc_id, indexed, changed):
    return DocumentEntry(doc_id, doc_id, f"/nowhere/{doc_id}.md", "h", "", "", 1, indexed, "", ("public",), changed)


def test_lag_is_hand_computed_and_counts_from_the_first_run():
    t0 = dt.datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
    runs = [
        IngestRun((t0).isoformat(), (t0 + dt.timedelta(seconds=5)).isoformat(), ""),
        IngestRun((t0 + dt.timedelta(hours=1)).isoformat(), (t0 + dt.timedelta(hours=1, seconds=2)).isoformat(), ""),
    ]
    # lags: 4s (changed 30 days before the first run: counts from the run), 30s, 90s, 600s
    entries = {
        "a": _entry("a", (t0 + dt.timedelta(seconds=4)).isoformat(), (t0 - dt.timedelta(days=30)).isoformat()),
        "b": _entry(
            "b",
            (t0 + dt.timedelta(minutes=60, seconds=1)).isoformat(),
            (t0 + dt.timedelta(minutes=59, seconds=31)).isoformat(),
        ),
        "c": _entry(
            "c",
            (t0 + dt.timedelta(minutes=60, seconds=1)).isoformat(),
            (t0 + dt.timedelta(minutes=58, seconds=31)).isoformat(),
        ),
        "d": _entry(
            "d",
            (t0 + dt.timedelta(minutes=60, seconds=1)).isoformat(),
            (t0 + dt.timedelta(minutes=50, seconds=1)).isoformat(),
        ),
    }
    now = t0 + dt.timedelta(hours=2)
    st = compute_status(entries, 7, runs, now=now, threshold_s=8000)
    assert st.lag_max_s == 600.0
    assert st.lag_p95_s == pytest.approx(90 + 0.85 * (600 - 90))  # type 7: pos = 3 * 0.95 = 2.85
    assert st.staleness_s == 3598.0  # now - finish of the last run
    # the sources do not exist: all four are stale ("missing"), waiting since the first run (7200s)
    assert [(s.doc_id, s.reason, s.pending_s) for s in st.stale] == [(d, "missing", 7200.0) for d in "abcd"]
    assert st.alerts == [] and st.as_dict()["status"] == "ok"
    st = compute_status(entries, 7, runs, now=now, threshold_s=3600)
    assert st.alerts == ["a source change has waited 7200s > 3600s"] and st.as_dict()["status"] == "alert"
    late = compute_status({}, 0, runs, now=now + dt.timedelta(seconds=3), threshold_s=3600)
    assert late.alerts == ["last completed ingest 3601s ago > 3600s"]
    assert compute_status(entries, 7, [], now=now, threshold_s=10).alerts[0] == "no completed ingest run recorded"


def test_percentile_and_durations():
    assert percentile([1, 2, 3, 4], 95) == 3.85 and percentile([], 95) == 0.0 and percentile([7], 95) == 7
    assert [parse_duration(x) for x in ("90", "90s", "15m", "6h", "2d", "1w", "1.5h")] == [
        90,
        90,
        900,
        21600,
        172800,
        604800,
        5400,
    ]
    with pytest.raises(InputError, match="not a duration: '6 hours'"):
        parse_duration("6 hours")


def test_status_reports_changed_missing_and_new_files(tmp_path):
    root = tmp_path / "docs"
    for name in ("a", "b", "c"):
        write_doc(root, f"{name}.md", name.upper(), f"text of {name}")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    idx.ingest(root)
    st = idx.status(3600)
    assert (st.documents, st.chunks, st.runs, st.stale, st.alerts, st.unindexed_rows) == (3, 3, 1, [], [], 0)
    assert 0 <= st.lag_max_s < 60
    # touched but same content: not stale; changed content, deleted file, new file: stale
    os.utime(root / "a.md", (time.time() + 5, time.time() + 5))
    future = time.time() + 10
    write_doc(root, "b.md", "B", "new text of b")
    os.utime(root / "b.md", (future, future))
    (root / "c.md").unlink()
    write_doc(root, "d.md", "D", "text of d")
    st = idx.status()
    assert sorted((s.reason, s.doc_id, os.path.basename(s.source)) for s in st.stale) == [
        ("changed", "b", "b.md"),
        ("missing", "c", "c.md"),
        ("unindexed", "", "d.md"),
    ]
    idx.ingest(root)
    assert idx.status().stale == []


def test_cli_status_exits_1_past_the_threshold(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "a.md", "A", "text")
    idx = Index.open(tmp_path / "i", embedder="hashing")
    idx.ingest(root)
    runner = CliRunner()
    ok = runner.invoke(app, ["status", "--index", str(idx.path), "--max-lag", "6h", "--json"])
    assert ok.exit_code == 0, ok.output
    data = json.loads(ok.output)
    assert (data["documents"], data["chunks"], data["status"], data["threshold_s"]) == (1, 1, "ok", 21600.0)
    time.sleep(0.05)
    bad = runner.invoke(app, ["status", "--index", str(idx.path), "--max-lag", "0.01"])
    assert bad.exit_code == 1 and "ALERT: last completed ingest" in bad.output
    assert runner.invoke(app, ["status", "--index", str(idx.path), "--max-lag", "soon"]).exit_code != 0


# -- index upkeep and failures ---------------------------------------------------------------------


def _random_docs(n, version, seed):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(150)]
    return [
        Document(f"d{i:02d}", f"Doc {i}", " ".join(rng.choice(words) for _ in range(50)), "s", "text", f"{version}-{i}")
        for i in range(n)
    ]


def test_incremental_fts_update_scores_equal_a_full_rebuild(tmp_path):
    inc = LanceStore(tmp_path / "inc", 64)
    ing = Ingestor(inc, HashingEmbedder(64))
    ing.ingest_documents(_random_docs(30, 1, 1))
    ing.ingest_documents(_random_docs(30, 1, 1)[:10] + _random_docs(30, 2, 2)[10:20] + _random_docs(30, 1, 1)[20:])
    inc.delete(["d03", "d04"])
    inc.refresh_indexes()
    assert inc.unindexed_rows() == 0
    full = LanceStore(tmp_path / "full", 64)
    Ingestor(full, HashingEmbedder(64)).ingest_documents(
        [
            d
            for d in _random_docs(30, 1, 1)[:10] + _random_docs(30, 2, 2)[10:20] + _random_docs(30, 1, 1)[20:]
            if d.doc_id not in ("d03", "d04")
        ]
    )
    for q in [f"w{i}" for i in range(0, 150, 7)]:
        a = inc.lexical_search([q, "w1"], 50)
        b = full.lexical_search([q, "w1"], 50)
        assert [(h.chunk_id, round(h.score, 5)) for h in a] == [(h.chunk_id, round(h.score, 5)) for h in b]


def test_missing_fts_index_after_a_crash_is_rebuilt_by_the_next_run(tmp_path):
    store = LanceStore(tmp_path / "s", 64, scalar_min_rows=0)
    ing = Ingestor(store, HashingEmbedder(64))
    ing._refresh = lambda: None  # as if killed right after the first commit
    ing.ingest_documents(_random_docs(5, 1, 3))
    assert store.unindexed_rows() == 5 and store._table.list_indices() == []
    assert store.lexical_search(["w1", "w2", "w3"], 3)  # still searchable (flat) meanwhile
    again = LanceStore(tmp_path / "s", 64, scalar_min_rows=0)
    report = Ingestor(again, HashingEmbedder(64)).ingest_documents(_random_docs(5, 1, 3))
    assert report.unchanged == 5
    reopened = LanceStore(tmp_path / "s", 64)
    assert reopened.unindexed_rows() == 0
    assert sorted(tuple(i.columns) for i in reopened._table.list_indices()) == [
        ("chunk_id",),
        ("current",),
        ("doc_id",),
        ("groups",),
        ("lexical",),
        ("meta_terms",),
        ("title_ids",),
        ("version",),
    ]


class FailingEmbedder(HashingEmbedder):
    def embed(self, texts):
        if any("explode" in t for t in texts):
            raise RuntimeError("model server returned 503")
        return super().embed(texts)


def test_embedder_failure_keeps_the_previous_version(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "a.md", "A", "original alpha text")
    write_doc(root, "b.md", "B", "original beta text")
    store = LanceStore(tmp_path / "s", 256)
    Ingestor(store, FailingEmbedder(256), batch_docs=1).ingest_folder(root)
    write_doc(root, "a.md", "A", "explode the alpha text")
    write_doc(root, "b.md", "B", "changed beta text")
    report = Ingestor(store, FailingEmbedder(256), batch_docs=1).ingest_folder(root)
    assert report.errors == [
        f"{root / 'a.md'}: embedding failed (RuntimeError: model server returned 503); previous version kept"
    ]
    assert report.updated == 1
    assert [h.doc_id for h in store.lexical_search(["origin", "alpha"], 5)] == ["a"]
    assert store.lexical_search(["explod"], 5) == [] and store.lexical_search(["explode"], 5) == []


# -- watch ---------------------------------------------------------------------------------------


def test_watch_reindexes_on_create_modify_delete(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "a.md", "Alpha", "alpha text about invoices")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    reports: queue.Queue = queue.Queue()
    watcher = FolderWatcher(idx, root, debounce=0.2, rescan=None, on_run=reports.put)
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    try:
        first = reports.get(timeout=20)
        assert first.added == 1
        write_doc(root, "b.md", "Beta", "beta text about chargebacks")
        assert reports.get(timeout=20).added == 1
        write_doc(root, "a.md", "Alpha", "alpha text about refunds now")
        assert reports.get(timeout=20).updated == 1
        (root / "b.md").unlink()
        assert reports.get(timeout=20).deleted == 1
        assert sorted(idx.store.documents()) == ["a"]
        assert [h.doc_id for h in idx.search("refunds", 3, retriever="bm25")] == ["a"]
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive()
    assert reports.empty()  # reading files during ingest did not trigger more runs


def test_watch_follows_a_folder_swapped_in_or_made_again(tmp_path):
    """The OS watch follows the folder it was put on: after `mv docs docs.old; mv docs.new docs`
    (or `rm -rf docs` and a new docs/) nothing was indexed again and nothing was said."""
    root, new = tmp_path / "docs", tmp_path / "docs.new"
    write_doc(root, "a.md", "Alpha", "alpha text about invoices")
    write_doc(new, "a.md", "Alpha", "alpha text about refunds")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    reports: queue.Queue = queue.Queue()
    errors: list[str] = []
    watcher = FolderWatcher(idx, root, debounce=0.2, rescan=None, on_run=reports.put, on_error=errors.append)
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert reports.get(timeout=20).added == 1
        root.rename(tmp_path / "docs.old")
        new.rename(root)
        assert reports.get(timeout=20).updated == 1  # the swapped-in folder is ingested
        write_doc(root, "b.md", "Beta", "beta text about chargebacks")  # and watched
        assert reports.get(timeout=20).added == 1
        shutil.rmtree(root)
        deadline = time.monotonic() + 20
        while not errors and time.monotonic() < deadline:
            time.sleep(0.05)
        assert errors == [f"{root.resolve()}: the watched folder is gone; waiting for it to come back"]
        write_doc(root, "c.md", "Gamma", "gamma text about payouts")
        got = reports.get(timeout=20)
        while got.added == 0 and got.deleted == 0:  # an event-driven run may come first
            got = reports.get(timeout=20)
        assert sorted(idx.store.documents()) == ["c"]
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive()


def test_watch_rejects_a_file_and_bad_debounce(tmp_path):
    idx = Index.open(tmp_path / "index", embedder="hashing")
    (tmp_path / "f.md").write_text("x")
    with pytest.raises(Exception, match="not a folder"):
        FolderWatcher(idx, tmp_path / "f.md")
    # nan and inf were accepted, and then nothing was ever re-indexed
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(Exception, match="debounce must be a finite number of seconds > 0"):
            FolderWatcher(idx, tmp_path, debounce=bad)
    with pytest.raises(Exception, match="rescan must be a number of seconds > 0"):
        FolderWatcher(idx, tmp_path, rescan=float("nan"))


def test_table_folder_without_a_committed_version_is_discarded_on_open(tmp_path):
    # what a process killed inside LanceDB's create_table leaves behind (seen in test_crash.py)
    (tmp_path / "s" / "chunks.lance" / "data").mkdir(parents=True)
    (tmp_path / "s" / "chunks.lance" / "data" / "partial.lance").write_bytes(b"\0" * 64)
    (tmp_path / "s" / "ingest_runs.lance" / "_versions").mkdir(parents=True)
    store = LanceStore(tmp_path / "s", 64)
    assert store.stats()["chunks"] == 0 and store.runs() == []
    report = Ingestor(store, HashingEmbedder(64)).ingest_documents(_random_docs(3, 1, 5))
    assert report.added == 3 and LanceStore(tmp_path / "s", 64).stats()["documents"] == 3
