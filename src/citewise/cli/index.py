"""``citewise index``: migrate, check, repair and re-embed an index's store."""

import json
from pathlib import Path
from typing import Optional

import typer

from citewise.cli.common import EMBEDDER_HELP, HELP_OPTIONS, IndexOpt, JsonOpt, StoreOpt, _index_dir, app, out, plural


index_app = typer.Typer(no_args_is_help=True, context_settings=HELP_OPTIONS, help="Manage an index's store.")
app.add_typer(index_app, name="index")


@index_app.command("migrate")
def index_migrate(
    from_: Path = typer.Option(..., "--from", help="Index folder whose embedded (LanceDB) store is copied."),
    to: str = typer.Option(..., "--to", help="postgresql:// URL of the target store (optional ?schema=NAME)."),
    as_json: bool = JsonOpt,
):
    """Copy an index's chunks, vectors, answer units and ingest log from its LanceDB store into a
    PostgreSQL store, then record that store in the index folder (its lance/ folder is kept;
    '--store lancedb' uses it again)."""
    from citewise.migration import migrate_index

    result = migrate_index(from_, to)
    if as_json:
        out.print_json(json.dumps(result))
        return
    out.print(
        f"copied {result['documents']} documents, {result['chunks']} chunks and {result['runs']} ingest runs "
        f"from {result['from']} to {result['to']}; the index now uses that store.",
        highlight=False,
        soft_wrap=True,
    )


@index_app.command("check")
def index_check(index: Optional[Path] = IndexOpt, store: Optional[str] = StoreOpt, as_json: bool = JsonOpt):
    """Read every table, index, the BM25 postings and the settings of an index, and name each
    damaged file. Exit status: 0 every part reads; 5 damage found (see 'citewise index repair')."""
    from citewise.integrity import check_index, check_lines
    from citewise.store.faults import EXIT_DAMAGED

    report = check_index(_index_dir(index, must_exist=False), store)
    out.print_json(json.dumps(report.as_dict())) if as_json else out.print(
        "\n".join(check_lines(report)), highlight=False, soft_wrap=True
    )
    if not report.ok:
        raise typer.Exit(EXIT_DAMAGED)


@index_app.command("repair")
def index_repair(
    index: Optional[Path] = IndexOpt,
    store: Optional[str] = StoreOpt,
    as_json: bool = JsonOpt,
    wait: bool = typer.Option(False, "--wait", help="Wait for a running ingest instead of failing."),
):
    """Roll the store back to its last version whose files are whole (or keep its readable part),
    rebuild derived indexes from the stored chunks, and say what was lost and which folders to
    ingest again. Exit status: 0 every part reads afterwards; 5 damage is left."""
    from citewise.integrity import repair_index, repair_lines
    from citewise.store.faults import EXIT_DAMAGED

    result, after = repair_index(_index_dir(index, must_exist=False), store, wait=wait)
    if as_json:
        out.print_json(json.dumps({**vars(result), "after": after.as_dict()}))
    else:
        out.print("\n".join(repair_lines(result, after)), highlight=False, soft_wrap=True)
    if not after.ok:
        raise typer.Exit(EXIT_DAMAGED)


@index_app.command("reembed")
def index_reembed(
    embedder: str = typer.Option(
        ..., "--embedder", metavar="SPEC", help="The new model: " + EMBEDDER_HELP.split(";")[0] + "."
    ),
    index: Optional[Path] = IndexOpt,
    keep_old: bool = typer.Option(False, "--keep-old", help="Keep the old vectors' folder after the switch."),
    as_json: bool = JsonOpt,
):
    """Re-embed every chunk with another model; the old vectors keep serving until the switch."""
    from citewise.reembed import reembed_index

    result = reembed_index(_index_dir(index), embedder, keep_old=keep_old)
    if as_json:
        out.print_json(json.dumps(result))
        return
    out.print(
        f"{plural(result['chunks'], 'chunk')} re-embedded with {result['model']} ({result['dim']}-d, fingerprint "
        f"{result['fingerprint']}); {result['index']} now uses it.",
        highlight=False,
        soft_wrap=True,
    )
