"""Faults a new user meets on a fresh clone: labels, help text, messages and exit codes of the CLI
(each test failed before its fix)."""

from __future__ import annotations

import html
import json

import pytest
import typer
from typer.testing import CliRunner

from citewise.cli import app

from conftest import write_doc

runner = CliRunner()


@pytest.fixture(scope="module")
def tiny_index(tmp_path_factory):
    """Three public pages indexed with the hashing embedder: ``(index folder, docs folder)``."""
    tmp = tmp_path_factory.mktemp("faults")
    root = tmp / "docs"
    write_doc(root, "billing/refunds.md", "Refund policy", "## Window\nThe refund window is 30 days from the charge.")
    write_doc(root, "billing/invoices.md", "Invoices", "Invoices are sent on the first day of the month.")
    write_doc(root, "errors/E-1004.md", "E-1004: Invoice currency mismatch", "Change the invoice currency.")
    index = tmp / "index"
    res = runner.invoke(app, ["ingest", str(root), "--index", str(index), "--embedder", "hashing", "--json"])
    assert res.exit_code == 0, res.output
    return index, root


def _commands(cmd, path: tuple[str, ...] = ()):
    yield path, cmd
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


def test_hybrid_prf_hits_are_labelled_with_the_retriever_name(tiny_index):
    index, _ = tiny_index
    res = runner.invoke(app, ["search", "refund window", "--retriever", "hybrid-prf", "--index", str(index), "--json"])
    assert res.exit_code == 0, res.output
    hits = json.loads(res.stdout)["hits"]
    assert hits and {h["stage"] for h in hits} == {"hybrid-prf"}
    res = runner.invoke(
        app,
        ["search", "refund window", "--retriever", "hybrid-prf", "--index", str(index), "--k", "1"],
        env={"COLUMNS": "200"},
    )
    assert res.exit_code == 0, res.output
    assert "hybrid-prf" in res.stdout and "convex" not in res.stdout


def test_every_switch_reads_like_a_flag_in_help():
    root = typer.main.get_command(app)
    seen_flags = 0
    for path, cmd in _commands(root):
        res = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0, (path, res.output)
        assert "<bool>" not in res.stdout, (path, res.stdout)
        for p in cmd.params:
            if p.param_type_name == "option" and getattr(p, "is_flag", False) and not p.count and not p.hidden:
                seen_flags += 1
                line = next(ln for ln in res.stdout.splitlines() if p.opts[0] + " " in ln)
                after = line.split(p.opts[0], 1)[1].split()
                # the next word is the help text, never a value placeholder like <bool> or BOOLEAN
                assert after and not after[0].startswith("<") and after[0] != "BOOLEAN", (path, line)
    assert seen_flags >= 20  # --json on most commands, --wait, --llm, --dry-run, ...


@pytest.mark.integration  # three demo runs over the whole sample corpus
def test_second_clone_demo_reports_documents_unchanged_and_moved(tmp_path, monkeypatch):
    """Two clones share ~/.local/share/citewise/demo: the second one's corpus has other paths."""
    import shutil

    import citewise.demo
    from citewise.demo import sample_dir

    clones = [tmp_path / "clone1", tmp_path / "clone2"]
    for c in clones:
        shutil.copytree(sample_dir(), c / "sample")
    shared = tmp_path / "shared-demo"
    outputs = []
    for c in clones:
        monkeypatch.setattr(citewise.demo, "sample_dir", lambda c=c: c / "sample")
        res = runner.invoke(app, ["demo", "--embedder", "hashing", "--index", str(shared)], env={"COLUMNS": "300"})
        assert res.exit_code == 0, res.output
        outputs.append(res.stdout)
    assert "60 added, 0 updated, 0 unchanged, 0 deleted -> 60 documents" in outputs[0]
    assert f"0 added, 0 updated, 60 unchanged (moved from {clones[0]}), 0 deleted -> 60 documents" in outputs[1]
    assert "permissions" not in outputs[1].split("Sample question")[0]
    # and back: the first clone's next run names the second clone
    monkeypatch.setattr(citewise.demo, "sample_dir", lambda: clones[0] / "sample")
    res = runner.invoke(app, ["demo", "--embedder", "hashing", "--index", str(shared)], env={"COLUMNS": "300"})
    assert f"60 unchanged (moved from {clones[1]})" in res.stdout


