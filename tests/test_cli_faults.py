"""Faults a new user meets on a fresh clone: labels, help text, messages and exit codes of the CLI
(each test failed before its fix)."""

from __future__ import annotations

import json

import click
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


def _commands(cmd: click.Command, path: tuple[str, ...] = ()):
    yield path, cmd
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


def test_hybrid_prf_hits_are_labelled_with_the_retriever_name(tiny_index):
    index, _ = tiny_index
    res = runner.invoke(app, ["search", "refund window", "--retriever", "hybrid-prf", "--index", str(index), "--json"])
    assert res.exit_code == 0, res.output
    hits = json.loads(res.stdout)["hits"]
    assert hits and {h["stage"] for h in hits} == {"hybrid-prf"}
    res = runner.invoke(app, ["search", "refund window", "--retriever", "hybrid-prf", "--index", str(index), "--k", "1"],
                        env={"COLUMNS": "200"})
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
    assert runner.invoke(app, ["ingest", str(tmp_path / "a" / "docs"), "--index", index, "--embedder", "hashing"]).exit_code == 0
    res = runner.invoke(app, ["ingest", str(tmp_path / "b" / "docs"), "--index", index, "--json"])
    data = json.loads(res.stdout)
    assert (data["added"], data["updated"], data["unchanged"], data["metadata_updated"], data["moved"]) == (0, 0, 2, 0, 2)
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
    monkeypatch.setattr(service_app, "create_app", lambda *a, **kw: (events.append("create_app"), real_create(*a, **kw))[1])

    def warm(svc):
        events.append("warm")
        done = real_warm(svc)
        assert svc.pool._opened == 1 and svc.pool._free.qsize() == 1  # a handle open before any request
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


@pytest.mark.parametrize("command", [["search", "refund"], ["ask", "refund?"], ["status"], ["summarize"],
                                     ["ingest", "DOCS"], ["serve", "--port", "0"], ["demo", "--embedder", "hashing"]])
def test_index_naming_a_file_is_one_clear_error(tiny_index, tmp_path, command):
    _, docs = tiny_index
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not an index")
    args = [str(docs) if a == "DOCS" else a for a in command]
    res = runner.invoke(app, [*args, "--index", str(a_file)])
    assert res.exit_code != 0
    assert isinstance(res.exception, Exception) and str(res.exception) == \
        f"{a_file}: not an index folder (it is a file); give --index a folder"
    res = runner.invoke(app, [*args, "--index", str(a_file / "sub")])
    assert str(res.exception) == f"{a_file / 'sub'}: not an index folder ({a_file} is a file); give --index a folder"
    assert a_file.read_text() == "not an index"


def test_index_naming_a_file_exits_2_with_one_line(tmp_path):
    """Through the real entry point (``main``): one ``error:`` line, exit status 2."""
    import subprocess
    import sys

    a_file = tmp_path / "notes.txt"
    a_file.write_text("x")
    res = subprocess.run([sys.executable, "-m", "citewise.cli", "search", "q", "--index", str(a_file)],
                         capture_output=True, text=True, timeout=120)
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == f"error: {a_file}: not an index folder (it is a file); give --index a folder\n"
