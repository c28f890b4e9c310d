"""``citewise index migrate``: copy an index's embedded (LanceDB) store into a PostgreSQL store.

Every chunk row (text, metadata, vector, answer-unit vectors, lexical text) is copied as it is;
the PostgreSQL store computes its BM25 postings and term statistics from the same lexical text,
so the copy answers the same BM25 queries with the same scores. Documents are read and written
in batches of whole documents (:func:`citewise.store.migrate.document_rows`), so memory stays at
one batch whatever the index size, and an interrupted migration leaves every copied document
whole and can be run again (each document is replaced, not duplicated).
"""

from __future__ import annotations

import json
from pathlib import Path

from citewise.core import CitewiseError
from citewise.index import IndexSettings, strip_password, write_json
from citewise.store.base import is_store_url
from citewise.store.lance import LanceStore
from citewise.store.migrate import document_rows
from citewise.store.postgres import PostgresStore


def migrate_index(folder: str | Path, url: str) -> dict:
    """Copy the LanceDB store of the index at ``folder`` into the PostgreSQL store at ``url``
    and record ``url`` (without its password) as the index's store.

    Returns: ``{"from", "to", "documents", "chunks", "runs"}`` (counts copied; ``to`` without
    password).

    Raises:
        CitewiseError: ``folder`` is not an index, ``url`` is not a PostgreSQL URL or cannot be
            reached, the target already holds another dimension, or documents the index does not
            have (another index's).
    """
    folder = Path(folder)
    cfg = folder / "index.json"
    if not cfg.is_file():
        raise CitewiseError(f"{folder}: no index here (no index.json); --from takes an index folder")
    if not is_store_url(url):
        raise CitewiseError(f"--to {url!r}: expected a postgresql:// URL")
    try:
        settings = IndexSettings(**json.loads(cfg.read_text()))
    except (json.JSONDecodeError, TypeError) as e:
        raise CitewiseError(f"{cfg}: not a citewise index settings file ({e})") from None
    src = LanceStore(folder / "lance", settings.dim)
    try:
        dst = PostgresStore(url, settings.dim)
    except CitewiseError as e:  # the store names its URL as --store; here it is --to
        msg = str(e)
        raise CitewiseError("--to " + msg[len("--store ") :] if msg.startswith("--store ") else msg) from None
    # a schema holding another index's documents: copying would merge the two (the other index's
    # restricted documents then show in this one's status and history); a re-run after an
    # interrupted copy finds only this index's documents there and goes on
    foreign = sorted(set(dst.documents()) - set(src.documents()))
    if foreign:
        raise CitewiseError(
            f"--to {strip_password(url)}: schema {dst.schema} already holds {len(foreign)} document(s) "
            f"this index does not have (e.g. '{foreign[0]}'), so the copy would merge two indexes; "
            "migrate into an empty schema (?schema=NAME)"
        )
    chunks = 0
    docs = 0
    with dst.bulk_load():  # an empty target: postings keys built once at the end
        for ids, rows in document_rows(src):
            dst.import_rows(rows)
            chunks += len(rows)
            docs += len(ids)
    dst.refresh_indexes()
    have = {(r.started_at, r.root) for r in dst.runs()}
    runs = [r for r in src.runs() if (r.started_at, r.root) not in have]
    for run in runs:
        dst.record_run(run)
    settings.store = strip_password(url)
    write_json(cfg, settings.__dict__)
    dst.close()
    return {"from": str(folder), "to": strip_password(url), "documents": docs, "chunks": chunks, "runs": len(runs)}