def test_ingest_json_counts_moved_documents_as_unchanged(tmp_path):
    import shutil

    from citewise.ingest import IngestReport, moved_root

    write_doc(tmp_path / "a" / "docs", "x.md", "X", "Refunds take 30 days.")
    write_doc(tmp_path / "a" / "docs", "sub/y.md", "Y", "Invoices go out monthly.")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    index = str(tmp_path / "index")
    assert (
        runner.invoke(
            app, ["ingest", str(tmp_path / "a" / "docs"), "--index", index, "--embedder", "hashing"]
        ).exit_code
        == 0
    )
    res = runner.invoke(app, ["ingest", str(tmp_path / "b" / "docs"), "--index", index, "--json"])
    data = json.loads(res.stdout)
    assert (data["added"], data["updated"], data["unchanged"], data["metadata_updated"], data["moved"]) == (
        0,
        0,
        2,
        0,
        2,
    )
    assert data["moved_from"] == {str(tmp_path / "a"): 2} and data["chunks_embedded"] == 0
    assert moved_root("/a/c1/docs/x.md", "/b/c2/docs/x.md") == "/a/c1"
    assert moved_root("/a/docs/x.md", "/a/docs/z.md") == "/a/docs/x.md"  # renamed: the old file
    r = IngestReport(unchanged=7, moved=5, moved_from={"/a": 3, "/b": 2})
    assert r.unchanged_text() == "7 unchanged (3 moved from /a, 2 from /b)"
    assert IngestReport(unchanged=4).unchanged_text() == "4 unchanged"


def test_serve_says_listening_at_once_then_ready_after_the_model_loads(tiny_index, monkeypatch):
    """The start line used to come after the service imports and before the model load, which
    the first request then paid. Now: "listening" right after the bind, then load the app and the
    model, then "ready", then accept requests."""
    import uvicorn

    import citewise.cli
    import citewise.service.app as service_app

    index, _ = tiny_index
    events: list[str] = []
    monkeypatch.setattr(citewise.cli.err, "print", lambda msg, **kw: events.append(str(msg)))
    real_create, real_warm = service_app.create_app, service_app.warm
    monkeypatch.setattr(
        service_app, "create_app", lambda *a, **kw: (events.append("create_app"), real_create(*a, **kw))[1]
    )

    def warm(svc):
        events.append("warm")
        done = real_warm(svc)
        assert svc.pool._opened == 1 and svc.pool._free.qsize() == 1  # a handle open before any request
        assert svc.pool._free.queue[0].index.store._postings is not None  # and its store warmed (Store.warm)
        return done

    monkeypatch.setattr(service_app, "warm", warm)

    def run(self, sockets):
        events.append("accept")
        for s in sockets:
            s.close()

    monkeypatch.setattr(uvicorn.Server, "run", run)
    res = runner.invoke(app, ["serve", "--index", str(index), "--port", "0"])
    assert res.exit_code == 0, res.output
    assert len(events) == 5, events
    assert events[0].startswith("citewise listening on http://127.0.0.1:") and "loading the index" in events[0]
    port = events[0].split("127.0.0.1:")[1].split(";")[0]
    assert events[1:3] == ["create_app", "warm"]
    assert events[3].startswith(f"citewise serving {index} on http://127.0.0.1:{port} (")
    assert ": ready, 3 documents, 3 chunks; started in " in events[3]
    assert events[4] == "accept"


@pytest.mark.parametrize(
    "command",
    [
        ["search", "refund"],
        ["ask", "refund?"],
        ["status"],
        ["summarize"],
        ["ingest", "DOCS"],
        ["serve", "--port", "0"],
        ["demo", "--embedder", "hashing"],
    ],
)
def test_index_naming_a_file_is_one_clear_error(tiny_index, tmp_path, command):
    _, docs = tiny_index
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not an index")
    args = [str(docs) if a == "DOCS" else a for a in command]
    res = runner.invoke(app, [*args, "--index", str(a_file)])
    assert res.exit_code != 0
    assert (
        isinstance(res.exception, Exception)
        and str(res.exception) == f"{a_file}: not an index folder (it is a file); give --index a folder"
    )
    res = runner.invoke(app, [*args, "--index", str(a_file / "sub")])
    assert str(res.exception) == f"{a_file / 'sub'}: not an index folder ({a_file} is a file); give --index a folder"
    assert a_file.read_text() == "not an index"


