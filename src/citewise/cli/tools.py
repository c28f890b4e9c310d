"""``citewise tools``: list and call the record tools."""

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from citewise.cli.common import AsOpt, HELP_OPTIONS, JsonOpt, Table, _check_db, _open, _principal, app, out


tools_app = typer.Typer(
    no_args_is_help=True,
    context_settings=HELP_OPTIONS,
    help="Record tools, guarded SQL, vector search: list and call them.",
)
app.add_typer(tools_app, name="tools")
DbOpt = typer.Option(
    None,
    "--db",
    help="Records database: sqlite:///PATH or a path (default: $CITEWISE_DB, else the bundled sample records).",
)


def _toolset(db: Optional[str], index: Optional[Path], as_: Optional[list[str]] = None):
    from citewise.tools.registry import build_toolset

    _check_db(db)
    idx = _open(index) if index else None
    return build_toolset(db, index=idx, principal=_principal(as_))


@tools_app.command("list")
def tools_list(
    db: Optional[str] = DbOpt,
    index: Optional[Path] = typer.Option(None, "--index", help="Also offer vector_search over this index."),
    as_json: bool = JsonOpt,
):
    """List the tools (OpenAI tools format with --json)."""
    ts = _toolset(db, index)
    if as_json:
        out.print_json(json.dumps({"tools": ts.specs()}))
        return
    t = Table("tool", "parameters", "description")
    for s in ts.specs():
        f = s["function"]
        params = ", ".join(
            f"{p}{'' if p in f['parameters'].get('required', []) else '?'}"
            for p in f["parameters"].get("properties", {})
        )
        t.add_row(f["name"], params, f["description"].split(". ")[0].rstrip(".") + ".")
    out.print(t)


@tools_app.command("call")
def tools_call(
    name: str = typer.Argument(..., help="Tool name (see 'citewise tools list')."),
    args: str = typer.Option("{}", "--args", help="Arguments as a JSON object, e.g. '{\"invoice_id\": 2041}'."),
    db: Optional[str] = DbOpt,
    index: Optional[Path] = typer.Option(None, "--index", help="Index for vector_search."),
    as_: Optional[list[str]] = AsOpt,
    as_json: bool = typer.Option(False, "--json", help="Print compact JSON (the observation is always JSON)."),
):
    """Call one tool and print its observation as JSON; exit status 1 when it is an error observation.

    Arguments that are not JSON (or not a JSON object) are an error observation too; a database or
    index that cannot be opened is a setup error (one line on stderr, exit 2).
    """
    from citewise.tools.base import error as tool_error

    toolset = _toolset(db, index, as_)
    try:
        parsed = json.loads(args)
    except json.JSONDecodeError as e:
        obs = tool_error(name, f"--args: not JSON ({e.msg} at column {e.colno})")
    except (ValueError, RecursionError) as e:  # e.g. an integer beyond Python's digit limit, deep nesting
        obs = tool_error(name, f"--args: not usable JSON ({type(e).__name__}: {str(e)[:120]})")
    else:
        obs = toolset.call(name, parsed)
    try:
        text = json.dumps(obs, ensure_ascii=False, default=str, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as e:  # NaN, an int beyond the digit limit, ...
        obs = tool_error(name, f"the observation cannot be written as JSON ({type(e).__name__}: {str(e)[:120]})")
        text = json.dumps(obs, ensure_ascii=False)
    if as_json:
        print(text)
    else:
        out.print_json(text)
    if isinstance(obs, dict) and "error" in obs:
        sys.exit(1)
