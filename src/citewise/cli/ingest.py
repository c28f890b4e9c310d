"""``citewise ingest``."""

import json
from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from citewise.core import CitewiseError
from citewise.cli.common import (
    EMBEDDER_HELP,
    EXIT_FILE_ERRORS,
    IndexOpt,
    JsonOpt,
    StoreOpt,
    _embed_progress,
    _open,
    _said_interrupted,
    _tidy_warnings,
    app,
    err,
    out,
    plural,
)


@app.command()
def ingest(
    path: Path = typer.Argument(..., help="Folder (or file) of Markdown, HTML, text, PDF and DOCX documents."),
    index: Optional[Path] = IndexOpt,
    embedder: Optional[str] = typer.Option(None, metavar="SPEC", help=EMBEDDER_HELP),
    default_permission: Optional[str] = typer.Option(None, help="public | deny, for documents without permissions."),
    policy: Optional[Path] = typer.Option(
        None,
        "--policy",
        help="Permission policy YAML (rules: [{glob, groups, override}]); the index keeps it for later ingests.",
    ),
    follow_links: bool = typer.Option(
        False, "--follow-links", help="Follow symlinks that point outside the folder (default: skip them with a line)."
    ),
    allow_errors: bool = typer.Option(
        False,
        "--allow-errors",
        help=f"Exit 0 even when files were skipped for errors (default: exit {EXIT_FILE_ERRORS}).",
    ),
    wait: bool = typer.Option(
        False,
        "--wait",
        help="If another ingest is running on this index, wait for it (default: exit 2 naming its pid).",
    ),
    keep_duplicates: bool = typer.Option(
        False, "--keep-duplicates", help="Also index whole-book copies (print.html) and near-duplicate documents."
    ),
    store: Optional[str] = StoreOpt,
    chunk_vectors: Optional[str] = typer.Option(
        None,
        "--chunk-vectors",
        metavar="MODE",
        help="units-mean (default) | chunk: how a new index makes chunk vectors (docs/embedders.md).",
    ),
    as_json: bool = JsonOpt,
):
    """Ingest a folder: new and changed documents are indexed, removed ones deleted, copies skipped.

    Exit status: 0 done; 3 done, but some files were skipped for errors (each named on stderr,
    or in the JSON 'errors'); 2 nothing ingested (bad option, policy or index, or another ingest
    running); 4 no space left on device (every document at its old or its new version; free space
    and re-run); 5 the store's files cannot be read (see 'citewise index check'); 130 interrupted
    (Ctrl-C; every document at its old or its new version).
    """
    from citewise.policy import Policy

    if not path.exists() and not path.is_symlink():
        raise CitewiseError(f"{path}: no such file or folder")
    if path.is_file():
        from citewise.text.loaders import SUPPORTED_EXT

        ext = path.suffix.lower()
        if ext not in SUPPORTED_EXT:  # asked for by name: an error, not a folder's stray file
            raise CitewiseError(
                f"{path}: not a document type citewise reads ('{ext or '(none)'}'; "
                f"supported: {', '.join(sorted(SUPPORTED_EXT))})"
            )
    if policy is not None:
        Policy.load(policy)  # a missing or bad policy is an error before anything is created
    idx = _open(
        index,
        embedder,
        must_exist=False,
        default_permission=default_permission,
        store=store,
        chunk_vectors=chunk_vectors,
    )
    try:
        with _embed_progress(not as_json) as on_embed:
            report = idx.ingest(
                path,
                policy=policy,
                follow_links=follow_links,
                wait=wait,
                on_wait=lambda msg: err.print(msg, highlight=False, soft_wrap=True),
                embed_progress=on_embed,
                keep_duplicates=keep_duplicates,
            )
    except KeyboardInterrupt:
        _said_interrupted(
            f"interrupted (Ctrl-C): ingest stopped; every document in {idx.path} is at its old or its "
            "new version (batches committed before Ctrl-C stay); run the same command again to finish"
        )
        raise
    stats = idx.store.stats()
    _tidy_warnings(report, path, idx.path)
    if as_json:
        out.print_json(
            json.dumps(
                {**report.as_dict(), "index": str(idx.path), "documents": stats["documents"], "chunks": stats["chunks"]}
            )
        )
    else:
        for e in report.errors:
            err.print(Text.assemble(("skipped", "yellow"), f" {e}"), highlight=False, soft_wrap=True)
        for e in report.warnings:
            err.print(f"warning {e}", markup=False, highlight=False, soft_wrap=True)
        for e in report.superseded:
            err.print(f"superseded {e}", markup=False, highlight=False, soft_wrap=True)
        for e in report.removed:
            err.print(f"deleted {e}", markup=False, highlight=False, soft_wrap=True)
        for e in report.duplicates:
            err.print(f"duplicate {e}", markup=False, highlight=False, soft_wrap=True)
        out.print(
            f"{report.added} added, {report.updated} updated, {report.unchanged_text()}, "
            + (f"{report.metadata_updated} with new permissions only, " if report.metadata_updated else "")
            + f"{report.deleted} deleted, {plural(len(report.duplicates), 'duplicate')} skipped, "
            f"{plural(len(report.errors), 'error')}, {plural(len(report.warnings), 'warning')}; "
            f"{plural(report.chunks_embedded, 'chunk')} and {plural(report.units_embedded, 'answer unit')} embedded"
            + (
                f" ({plural(report.units_refreshed, 'unchanged document')} got answer-unit vectors)"
                if report.units_refreshed
                else ""
            )
            + ". "
            f"Index {idx.path}: {plural(stats['documents'], 'document')}, {plural(stats['chunks'], 'chunk')}.",
            highlight=False,
            soft_wrap=True,
        )
    if report.errors and not allow_errors:
        raise typer.Exit(EXIT_FILE_ERRORS)