def test_index_naming_a_file_exits_2_with_one_line(tmp_path):
    """Through the real entry point (``main``): one ``error:`` line, exit status 2."""
    import subprocess
    import sys

    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    res = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "search", "q", "--index", str(a_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == f"error: {a_file}: not an index folder (it is a file); give --index a folder\n"


@pytest.fixture(scope="module")
def svc_client(tiny_index):
    from fastapi.testclient import TestClient

    from citewise.service.app import create_app

    index, _ = tiny_index
    with TestClient(create_app(index, rate=0)) as c:
        yield c


def test_source_view_shows_title_and_path_relative_to_the_ingested_folder(svc_client, tiny_index):
    """It used to show the file name alone (``refunds.md``); now the path below the ingested
    folder, next to the title, as ``ask`` names a source by its id and title."""
    _, docs = tiny_index
    view = svc_client.get("/v1/documents/billing/refunds", params={"start": 0, "end": 3}).json()
    assert (view["title"], view["source"]) == ("Refund policy", "billing/refunds.md")
    assert str(docs) not in json.dumps(view)  # the server's folders stay private
    page = svc_client.get("/doc/billing/refunds", params={"start": 0, "end": 3})
    assert page.status_code == 200
    assert '<h1 id="doc-title">Refund policy</h1>' in page.text
    assert '<span id="doc-path">billing/refunds.md</span>' in page.text and str(docs) not in page.text


def test_relative_source_by_hand():
    from citewise.service.documents import relative_source

    roots = ["/srv/docs/billing", "/srv/docs", "/srv/one.md"]  # newest first
    assert relative_source("/srv/docs/billing/refunds.md", roots) == "refunds.md"  # newest root wins
    assert relative_source("/srv/docs/errors/E-1004.md", roots) == "errors/E-1004.md"
    assert relative_source("/srv/one.md", roots) == "one.md"  # a single-file ingest
    assert relative_source("/elsewhere/x/y.md", roots) == "y.md"  # under no root: the name only
    assert relative_source("docs/a/b.md", ["docs"]) == "a/b.md"  # relative paths as recorded


@pytest.mark.parametrize(
    "params, message",
    [
        ({"start": 10, "end": 5}, "start: 10 is after end 5 (a span is [start, end) with start <= end)"),
        ({"start": 4}, "end: required with start (a span is [start, end))"),
        ({"end": 4}, "start: required with end (a span is [start, end))"),
        ({"start": -1, "end": 4}, "start: must be a character offset >= 0, got -1"),
    ],
)
def test_a_span_that_cannot_be_one_is_a_400_naming_the_field(svc_client, params, message):
    res = svc_client.get("/v1/documents/billing/refunds", params=params)
    assert res.status_code == 400 and res.json()["error"] == {"message": message, "type": "invalid_request_error"}
    page = svc_client.get("/doc/billing/refunds", params=params)
    assert page.status_code == 400 and html.escape(message, quote=False) in page.text
    # an empty span and one past the end stay answers (no highlight; the document may have changed)
    for ok in ({"start": 5, "end": 5}, {"start": 5, "end": 10**9}, {}):
        res = svc_client.get("/v1/documents/billing/refunds", params=ok)
        assert res.status_code == 200 and res.json()["highlight"] is None


def _main(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """Run the real entry point (``citewise.cli.main``) in-process: ``(exit status, stdout, stderr)``."""
    import sys

    from citewise.cli import main

    monkeypatch.setattr(sys, "argv", ["citewise", *args])
    with pytest.raises(SystemExit) as done:
        main()
    got = capsys.readouterr()
    return done.value.code, got.out, got.err


def test_an_eof_error_is_named_not_a_bare_aborted(tiny_index, monkeypatch, capsys):
    """Click turns an EOFError (numpy reading an emptied file) into Abort; the line said only
    "aborted"."""
    import citewise.index as index_mod

    index, _ = tiny_index

    def cut(*a, **k):
        raise EOFError("No data left in file")

    monkeypatch.setattr(index_mod.Index, "search", cut)
    code, out, err = _main(monkeypatch, capsys, "search", "refund", "--index", str(index))
    # (Click itself writes an empty line to stderr before its Abort)
    assert (code, out, err.strip()) == (1, "", "error: unexpected end of data (No data left in file)")


def test_keys_refuse_empty_groups_and_a_missing_index(tiny_index, tmp_path, monkeypatch, capsys):
    """`keys add y --groups ",,,"` made a public-only key while saying "groups: ,,,"; `keys list`
    on a mistyped --index printed an empty table and exited 0."""
    index, _ = tiny_index
    for bad in (",,,", ""):
        code, out, err = _main(monkeypatch, capsys, "keys", "add", "y", "--groups", bad, "--index", str(index))
        assert (code, out, err) == (
            2,
            "",
            f"error: --groups {bad!r} names no group; leave the option out for a public-only key\n",
        )
    code, out, err = _main(
        monkeypatch, capsys, "keys", "add", "y", "--groups", " finance, ,support", "--index", str(index)
    )
    assert code == 0 and out.startswith("cw_") and "(groups: finance,support)" in err
    missing = tmp_path / "nope"
    for cmd in (["keys", "list"], ["keys", "revoke", "y"]):
        code, out, err = _main(monkeypatch, capsys, *cmd, "--index", str(missing))
        assert (code, out) == (2, "") and err.startswith(f"error: {missing}: no index here yet"), err


def test_a_group_no_document_carries_gets_a_warning(tiny_index, monkeypatch, capsys):
    """`--as Finance` (the groups are lower-case) searched as a principal that reads nothing
    restricted and answered from public pages with no word said."""
    index, _ = tiny_index
    code, out, err = _main(
        monkeypatch, capsys, "search", "refund", "--index", str(index), "--as", "Finance", "--k", "1"
    )
    assert code == 0 and out.startswith("1. billing/refunds")
    assert err == (
        f"warning: no document in {index} is readable by group 'Finance' (group names are case-sensitive); "
        "answering from what else the principal may read\n"
    )
    code, _, err = _main(
        monkeypatch, capsys, "ask", "How long is the refund window?", "--index", str(index), "--as", "public"
    )
    assert code == 0 and err == ""


def test_usage_errors_are_one_line_naming_the_option(tiny_index, monkeypatch, capsys):
    """They used to be Typer's usage line, hint and a boxed message (five lines, wrapped)."""
    index, _ = tiny_index
    code, out, err = _main(monkeypatch, capsys, "search", "refund", "--k", "100000", "--index", str(index))
    assert (code, out) == (2, "")
    assert err == (
        "error: Invalid value for '--k': 100000 is not in the range 1<=x<=1000 (see 'citewise search --help')\n"
    )
    code, _, err = _main(monkeypatch, capsys, "search", "refund", "--frobnicate")
    assert (
        code == 2
        and err == "error: No such option: --frobnicate (Possible options: --filter) (see 'citewise search --help')\n"
    )
    # a query that starts with '-' is read as options: the message says where it goes
    code, _, err = _main(monkeypatch, capsys, "search", "-verbose", "--index", str(index))
    assert code == 2 and err == (
        "error: No such option: -v (in '-verbose') (a query that starts with '-' goes after "
        "'--', every option before it: 'citewise search --index DIR -- \"-verbose\"'; "
        "see 'citewise search --help')\n"
    )
    # a long-option-like query (it used to get only Click's "Possible options: --version")
    code, _, err = _main(monkeypatch, capsys, "ask", "--index", str(index), "--verbose")
    assert code == 2 and err == (
        "error: No such option: --verbose (Possible options: --version) (a query that starts "
        "with '-' goes after '--', every option before it: 'citewise ask --index DIR -- "
        "\"--verbose\"'; see 'citewise ask --help')\n"
    )
    # with a query present, an unknown option is a mistyped option: no query hint
    code, _, err = _main(monkeypatch, capsys, "search", "--index", str(index), "refund", "--verbose")
    assert (
        code == 2
        and err == "error: No such option: --verbose (Possible options: --version) (see 'citewise search --help')\n"
    )
    code, out, _ = _main(monkeypatch, capsys, "ask", "-h")
    assert code == 0 and "Usage: citewise ask" in out
    code, _, err = _main(monkeypatch, capsys, "frobnicate")
    assert code == 2 and err == "error: No such command 'frobnicate' (see 'citewise --help')\n"
    code, _, err = _main(monkeypatch, capsys, "search", "refund", "--retriever", "nope", "--index", str(index))
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: unknown retriever 'nope' (valid: bm25, ")
    # alert exit codes still pass through, and a command's success is 0
    code, out, _ = _main(monkeypatch, capsys, "status", "--index", str(index), "--max-lag", "0s")
    assert code == 1 and "ALERT" in out
    code, out, _ = _main(monkeypatch, capsys, "search", "refund", "--index", str(index), "--k", "1", "--json")
    assert code == 0 and len(json.loads(out)["hits"]) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["search", "!!! ??? ..."], "query: '!!! ??? ...' has no letters or digits; give the words to search for"),
        (["search", "…"], "query: '…' has no letters or digits; give the words to search for"),
        (["ask", "???"], "question: '???' has no letters or digits; give the words to search for"),
        (
            ["search", "refund", "--as", ""],
            "--as: a group name is empty; give the group to search as (e.g. --as finance)",
        ),
        (["search", "refund", "--version", " "], "--version: empty; give the version to find (e.g. --version 3)"),
    ],
)
def test_queries_with_nothing_to_search_for_are_refused(tiny_index, args, message):
    """A punctuation-only query used to return the dense retriever's noise with exit 0."""
    index, _ = tiny_index
    res = runner.invoke(app, [*args, "--index", str(index)])
    assert res.exit_code != 0 and str(res.exception) == message
    for fine in (["search", "E-1004"], ["search", "¿qué?"], ["search", "日本語"]):
        assert runner.invoke(app, [*fine, "--index", str(index), "--json"]).exit_code == 0


