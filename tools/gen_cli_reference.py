"""Write docs/cli.md, the command-line reference, from the commands themselves.

    python tools/gen_cli_reference.py            # rewrite docs/cli.md
    python tools/gen_cli_reference.py --check    # exit 1 if docs/cli.md differs

The page is built by Click introspection of the Typer application (``citewise.cli.app``):
every command and group, depth first in the order the application registers them, each with
its usage line, help text, arguments and options, formatted by Click's plain help formatter at
80 columns (no ANSI, no terminal-dependent widths), so the output depends only on the code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import typer

try:  # Typer 0.2x ships its own copy of Click and builds its commands from it
    from typer import _click as click
except ImportError:  # pragma: no cover - Typer releases that use the click package
    import click

WIDTH = 80
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "cli.md"

HEADER = """# Command-line reference

Every `citewise` command with its arguments and options, generated from the
commands themselves by `python tools/gen_cli_reference.py`;
tests/test_cli_reference.py fails when this page differs from what the commands
say. What each command is for: the task pages listed in [index.md](index.md).
"""


def _plain(text: str | None) -> str:
    """A help text as plain lines: Typer's ``\\b`` no-rewrap markers dropped, trailing spaces cut."""
    if not text:
        return ""
    lines = [ln.rstrip() for ln in text.replace("\b", "").strip().splitlines()]
    return "\n".join(lines)


def _usage(cmd, ctx) -> str:
    """``Usage: citewise CMD [OPTIONS] ARG...`` wrapped at 80 columns."""
    pieces = ["[OPTIONS]"]
    for p in cmd.get_params(ctx):
        if p.param_type_name != "argument":
            continue
        name = p.human_readable_name.upper() + ("..." if p.nargs == -1 else "")
        pieces.append(name if p.required else f"[{name}]")
    if hasattr(cmd, "list_commands"):
        pieces.append("COMMAND [ARGS]...")
    f = click.HelpFormatter(width=WIDTH, max_width=WIDTH)
    f.write_usage(ctx.command_path, " ".join(pieces))
    return f.getvalue().rstrip()


def _param_rows(cmd, ctx) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(arguments, options)``, each a list of (names, help with default) rows."""
    args: list[tuple[str, str]] = []
    opts: list[tuple[str, str]] = []
    for p in cmd.get_params(ctx):
        if getattr(p, "hidden", False):
            continue
        help_text = _plain(getattr(p, "help", None) or "")
        if p.param_type_name == "argument":
            name = p.human_readable_name.upper()
            req = "required" if p.required else "optional"
            extra = [req]
            if p.default is not None and not p.required and not callable(p.default) and p.default != ():
                extra.append(f"default: {p.default}")
            args.append((name, " ".join(x for x in [help_text, f"[{'; '.join(extra)}]"] if x)))
            continue
        names = ", ".join(p.opts)
        if p.secondary_opts:
            names += " / " + ", ".join(p.secondary_opts)
        if not p.is_flag and not p.count:
            metavar = p.make_metavar(ctx) if "ctx" in p.make_metavar.__code__.co_varnames else p.make_metavar()
            names += f" {metavar}"
        extra = []
        d = p.default
        show = p.show_default if p.show_default is not None else ctx.show_default
        if show and d is not None and not callable(d) and d != () and d != [] and not (p.is_flag and d is False):
            if isinstance(d, (list, tuple)):
                d = ", ".join(str(x) for x in d)
            elif isinstance(d, str) and "," in d:  # a comma-separated list: wrap between items
                d = ", ".join(d.split(","))
            extra.append(f"default: {d}")
        if p.required:
            extra.append("required")
        if extra:
            help_text = f"{help_text} [{'; '.join(extra)}]".strip()
        opts.append((names, help_text))
    return args, opts


def _command_section(cmd, ctx) -> str:
    f = click.HelpFormatter(width=WIDTH, max_width=WIDTH)
    body = _plain(cmd.help)
    for para in (q for q in body.split("\n\n") if q.strip()):
        f.write_paragraph()
        f.write_text(" ".join(para.split()))
    args, opts = _param_rows(cmd, ctx)
    if args:
        f.write_paragraph()
        with f.section("Arguments"):
            f.write_dl(args)
    if opts:
        f.write_paragraph()
        with f.section("Options"):
            f.write_dl(opts)
    if hasattr(cmd, "list_commands"):
        rows = [(name, _plain(sub.get_short_help_str(limit=10_000))) for name, sub in _subcommands(cmd, ctx)]
        if rows:
            f.write_paragraph()
            with f.section("Commands"):
                f.write_dl(rows)
    text = _usage(cmd, ctx) + "\n\n" + f.getvalue().strip("\n")
    lines: list[str] = []
    for ln in text.splitlines():  # one blank line between blocks
        ln = ln.rstrip()
        if ln or (lines and lines[-1]):
            lines.append(ln)
    return f"## `{ctx.command_path}`\n\n```text\n" + "\n".join(lines) + "\n```\n"


def _subcommands(group, ctx) -> list[tuple[str, object]]:
    out = []
    for name in group.list_commands(ctx):
        sub = group.get_command(ctx, name)
        if sub is not None and not getattr(sub, "hidden", False):
            out.append((name, sub))
    return out


def _walk(cmd, ctx):
    yield cmd, ctx
    if hasattr(cmd, "list_commands"):
        for name, sub in _subcommands(cmd, ctx):
            yield from _walk(sub, click.Context(sub, info_name=name, parent=ctx))


def generate() -> str:
    """The whole page (Markdown, ending in one newline)."""
    from citewise.cli import app

    root = typer.main.get_command(app)
    ctx = click.Context(root, info_name="citewise")
    sections = [HEADER]
    for cmd, cctx in _walk(root, ctx):
        sections.append(_command_section(cmd, cctx))
    return "\n".join(sections).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if docs/cli.md is out of date")
    a = ap.parse_args(argv)
    page = generate()
    if a.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != page:
            print(f"{OUT.relative_to(ROOT)} is out of date: run python tools/gen_cli_reference.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(page, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(page.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
