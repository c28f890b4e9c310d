"""docs/cli.md is the output of tools/gen_cli_reference.py: the reference cannot go stale."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cli_reference", ROOT / "tools" / "gen_cli_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_docs_cli_md_equals_the_generated_reference():
    page = _generator().generate()
    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == page, (
        "docs/cli.md is out of date: run python tools/gen_cli_reference.py"
    )


def test_the_reference_covers_every_command_in_80_plain_columns():
    gen = _generator()
    page = gen.generate()
    assert "\x1b" not in page
    assert [ln for ln in page.splitlines() if len(ln) > 80] == []
    import typer
    from citewise.cli import app

    root = typer.main.get_command(app)
    ctx = gen.click.Context(root, info_name="citewise")
    for name in root.list_commands(ctx):
        assert f"## `citewise {name}`" in page, name
    assert "## `citewise eval answers`" in page and "## `citewise config show`" in page
    ask = page.split("## `citewise ask`", 1)[1].split("\n## ", 1)[0]
    assert "Usage: citewise ask [OPTIONS] QUESTION" in ask and "--as GROUP" in ask and "--index DIR" in ask
