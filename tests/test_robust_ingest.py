"""Issue 13 (robustness, ingest and CLI): bad input gets one clear line naming the file (and
line), never a traceback and never silent loss; hostile front matter, special files, symlinks,
concurrent ingests, huge queries. All with the hashing embedder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from citewise.cli import EXIT_FILE_ERRORS, app
from citewise.core import CitewiseError, InputError
from citewise.index import MAX_QUERY_CHARS, Index, IndexBusy, ingest_lock
from citewise.text.loaders import load_markdown, scan_folder

from conftest import write_doc

runner = CliRunner()


def md(path: Path, front: str, body: str = "# Title\n\nSome body text about refunds.\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}\n---\n{body}", encoding="utf-8")
    return path


def new_index(tmp_path: Path) -> Index:
    return Index.open(tmp_path / "index", embedder="hashing")


def lines_naming(report, path: Path) -> list[str]:
    return [ln for ln in report.errors + report.warnings if str(path) in ln]


# -- item 1: any exception while loading one file is that file's line ------------------------
def test_impossible_date_is_that_files_error_and_the_rest_is_ingested(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "good.md", "Good", "Refunds take 30 days.")
    bad = md(root / "bad.md", 'title: "Bad"\nupdated: 2026-02-30')
    report = new_index(tmp_path).ingest(root)
    assert report.added == 1
    assert report.errors == [
        f"{bad}:3: front matter 'updated': 2026-02-30 is not a real date (day is out of range for month)"
    ]


def test_an_unexpected_loader_exception_becomes_that_files_line(tmp_path, monkeypatch):
    import citewise.text.loaders as loaders

    root = tmp_path / "docs"
    write_doc(root, "good.md", "Good", "Refunds take 30 days.")
    boom = write_doc(root, "boom.md", "Boom", "text")
    real = loaders.load_markdown

    def flaky(path, base):
        if path.name == "boom.md":
            raise KeyError("surprise")
        return real(path, base)

    monkeypatch.setattr(loaders, "load_markdown", flaky)
    report = new_index(tmp_path).ingest(root)
    assert report.added == 1
    assert report.errors == [f"{boom}: could not be loaded (KeyError: 'surprise')"]


# -- item 2: special files are never opened ---------------------------------------------------
def test_fifo_is_skipped_with_a_line_not_waited_on(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "good.md", "Good", "Refunds take 30 days.")
    fifo = root / "pipe.md"
    os.mkfifo(fifo)
    result: dict = {}
    t = threading.Thread(target=lambda: result.setdefault("r", new_index(tmp_path).ingest(root)), daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "ingest hung on a FIFO"
    report = result["r"]
    assert report.added == 1
    assert report.errors == [f"{fifo}: a FIFO (named pipe), not a regular file; skipped"]


# -- item 3: alias bombs and types ----------------------------------------------------------
ALIAS_BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
    + ["version: *i"]
)


def test_yaml_alias_bomb_is_refused_quickly(tmp_path):
    path = md(tmp_path / "bomb.md", ALIAS_BOMB)
    assert len(ALIAS_BOMB) < 600
    t0 = time.perf_counter()
    with pytest.raises(InputError) as e:
        load_markdown(path, tmp_path)
    assert time.perf_counter() - t0 < 1.0
    assert "aliases (*name) are not allowed" in e.value.reason and e.value.line == 3


@pytest.mark.parametrize(
    "front, message, line",
    [
        ("id: [a, b]", "front matter 'id' must be text, got list", 2),
        ("id: '   '", "front matter 'id' must be a non-empty string", 2),
        ("id: pay@1", "contains '@', which is reserved", 2),
        ("id: ../../etc/passwd", "has an absolute or '.'/'..' path part", 2),
        ("id: /etc/passwd", "has an absolute or '.'/'..' path part", 2),
        ("title: {a: 1}", "front matter 'title' must be text, got dict", 2),
        ("title: " + "x" * 600, "front matter 'title' is 600 characters (limit 500)", 2),
        ("title: |\n  one\n  two", "front matter 'title' must be one line", 2),
        ("version: [1, 2]", "front matter 'version' must be text, got list", 2),
        ("version: yes", "front matter 'version' must be text, got bool", 2),
        ("version: " + "9" * 100, "front matter 'version' is 100 characters (limit 64)", 2),
        ("title: x\nupdated: 20260101", "front matter 'updated' must be an ISO date (YYYY-MM-DD), got 20260101", 3),
        ("updated: [2026-01-01]", "front matter 'updated' must be an ISO date", 2),
        ("effective: 2026-13-01", "front matter 'effective': 2026-13-01 is not a real date", 2),
        ("permissions: {finance: true}", "front matter 'permissions' must be a list of group names", 2),
        ("permissions: [1]", "front matter 'permissions' must list group names (text), got 1", 2),
        ("permissions: [' ']", "front matter 'permissions' has a blank group ' '", 2),
        ("permissions: [finance, '']", "front matter 'permissions' has a blank group ''", 2),
        ("permissions: '  '", "front matter 'permissions' is blank", 2),
        # a key given twice: last-wins made a later 'permissions: [public]' open a restricted document
        ("permissions: [finance]\ntitle: x\npermissions: [public]", "key 'permissions' is given twice", 4),
    ],
)
def test_every_front_matter_key_is_type_checked(tmp_path, front, message, line):
    path = md(tmp_path / "doc.md", front)
    with pytest.raises(InputError) as e:
        load_markdown(path, tmp_path)
    assert message in e.value.reason and e.value.line == line


# -- item 4: misspelled permission keys fail closed, other keys are metadata ----------------------
@pytest.mark.parametrize("key", ["Permissions", "permission", "PERMISSIONS", "permisions", "premissions"])
def test_misspelled_permissions_key_is_an_error_not_public(tmp_path, key):
    root = tmp_path / "docs"
    path = md(root / "secret.md", f"title: Secret\n{key}: [finance]")
    idx = new_index(tmp_path)
    report = idx.ingest(root)
    assert report.added == 0 and idx.store.stats()["documents"] == 0
    assert report.errors == [
        f"{path}:3: front matter key '{key}' is not 'permissions' (spelled exactly, lower case); "
        "refusing the file rather than ignoring its permissions"
    ]


def test_other_front_matter_keys_are_metadata_and_an_unfilterable_key_warns_with_its_line(tmp_path):
    root = tmp_path / "docs"
    path = md(root / "doc.md", "title: Doc\nauthor: Ana\ntags: [a]\nteam lead: Bo")
    idx = new_index(tmp_path)
    report = idx.ingest(root)
    assert report.added == 1 and not report.errors
    assert report.warnings == [
        f"{path}:5: front matter key 'team lead' is kept as metadata but cannot be filtered on "
        "(use letters, digits, '_', '.' or '-')",
    ]
    (chunk,) = idx.store.get_chunks([h.chunk_id for h in idx.search("refunds", 1, retriever="bm25")]).values()
    assert chunk.metadata == {"author": "Ana", "tags": ["a"], "team lead": "Bo"}
    res = runner.invoke(app, ["ingest", str(root), "--index", str(tmp_path / "index"), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["warnings"] == report.warnings


# -- item 5: symlinks out of the folder -----------------------------------------------------
def test_symlink_outside_the_folder_is_not_followed_unless_asked(tmp_path):
    outside = tmp_path / "outside"
    secret = write_doc(outside, "secret.md", "Salaries", "The CEO earns a lot.")
    root = tmp_path / "docs"
    write_doc(root, "good.md", "Good", "Refunds take 30 days.")
    link = root / "leak.md"
    link.symlink_to(secret)
    dirlink = root / "leakdir"
    dirlink.symlink_to(outside, target_is_directory=True)
    idx = new_index(tmp_path)
    report = idx.ingest(root)
    assert report.added == 1 and set(idx.store.documents()) == {"good"}
    assert report.errors == [
        f"{dirlink}: symlink to {outside}, outside the ingested folder; not followed (use --follow-links to ingest it)",
        f"{link}: symlink to {secret}, outside the ingested folder; not followed (use --follow-links to ingest it)",
    ]
    followed = idx.ingest(root, follow_links=True)
    assert not followed.errors and set(idx.store.documents()) == {"good", "leak", "leakdir/secret"}
    # not asked again: the linked documents leave the index, each with a line
    again = idx.ingest(root)
    assert set(idx.store.documents()) == {"good"} and again.deleted == 2
    assert sorted(r.split(" ")[0] for r in again.removed) == ["leak", "leakdir/secret"]


def test_dangling_symlink_and_folder_named_like_a_file(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "good.md", "Good", "Refunds take 30 days.")
    dangling = root / "gone.md"
    dangling.symlink_to(tmp_path / "nowhere.md")
    folder = root / "notes.md"
    write_doc(folder, "inner.md", "Inner", "Inner text.")
    items = list(scan_folder(root))
    assert [str(i) for i in items if isinstance(i, InputError)] == [
        f"{folder}: a folder named like a document file; ingesting the files inside it",
        f"{dangling}: dangling symlink (its target {tmp_path / 'nowhere.md'} does not exist); skipped",
    ]
    report = new_index(tmp_path).ingest(root)
    assert report.added == 2 and len(report.errors) == 1 and len(report.warnings) == 1
    # a two-link loop is a loop, not a missing target
    (root / "loop-a.md").symlink_to(root / "loop-b.md")
    (root / "loop-b.md").symlink_to(root / "loop-a.md")
    lines = [str(i) for i in scan_folder(root) if isinstance(i, InputError) and "loop" in str(i)]
    assert lines == [
        f"{root / 'loop-a.md'}: symlink loop (its target {root / 'loop-b.md'} leads back to it); skipped",
        f"{root / 'loop-b.md'}: symlink loop (its target {root / 'loop-a.md'} leads back to it); skipped",
    ]


# -- item 7: '@' ids are reserved for history -----------------------------------------------
def test_an_id_like_a_history_id_is_refused_and_history_survives(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "pay-v1.md", "Pay", "Old rule.", id="pay", version="1")
    write_doc(root, "pay-v2.md", "Pay", "New rule.", id="pay", version="2")
    idx = new_index(tmp_path)
    idx.ingest(root)
    assert {"pay", "pay@1"} <= set(idx.store.documents())
    clash = md(root / "clash.md", "id: pay@1")
    named = write_doc(root, "pay@1.md", "Named", "A file named like a history id.")
    report = idx.ingest(root)
    assert {"pay", "pay@1"} <= set(idx.store.documents()) and report.deleted == 0
    assert report.errors == [
        f"{clash}:2: front matter 'id' 'pay@1' contains '@', which is reserved for older versions kept as history (id@version)",
        f"{named}: document id 'pay@1' contains '@', which is reserved for older versions kept as history "
        "(id@version); rename the file or set another 'id'; skipped",
    ]


# -- item 8: one ingest at a time -----------------------------------------------------------
def test_second_ingest_says_another_is_running_or_waits(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "good.md", "Good", "Refunds take 30 days.")
    idx = new_index(tmp_path)
    with ingest_lock(idx.path):
        with pytest.raises(IndexBusy, match=rf"another ingest is running \(pid {os.getpid()}\)"):
            idx.ingest(root)
        res = subprocess.run(
            [sys.executable, "-m", "citewise.cli", "ingest", str(root), "--index", str(idx.path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 2 and res.stderr.strip() == (
            f"error: {idx.path}: another ingest is running (pid {os.getpid()}); wait for it to finish, or pass --wait"
        )
    assert idx.store.stats()["documents"] == 0
    messages = []
    lock = ingest_lock(idx.path)
    lock.__enter__()
    threading.Timer(0.5, lambda: lock.__exit__(None, None, None)).start()
    t0 = time.monotonic()
    report = idx.ingest(root, wait=True, on_wait=messages.append)
    assert time.monotonic() - t0 >= 0.4 and report.added == 1
    assert messages == [f"{idx.path}: another ingest is running (pid {os.getpid()}); waiting for it to finish"]


# -- item 10: clear errors, nothing created -------------------------------------------------
def test_bad_policy_or_index_path_creates_nothing(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "good.md", "Good", "Refunds take 30 days.")
    (tmp_path / "bad-policy.yaml").write_text("rules: [oops]\n")
    for policy in (tmp_path / "missing.yaml", tmp_path / "bad-policy.yaml"):
        res = runner.invoke(app, ["ingest", str(root), "--index", str(tmp_path / "new"), "--policy", str(policy)])
        assert res.exit_code != 0 and isinstance(res.exception, CitewiseError)
        assert str(policy) in str(res.exception)
        assert not (tmp_path / "new").exists()
    a_file = tmp_path / "not-an-index"
    a_file.write_text("hello")
    with pytest.raises(CitewiseError, match="not an index folder"):
        Index.open(a_file, embedder="hashing")


def test_db_that_is_not_sqlite_is_one_clear_line(tmp_path):
    bogus = tmp_path / "records.db"
    bogus.write_text("not a database")
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "citewise.cli",
            "tools",
            "call",
            "sql_query",
            "--db",
            str(bogus),
            "--args",
            '{"sql": "SELECT 1"}',
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2 and res.stderr.strip() == f"error: {bogus}: not a SQLite database (--db)"


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-16-le", "utf-32"])
def test_utf16_and_utf32_with_a_bom_are_decoded_and_ingested(tmp_path, codec):
    root = tmp_path / "docs"
    root.mkdir()
    text = "---\ntitle: Café rules\n---\n# Café rules\n\nRefunds in euros take 14 days.\n"
    bom = {"utf-16-be": b"\xfe\xff", "utf-16-le": b"\xff\xfe"}.get(codec, b"")
    (root / "cafe.md").write_bytes(bom + text.encode(codec))
    idx = new_index(tmp_path)
    report = idx.ingest(root)
    assert report.added == 1 and not report.errors
    hits = idx.search("euros refunds", k=1, retriever="bm25")
    assert hits and hits[0].doc_id == "cafe" and hits[0].title == "Café rules"


# -- item 12: exit status -------------------------------------------------------------------
def test_ingest_exit_status_says_files_failed_unless_allowed(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "good.md", "Good", "Refunds take 30 days.")
    (root / "bad.md").write_bytes(b"\xff\xfe\x00")  # odd UTF-16: undecodable
    index = str(tmp_path / "index")
    res = runner.invoke(app, ["ingest", str(root), "--index", index, "--embedder", "hashing", "--json"])
    assert res.exit_code == EXIT_FILE_ERRORS == 3
    data = json.loads(res.stdout)
    assert set(data) == {
        "added",
        "updated",
        "unchanged",
        "deleted",
        "chunks_embedded",
        "metadata_updated",
        "errors",
        "superseded",
        "warnings",
        "duplicates",
        "units_embedded",
        "units_refreshed",
        "moved",
        "moved_from",
        "added_docs",
        "updated_docs",
        "deleted_docs",
        "index",
        "documents",
        "chunks",
    }
    assert data["added"] == 1 and len(data["errors"]) == 1 and "bad.md" in data["errors"][0]
    assert (data["added_docs"], data["updated_docs"], data["deleted_docs"]) == (["good"], [], [])
    res = runner.invoke(app, ["ingest", str(root), "--index", index, "--allow-errors"])
    assert res.exit_code == 0
    (root / "bad.md").unlink()
    res = runner.invoke(app, ["ingest", str(root), "--index", index])
    assert res.exit_code == 0


def test_ingest_json_names_the_documents_added_updated_and_deleted(tmp_path):
    # found by a fresh-clone run: only deletions were named; an edit showed up as "1 updated"
    root = tmp_path / "docs"
    write_doc(root, "a.md", "Alpha", "Refunds take 30 days.")
    write_doc(root, "b.md", "Beta", "Invoices are sent monthly.")
    write_doc(root, "c.md", "Gamma", "Exports are CSV files.")
    index = str(tmp_path / "index")
    first = json.loads(
        runner.invoke(app, ["ingest", str(root), "--index", index, "--embedder", "hashing", "--json"]).stdout
    )
    assert (sorted(first["added_docs"]), first["updated_docs"], first["deleted_docs"]) == (["a", "b", "c"], [], [])
    write_doc(root, "b.md", "Beta", "Invoices are sent weekly.")
    (root / "c.md").unlink()
    write_doc(root, "d.md", "Delta", "Receipts are PDF files.")
    res = runner.invoke(app, ["ingest", str(root), "--index", index, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["added_docs"], data["updated_docs"], data["deleted_docs"]) == (["d"], ["b"], ["c"])
    assert (data["added"], data["updated"], data["unchanged"], data["deleted"]) == (1, 1, 1, 1)


# -- item 15: progress and query length ---------------------------------------------------
def test_embedding_progress_counts_chunks_not_files(tmp_path):
    root = tmp_path / "docs"
    for i in range(3):  # distinct texts: identical documents would be skipped as near-duplicates
        write_doc(
            root, f"d{i}.md", f"Doc {i}", "\n\n".join(f"## Part {j}\n\n" + f"word{i}x{j} " * 400 for j in range(30))
        )
    calls = []
    report = new_index(tmp_path).ingest(root, embed_progress=lambda done, planned: calls.append((done, planned)))
    assert report.chunks_embedded >= 90 and not report.duplicates  # at least one chunk per part
    # progress counts every text embedded: a new index makes chunk vectors from its units
    # (``units-mean``), and every chunk here has units, so the texts embedded are the units
    n = report.units_embedded
    assert n > 64 and calls[0] == (0, n) and calls[-1] == (n, n)
    assert len(calls) >= 3 and all(a[0] <= b[0] for a, b in zip(calls, calls[1:]))


def test_piped_progress_prints_a_line_with_rate_and_eta(monkeypatch, capsys):
    import citewise.cli.common as cli  # _embed_progress reads the interval there

    monkeypatch.setattr(cli, "PROGRESS_LINE_EVERY_S", 0.0)
    with cli._embed_progress(True) as tick:  # capsys: stderr is not a terminal
        tick(0, 100)
        time.sleep(0.01)
        tick(50, 100)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("embedding: 50/100 texts (")
    assert "texts/s, ETA " in lines[0]


def test_a_huge_query_is_refused_quickly(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "good.md", "Good", "Refunds take 30 days.")
    idx = new_index(tmp_path)
    idx.ingest(root)
    huge = "refund " * 11000  # ~75 KB
    t0 = time.perf_counter()
    for call in (lambda: idx.search(huge), lambda: idx.ask(huge)):
        with pytest.raises(CitewiseError, match=f"query is 77,000 characters; the limit is {MAX_QUERY_CHARS:,}"):
            call()
    assert time.perf_counter() - t0 < 1.0
    assert idx.search("refund " * 100)  # a long but sane query still works
    for cmd in ("search", "ask"):
        res = runner.invoke(app, [cmd, huge, "--index", str(idx.path)])
        assert res.exit_code != 0 and "the limit is 2,000" in str(res.exception)


def test_a_store_failure_on_one_document_keeps_its_old_version_and_writes_the_rest(tmp_path, monkeypatch):
    root = tmp_path / "docs"
    write_doc(root, "a.md", "A", "Alpha text.")
    bad = write_doc(root, "b.md", "B", "Beta text.")
    idx = new_index(tmp_path)
    idx.ingest(root)
    write_doc(root, "a.md", "A", "Alpha text, edited.")
    write_doc(root, "b.md", "B", "Beta text, edited.")
    real = idx.store.upsert

    def picky(updates):
        if any(u.document.doc_id == "b" for u in updates):
            raise RuntimeError("disk full")
        return real(updates)

    monkeypatch.setattr(idx.store, "upsert", picky)
    report = idx.ingest(root)
    assert report.updated == 1
    assert report.errors == [f"{bad}: could not be stored (RuntimeError: disk full); previous version kept"]
    chunks = idx.store.get_chunks(["a#a", "b#b"])
    assert "edited" in chunks["a#a"].text and "edited" not in chunks["b#b"].text


def test_a_file_deleted_while_its_folder_moved_leaves_the_index(tmp_path):
    """docs/ renamed to docs2/ and docs2/gone.md deleted: the ingest of docs2 found keep.md moved
    but left gone.md indexed for good (only documents under the ingested folder were candidates
    for deletion, and docs/ no longer exists to be ingested)."""
    from conftest import write_doc
    from citewise.index import Index

    old, new = tmp_path / "docs", tmp_path / "docs2"
    write_doc(old, "keep.md", "Keep", "Swans nest by the lake.")
    write_doc(old, "gone.md", "Gone", "Plovers nest on the shingle.")
    other = tmp_path / "other"
    write_doc(other, "stays.md", "Stays", "Herons fish at dawn.")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    assert idx.ingest(old).added == 2 and idx.ingest(other).added == 1
    old.rename(new)
    (new / "gone.md").unlink()
    report = idx.ingest(new)
    assert (report.moved, report.deleted, report.deleted_docs) == (1, 1, ["gone"])
    assert idx.search("plovers shingle", 3, retriever="bm25") == []
    # a document of another folder, whose file still exists, is not touched
    assert sorted(idx.store.documents()) == ["keep", "stays"]


def test_a_decimal_version_keeps_its_written_digits(tmp_path):
    """``version: 1.10`` was the float 1.1, so an unquoted 1.9 superseded it (break-it trial)."""
    root = tmp_path / "docs"
    for name, version in (("r110.md", "1.10"), ("r19.md", "1.9"), ("r2.md", "2")):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"---\nid: rel-{name[:-3]}\nversion: {version}\n---\n# R\n\nText.\n", encoding="utf-8")
    assert [load_markdown(root / n, root).version for n in ("r110.md", "r19.md", "r2.md")] == ["1.10", "1.9", "2"]
    (root / "r19.md").write_text("---\nid: rel-r110\nversion: 1.9\n---\n# R\n\nNine.\n", encoding="utf-8")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    report = idx.ingest(root)
    assert report.superseded == [
        f"{root / 'r19.md'}: version '1.9' of 'rel-r110' superseded by version '1.10' in "
        f"{root / 'r110.md'}; kept as history ('rel-r110@1.9')"
    ]
    assert idx.store.documents()["rel-r110"].version == "1.10"


def test_a_huge_heading_gives_short_chunk_ids(tmp_path):
    """A 320,000-character heading made every chunk id of its document that long and aborted the
    whole folder's ingest in LanceDB's id index (break-it trial); slugs are capped."""
    from citewise.text.chunker import MAX_SLUG_CHARS

    root = tmp_path / "docs"
    root.mkdir()
    (root / "long.md").write_text(
        "# " + "verylongheading " * 2000 + "\n\nThe body mentions kestrels.\n", encoding="utf-8"
    )
    write_doc(root, "other.md", "Other", "Another page.")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    report = idx.ingest(root)
    assert report.errors == [] and report.added == 2
    hits = idx.search("kestrels", 3, retriever="bm25")
    assert hits and hits[0].doc_id == "long"
    assert all(len(h.chunk_id) <= len("long#") + MAX_SLUG_CHARS + 4 for h in hits)


@pytest.mark.parametrize(
    "name, text, fix",
    [
        (
            "lead.md",
            "\n---\npermissions: [finance]\n---\n# S\n\nSecret.\n",
            "front matter must start on the first line",
        ),
        ("toml.md", '+++\npermissions = ["finance"]\n+++\n# S\n\nSecret.\n', "TOML front matter (+++) is not read"),
        ("notes.txt", "---\npermissions: [finance]\n---\nSecret.\n", "use a policy rule to restrict this file"),
        ("page.html", "---\npermissions: [finance]\n---\n<h1>S</h1><p>Secret.</p>\n", 'or <meta name="permissions"'),
        # a fresh-clone trial: each of these was indexed public, its permissions line as text
        (
            "dashes.md",
            "----\npermissions: [finance]\n----\n# S\n\nSecret.\n",
            "fences are exactly three dashes ('---'), not '----'",
        ),
        (
            "indented.md",
            " ---\n permissions: [finance]\n ---\n# S\n\nSecret.\n",
            "must start on the first line, unindented",
        ),
        ("bare.md", "id: bare\npermissions: [finance]\n\n# S\n\nSecret.\n", "front matter goes between '---' lines"),
        ("bare.txt", "permissions: finance\nSecret.\n", "use a policy rule to restrict this file"),
    ],
)
def test_a_permissions_block_that_is_not_read_as_front_matter_is_refused(tmp_path, name, text, fix):
    """Indexed as text, these took the default permission (public) and their 'permissions:' line
    became searchable (break-it trial): refused, naming the fix."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / name).write_text(text, encoding="utf-8")
    (root / "plain.md").write_text(
        "# Plain\n\n---\n\npermissions: a word in a paragraph after a rule.\n", encoding="utf-8"
    )
    idx = Index.open(tmp_path / "index", embedder="hashing")
    report = idx.ingest(root)
    assert len(report.errors) == 1 and report.errors[0].startswith(
        f"{root / name}:1: a front-matter block naming 'permissions'"
    )
    assert fix in report.errors[0]
    assert set(idx.store.documents()) == {"plain"}