def test_undecodable_query_bytes_are_named(tiny_index):
    import os
    import subprocess
    import sys

    index, _ = tiny_index
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    res = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "search", b"caf\xe9", "--index", str(index)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == "error: query: byte 0xe9 at character 4 is not utf-8 text; type it in UTF-8\n"


def test_ctrl_c_during_ingest_says_what_was_kept(tiny_index, tmp_path, monkeypatch, capsys):
    from citewise.index import Index

    _, docs = tiny_index

    def interrupted(self, *a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(Index, "ingest", interrupted)
    code, out, err = _main(
        monkeypatch, capsys, "ingest", str(docs), "--index", str(tmp_path / "ix"), "--embedder", "hashing"
    )
    assert (code, out) == (130, "")
    assert err == (
        f"interrupted (Ctrl-C): ingest stopped; every document in {tmp_path / 'ix'} is at its old or its new "
        "version (batches committed before Ctrl-C stay); run the same command again to finish\n"
    )
    monkeypatch.setattr(Index, "search", interrupted)
    code, _, err = _main(
        monkeypatch, capsys, "search", "refund", "--index", str(tmp_path / "ix"), "--retriever", "bm25"
    )
    assert (code, err) == (130, "interrupted (Ctrl-C)\n")


def test_an_os_error_on_a_path_is_one_line_naming_it(tiny_index, monkeypatch, capsys):
    """As root the suite cannot make a file unreadable; the loader's and the store's OSErrors
    reach ``main`` like this one."""
    from citewise.index import Index

    index, _ = tiny_index

    def denied(*a, **kw):
        raise PermissionError(13, "Permission denied", "/srv/index/lance")

    monkeypatch.setattr(Index, "open", denied)
    code, _, err = _main(monkeypatch, capsys, "search", "refund", "--index", str(index))
    assert (code, err) == (2, "error: /srv/index/lance: permission denied\n")


def test_ingest_of_an_empty_folder_or_one_holding_the_index_says_so(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    res = runner.invoke(app, ["ingest", str(empty), "--index", str(tmp_path / "ix"), "--embedder", "hashing"])
    assert res.exit_code == 0
    assert (
        res.stderr == f"warning {empty}: no documents found (citewise reads Markdown, HTML, text, PDF and DOCX files)\n"
    )
    docs = tmp_path / "docs"
    write_doc(docs, "a.md", "A", "Refunds take 30 days.")
    inner = docs / "index"
    for _ in range(2):  # the second run meets the index's own files
        res = runner.invoke(app, ["ingest", str(docs), "--index", str(inner), "--embedder", "hashing", "--json"])
        assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["unchanged"], data["errors"]) == (1, [])
    assert len(data["warnings"]) == 1 and data["warnings"][0].startswith(
        f"{inner}: the index folder is inside the ingested folder; its "
    )


def test_ingest_of_one_file_of_another_type_is_an_error_before_anything_is_created(tmp_path):
    """It used to exit 0 with '0 added' and a warning; named on the command line, it is an error."""
    picture = tmp_path / "scan.png"
    picture.write_bytes(b"\x89PNG\r\n")
    res = runner.invoke(app, ["ingest", str(picture), "--index", str(tmp_path / "ix"), "--embedder", "hashing"])
    assert res.exit_code != 0 and str(res.exception) == (
        f"{picture}: not a document type citewise reads ('.png'; supported: .docx, .htm, .html, .markdown, .md, "
        ".pdf, .rst, .text, .txt)"
    )
    assert not (tmp_path / "ix").exists()


def test_search_of_an_index_without_documents_says_why_there_are_no_results(tmp_path, tiny_index):
    empty = tmp_path / "empty"
    empty.mkdir()
    ix = tmp_path / "ix"
    assert runner.invoke(app, ["ingest", str(empty), "--index", str(ix), "--embedder", "hashing"]).exit_code == 0
    res = runner.invoke(app, ["search", "refund", "--index", str(ix)], env={"COLUMNS": "300"})
    assert res.exit_code == 0 and res.stdout == (
        f"no results (the index {ix} holds no documents; run 'citewise ingest PATH --index {ix}')\n"
    )
    index, _ = tiny_index  # documents, none of this version: plain "no results"
    res = runner.invoke(app, ["search", "refund", "--index", str(index), "--version", "99"])
    assert res.exit_code == 0 and res.stdout == "no results\n"


def test_a_file_name_that_is_not_utf8_is_one_error_naming_it(tmp_path, monkeypatch, capsys):
    """It used to fail at the store ('could not be stored (UnicodeEncodeError: ... surrogates not
    allowed)') after being chunked and embedded."""
    import os
    import sys

    if sys.getfilesystemencoding().lower() != "utf-8":
        pytest.fail("this test needs a UTF-8 file system encoding (python -X utf8)")
    docs = tmp_path / "docs"
    write_doc(docs, "good.md", "Good", "Refunds take 30 days.")
    bad = docs / os.fsdecode(b"caf\xe9.md")
    bad.write_bytes(b"# Cafe\n\nOpening hours.\n")
    code, out, err = _main(
        monkeypatch, capsys, "ingest", str(docs), "--index", str(tmp_path / "ix"), "--embedder", "hashing", "--json"
    )
    assert code == 3, err
    data = json.loads(out)  # the name's byte printed as the escape \udce9: still valid JSON
    assert data["added"] == 1 and data["errors"] == [f"{bad}: file name is not UTF-8 (byte 0xe9); rename the file"]
    assert data["chunks_embedded"] == 1
    code, out, err = _main(monkeypatch, capsys, "ingest", str(docs), "--index", str(tmp_path / "ix"))
    assert code == 3 and f"skipped {docs}/caf\\udce9.md: file name is not UTF-8 (byte 0xe9); rename the file\n" in err


def test_an_unreadable_folder_is_an_error_and_keeps_its_indexed_documents(tmp_path, monkeypatch):
    """os.walk used to skip a folder it could not list without a word, and the next ingest then
    deleted every document below it. (As root the suite cannot chmod a folder unreadable, so
    listing it is made to fail the way the OS does.)"""
    import os

    docs = tmp_path / "docs"
    write_doc(docs, "public/a.md", "A", "Refunds take 30 days.")
    write_doc(docs, "locked/b.md", "B", "Invoices go out monthly.")
    ix = str(tmp_path / "ix")
    assert runner.invoke(app, ["ingest", str(docs), "--index", ix, "--embedder", "hashing"]).exit_code == 0
    real_scandir = os.scandir

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    res = runner.invoke(app, ["ingest", str(docs), "--index", ix, "--json"])
    assert res.exit_code == 3, res.output
    data = json.loads(res.stdout)
    assert data["errors"] == [
        f"{docs / 'locked'}: cannot read folder: Permission denied; its files are skipped "
        "(their indexed versions are kept)"
    ]
    assert (data["deleted"], data["unchanged"], data["documents"]) == (0, 1, 2)


def test_api_refuses_a_query_without_letters_or_digits(svc_client):
    """As the CLI: '???' used to return the dense retriever's noise (search) with 200."""
    for path, body, field in (
        ("/v1/search", {"query": "!!! ???"}, "query"),
        ("/v1/ask", {"question": "???"}, "question"),
    ):
        res = svc_client.post(path, json=body)
        assert res.status_code == 400
        assert res.json()["error"]["message"] == f"'{field}' has no letters or digits; give the words to search for"
    assert svc_client.post("/v1/search", json={"query": "E-1004"}).status_code == 200


def test_a_real_serve_prints_listening_then_ready_before_answering(tiny_index):
    from svc_server import Server

    index, _ = tiny_index
    server = Server(index)  # returns once /readyz answers 200
    try:
        lines = server.log.read_text().splitlines()
    finally:
        server.stop()
    assert len(lines) >= 2, lines
    assert lines[0].startswith(f"citewise listening on {server.url}; loading the index")
    assert lines[1].startswith(f"citewise serving {index} on {server.url} (") and ": ready, 3 documents" in lines[1]
