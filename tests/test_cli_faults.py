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