@pytest.mark.parametrize("block", ["permissions: ~", "permissions:", "permissions: []", "permissions:\n  # - finance"])
def test_an_empty_permissions_key_is_refused_not_read_as_no_permissions(tmp_path, block):
    """An author who writes the key means to restrict the document: ``permissions: ~`` or a list
    whose items are commented out made it public (fresh-clone trial), while ``permissions: ""``
    was already refused as blank."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "s.md").write_text(f"---\n{block}\n---\n# S\n\nThe vault code is 4411.\n", encoding="utf-8")
    (root / "plain.md").write_text("# Plain\n\npermissions: are a paragraph here, not metadata.\n", encoding="utf-8")
    idx = Index.open(tmp_path / "index", embedder="hashing")
    report = idx.ingest(root)
    assert report.errors == [
        f"{root / 's.md'}:2: front matter 'permissions' is empty (remove the key, or name the groups)"
    ]
    assert set(idx.store.documents()) == {"plain"}


def test_an_html_page_in_its_declared_encoding_is_read(tmp_path):
    """<meta charset="iso-8859-1"> pages were refused as "not UTF-8" (break-it trial); a page
    that declares nothing and is not UTF-8 still is."""
    from citewise.text.loaders import load_html

    page = tmp_path / "cafe.html"
    page.write_bytes(
        '<html><head><meta charset="iso-8859-1"><title>Café</title></head>'
        "<body><h1>Café</h1><p>Crème brûlée costs 5 euros.</p></body></html>".encode("latin-1")
    )
    assert "Crème brûlée costs 5 euros." in load_html(page, tmp_path).text
    quoted = tmp_path / "q.html"
    quoted.write_bytes(
        b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><p>\x93smart\x94 quotes</p>'
    )
    assert "\u201csmart\u201d quotes" in load_html(quoted, tmp_path).text
    bare = tmp_path / "bare.html"
    bare.write_bytes("<p>Crème</p>".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        load_html(bare, tmp_path)
