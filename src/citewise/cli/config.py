"""``citewise config show``."""

import json
from pathlib import Path
from typing import Optional

import typer

from citewise.cli.common import HELP_OPTIONS, JsonOpt, Table, app, out


config_app = typer.Typer(no_args_is_help=True, context_settings=HELP_OPTIONS, help="Show the effective settings.")
app.add_typer(config_app, name="config")


@config_app.command("show")
def config_show(
    index: Optional[Path] = typer.Option(
        None, "--index", metavar="DIR", help="Also read this index folder's citewise.toml."
    ),
    as_json: bool = JsonOpt,
    as_toml: bool = typer.Option(False, "--toml", help="Print as a citewise.toml (secrets masked)."),
):
    """Every setting's effective value and where it came from (default, a citewise.toml file,
    an environment variable or a flag)."""
    from citewise.settings import load_settings, setting_files, to_toml

    settings = load_settings(index)
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "files": [str(f) for f in setting_files(index)],
                    "settings": [{"key": k, "value": v, "source": src} for k, v, src in settings.rows()],
                }
            )
        )
        return
    if as_toml:
        out.print(to_toml(settings), highlight=False, soft_wrap=True, end="")
        return
    from citewise.core import default_index_dir

    # what an empty value means, as the commands resolve it
    implied = {
        "index.path": str(index) if index else str(default_index_dir()),
        "index.store": "as the index recorded; lancedb if new",
    }
    t = Table("setting", "value", "from")
    t.columns[0].no_wrap = True
    t.columns[1].overflow = "fold"  # a path wraps whole rather than ending in "…"
    for key, value, source in settings.rows():
        shown = "" if value is None else json.dumps(value) if not isinstance(value, str) else value
        if shown == "" and key in implied:
            shown = f"({implied[key]})"
        t.add_row(key, shown, source)
    out.print(t)
