"""The CLI's reporting surface (issue 35): --version, shell completion, --json on every command that
reports, and an opt-in exit status for an abstention."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import typer.main
from typer.testing import CliRunner

from citewise.cli import EXIT_NO_ANSWER, app
from citewise.version import version

from conftest import write_doc

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]
#: Commands that run a server or a scripted tour, or write a report file, rather than report figures.
NOT_REPORTING = {"mcp", "serve", "demo", "eval report"}


def _commands():
    cmd = typer.main.get_command(app)
    ctx = click.Context(cmd)

    def walk(c, prefix):
        subs = c.list_commands(ctx) if hasattr(c, "list_commands") else None
        if subs:
            for n in subs:
                yield from walk(c.get_command(ctx, n), f"{prefix} {n}".strip())
        else:
            yield prefix, {o for p in c.params for o in getattr(p, "opts", [])}

    return dict(walk(cmd, ""))


def test_every_reporting_command_has_json():
    cmds = _commands()
    assert {"watch", "keys add", "keys revoke", "search", "ask", "status"} <= set(cmds)
    assert [name for name, opts in cmds.items() if "--json" not in opts and name not in NOT_REPORTING] == []


def test_version_and_shell_completion():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout == f"citewise {version()}\n"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    # the shell named, not detected from the processes above pytest (none is a shell when the
    # suite runs detached, and typer then writes "Shell  not supported.")
    named = {**env, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    out = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "--show-completion", "bash"], capture_output=True, text=True, env=named
    )
    assert out.returncode == 0 and "_citewise_completion" in out.stdout and "complete " in out.stdout
    # typer's completion protocol answers with the commands
    comp = subprocess.run(
        [sys.executable, "-m", "citewise.cli"],
        capture_output=True,
        text=True,
        env={**env, "_CITEWISE_COMPLETE": "complete_bash", "COMP_WORDS": "citewise ke", "COMP_CWORD": "1"},
    )
    assert comp.stdout.split() == ["keys"]


def test_fail_on_abstain_exits_3_only_without_an_answer(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "refunds.md", "Refund policy", "Refunds are paid within 30 days of a request.")
    folder = str(tmp_path / "idx")
    assert runner.invoke(app, ["ingest", str(root), "--index", folder, "--embedder", "hashing"]).exit_code == 0
    answered = runner.invoke(app, ["ask", "How long until refunds are paid?", "--index", folder, "--fail-on-abstain"])
    assert answered.exit_code == 0 and "30 days" in answered.stdout
    none = runner.invoke(
        app, ["ask", "What is the refund policy of Stripe?", "--index", folder, "--json", "--fail-on-abstain"]
    )
    assert none.exit_code == EXIT_NO_ANSWER == 3 and json.loads(none.stdout)["outcome"] == "abstained"
    plain = runner.invoke(app, ["ask", "What is the refund policy of Stripe?", "--index", folder])
    assert plain.exit_code == 0


def test_keys_add_and_revoke_json(tmp_path):
    from citewise.service.auth import KeyStore

    root = tmp_path / "docs"
    write_doc(root, "a.md", "A", "alpha")
    folder = str(tmp_path / "idx")
    assert runner.invoke(app, ["ingest", str(root), "--index", folder, "--embedder", "hashing"]).exit_code == 0
    res = runner.invoke(app, ["keys", "add", "ana", "--groups", "finance,support", "--index", folder, "--json"])
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert (data["name"], data["groups"], data["admin"]) == ("ana", ["finance", "support"], False)
    assert KeyStore(Path(folder)).verify(data["key"]).principal.groups == ("finance", "support")
    res = runner.invoke(app, ["keys", "revoke", "ana", "--index", folder, "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout) == {"name": "ana", "revoked": 1}


def test_watch_json_prints_one_report_line_per_run(tmp_path):
    root = tmp_path / "docs"
    write_doc(root, "a.md", "A", "alpha apple")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "citewise.cli",
            "watch",
            str(root),
            "--index",
            str(tmp_path / "idx"),
            "--embedder",
            "hashing",
            "--json",
            "--debounce",
            "0.2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = json.loads(proc.stdout.readline())
        assert first["added"] == 1 and first["errors"] == []
        write_doc(root, "b.md", "B", "beta banana")
        second = json.loads(proc.stdout.readline())
        assert second["added"] == 1 and second["unchanged"] == 1
    finally:
        proc.terminate()
        proc.wait(timeout=30)
