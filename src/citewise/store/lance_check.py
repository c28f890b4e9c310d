"""Check and repair an embedded LanceDB store (the ``lance/`` folder of an index).

**Check** (:func:`check`), per table (``chunks``, ``ingest_runs``):

1. the newest manifest parses (:func:`citewise.store.lance_files.read_manifest`);
2. every data and deletion file of that version exists and has the size its manifest recorded,
   and every ``.lance`` file of its indexes ends with the Lance magic
   (:func:`~citewise.store.lance_files.damaged_files`): a truncated file is named;
3. every row of every column reads (one scan), so damage the sizes do not show is found too;
4. every index answers a query that uses it (full-text, label list, bitmap, b-tree, IVF).

Then the BM25 postings of the current version (``_bm25/v<version>/``) load and cover the
table's rows.

**Repair** (:func:`repair`), per table:

1. manifests that do not parse and are newer than the newest one that does are moved aside
   (the table then opens at that version);
2. when a data or deletion file of the current version is damaged, the table is restored to the
   newest earlier version whose files are all whole (LanceDB ``checkout`` + ``restore``: a new
   version with that content). The versions skipped are listed with their operation (from
   their transaction files): compactions and index updates change no row, so rolling back over
   them loses nothing; an append, merge, update or delete is undone, and the ingest runs that
   finished after the restored version name the folders to ingest again;
3. with no whole earlier version (old versions are removed 10 minutes after each ingest,
   :data:`citewise.store.lance.CLEANUP_AFTER`), the damaged fragments' rows are deleted (by
   ``_rowid`` range, which reads nothing of them), and so are the remaining rows of every
   document that lost a chunk (a chunk whose ``prev_id``/``next_id`` names a chunk that is gone):
   only whole documents stay. The documents lost are listed (from the saved BM25 postings of the
   damaged version when they exist) and come back with the next ingest of their folder;
4. damaged indexes are dropped; the BM25 postings are deleted; then
   :meth:`citewise.store.lance.LanceStore.refresh_indexes` rebuilds every index and the postings
   from the stored chunks.

Damaged files are moved to ``<index>/damaged/<time>/`` (never deleted).
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

from citewise.store.faults import one_line
from citewise.store.lance.host import TableHandle
from citewise.store.integrity import Finding, RepairResult
from citewise.store.lance_files import (
    CONTENT_KEEPING_OPS,
    OP_NAMES,
    FormatError,
    Manifest,
    damaged_files,
    manifests,
    operation,
    operation_of_version,
    read_manifest,
)

TABLES = {"chunks": "chunks table", "ingest_runs": "ingest log"}
BM25_FOLDER = "_bm25"


def _connect(folder: Path) -> Any:
    """A ``lancedb`` connection to the database in ``folder`` (strong read consistency)."""
    from citewise.store.lance import import_lancedb

    return import_lancedb().connect(str(folder), read_consistency_interval=dt.timedelta(0))


def _newest_readable(table: Path) -> tuple[list[tuple[int, Path, str]], Manifest | None]:
    """(unreadable manifests newer than the newest readable one, that manifest or None)."""
    bad: list[tuple[int, Path, str]] = []
    for version, path in sorted(manifests(table).items(), reverse=True):
        try:
            return bad, read_manifest(path)
        except (FormatError, OSError) as e:
            bad.append((version, path, str(e)))
    return bad, None


def _index_folder(table: Path, m: Manifest | None, name: str) -> str:
    uid = next((u for u, n in (m.indexes.items() if m else ()) if n == name), None)
    return str(table / "_indices" / uid) if uid else str(table / "_indices")


def _index_probe(t: TableHandle, index: Any) -> None:
    """A query that must use ``index`` (a LanceDB index config of table ``t``); raises if it fails."""
    import numpy as np

    col = index.columns[0]
    kind = str(index.index_type).upper()
    q = t.search()
    if "FTS" in kind or "INVERTED" in kind:
        t.search("probe", query_type="fts", fts_columns=col).limit(1).to_arrow()
        return
    if "IVF" in kind or "HNSW" in kind or "PQ" in kind:
        dim = t.schema.field(col).type.list_size
        v = np.zeros(dim, np.float32)
        v[0] = 1.0
        t.search(v, vector_column_name=col).distance_type("cosine").nprobes(1).limit(1).to_arrow()
        return
    typ = t.schema.field(col).type
    import pyarrow as pa

    if pa.types.is_list(typ):
        where = f"array_has_any({col}, ['probe'])"
    elif pa.types.is_boolean(typ):
        where = f"{col} = true"
    else:
        where = f"{col} = 'probe'"
    q.where(where).select([col]).limit(1).to_arrow()


def check(folder: str | Path) -> list[Finding]:
    """Findings for the LanceDB database in ``folder`` (module docstring); empty = all reads."""
    folder = Path(folder)
    out: list[Finding] = []
    db = None
    for name, part in TABLES.items():
        table = folder / f"{name}.lance"
        if not table.is_dir() or not manifests(table):
            continue  # no table, or one a killed create left uncommitted (discarded on open)
        bad, m = _newest_readable(table)
        for version, path, why in bad:
            out.append(Finding(part, str(path), f"manifest of version {version} cannot be read ({why})"))
        if m is None:
            continue
        for path, why in damaged_files(m):
            index = (
                path.parts[-2]
                if path.parent.parent.name == "_indices"
                else path.name
                if path.parent.name == "_indices"
                else None
            )
            if index is not None:
                out.append(Finding(f"index {m.indexes.get(index, index)}", str(path), why, derived=True))
            else:
                out.append(Finding(part, str(path), why))
        if bad or any(not f.derived for f in out if f.part == part):
            continue  # LanceDB would only repeat what is named above
        try:
            db = db or _connect(folder)
            t = db.open_table(name)
            _read_every_row(t)
        except Exception as e:  # noqa: BLE001 - any engine error is a finding
            out.append(Finding(part, str(table), f"cannot be read ({one_line(e)})"))
            continue
        named = {f.part for f in out}
        for index in t.list_indices():
            if f"index {index.name}" in named:
                continue
            try:
                _index_probe(t, index)
            except Exception as e:  # noqa: BLE001
                out.append(
                    Finding(
                        f"index {index.name}",
                        _index_folder(table, m, index.name),
                        f"a query on it fails ({one_line(e)})",
                        derived=True,
                    )
                )
        if name == "chunks":
            out += _check_postings(folder, t)
    return out


def _read_every_row(t: TableHandle, batch: int = 1024) -> int:
    """Read every row of every column of table ``t`` in batches (memory: one batch); returns the
    row count. Raises the engine's error on a file it cannot read."""
    from citewise.store.lance_native import run

    async def go() -> int:
        n = 0
        async for b in await t._table.query().to_batches(max_batch_length=batch):
            n += b.num_rows
        return n

    return run(go())


def _column_rows(t: TableHandle, columns: list[str]) -> list[dict[str, Any]]:
    """``columns`` of every row of table ``t`` (no other column read)."""
    rows: list[dict[str, Any]] = t.search().select(columns).limit(max(t.count_rows(), 1) + 1).to_arrow().to_pylist()
    return rows


def _check_postings(folder: Path, t: TableHandle) -> list[Finding]:
    from citewise.store.postings import Postings

    path = Postings.folder(folder / BM25_FOLDER, t.version)
    if not path.exists():
        return []  # built by the next search
    p = Postings.load(folder / BM25_FOLDER, t.version)
    if p is None:
        return [Finding("BM25 postings", str(path), "cannot be read", derived=True)]
    rows = t.count_rows()
    if p.n != rows:
        return [Finding("BM25 postings", str(path), f"cover {p.n:,} rows, the table has {rows:,}", derived=True)]
    return []


# -- repair -------------------------------------------------------------------------------------
def _move_aside(path: Path, folder: Path, quarantine: Path, result: RepairResult) -> None:
    dest = quarantine / path.relative_to(folder.parent)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(path), str(dest))
    result.moved_aside.append(f"{path} -> {dest}")


def _whole(m: Manifest) -> bool:
    """Whether every data and deletion file of version ``m`` is whole (indexes aside)."""
    return not [p for p, _ in damaged_files(m) if "_indices" not in p.parts]


def _runs_after(db: Any, when: dt.datetime | None) -> list[str]:
    """Roots of the ingest runs that finished after ``when`` (every root when None)."""
    try:
        rows = _column_rows(db.open_table("ingest_runs"), ["finished_at", "root"])
    except Exception:  # noqa: BLE001 - no log, or a damaged one: nothing to name
        return []
    out = set()
    for r in rows:
        try:
            t = dt.datetime.fromisoformat(r["finished_at"])
        except (TypeError, ValueError):
            continue
        if when is None or (t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)) > when:
            out.add(r["root"])
    return sorted(r for r in out if r)


def _saved_ids(folder: Path, version: int) -> list[tuple[str, str, int]] | None:
    """``(chunk_id, doc_id, fragment)`` rows of version ``version`` from its saved BM25 postings
    (the ids of every row, kept beside the table), or None when they were not saved."""
    import numpy as np

    from citewise.store.postings import Postings

    p = Postings.load(folder / BM25_FOLDER, version)
    if p is None:
        return None
    frag = (np.asarray(p.rowids, dtype=np.uint64) >> np.uint64(32)).tolist()
    return list(zip(p.ids.column("chunk_id").to_pylist(), p.ids.column("doc_id").to_pylist(), frag))


def _repair_table(folder: Path, name: str, quarantine: Path, result: RepairResult) -> None:
    part = TABLES[name]
    table = folder / f"{name}.lance"
    if not table.is_dir() or not manifests(table):
        return
    bad, m = _newest_readable(table)
    for version, path, _ in bad:
        _move_aside(path, folder, quarantine, result)
        result.actions.append(f"{part}: moved aside the unreadable manifest of version {version}")
    if m is None:
        _move_aside(table, folder, quarantine, result)
        result.actions.append(f"{part}: no version of the table can be read; moved the table aside")
        result.lost.append(f"{part}: every row (no readable version was left)")
        if name == "chunks":
            result.reingest = sorted(set(result.reingest) | set(_runs_after(_connect(folder), None)))
        return
    if bad:
        hint = table / "_versions" / "latest_version_hint.json"
        if hint.exists():
            hint.unlink()  # it named a version that is gone; LanceDB lists the versions instead
        for v, _, _ in bad:
            op = operation_of_version(table, v)
            if op in CONTENT_KEEPING_OPS:
                result.actions.append(f"{part}: version {v} only recorded a {CONTENT_KEEPING_OPS[op]}: nothing lost")
            else:
                result.lost.append(
                    f"{part}: the changes of version {v} ({OP_NAMES.get(op, 'operation unknown')}; "
                    "its manifest could not be read) are undone"
                )
                if name == "chunks":
                    result.reingest = sorted(set(result.reingest) | set(_runs_after(_connect(folder), m.timestamp)))
    if _whole(m):
        return
    broken = {p for p, _ in damaged_files(m)}
    damaged = {f.fragment for f in m.files if f.path in broken}
    db = _connect(folder)
    older = [read_or_none(p) for v, p in sorted(manifests(table).items(), reverse=True) if v < m.version]
    good = next((o for o in older if o is not None and _whole(o)), None)
    t = db.open_table(name)
    if good is not None:
        skipped = []
        for v in range(good.version + 1, m.version + 1):
            mv = read_or_none(manifests(table).get(v)) if manifests(table).get(v) else None
            op = operation(table, mv) if mv else None
            skipped.append((v, op))
        t.checkout(good.version)
        t.restore()
        when = good.timestamp.isoformat(timespec="seconds") if good.timestamp else "unknown time"
        ops = ", ".join(f"{v} {OP_NAMES.get(op, 'unknown')}" for v, op in skipped)
        result.actions.append(
            f"{part}: restored version {good.version} (written {when}) as the current version; skipped versions: {ops}"
        )
        content = [(v, op) for v, op in skipped if op not in CONTENT_KEEPING_OPS]
        if content:
            result.lost.append(
                f"{part}: the changes of versions {', '.join(str(v) for v, _ in content)} "
                f"(written after {when}) are undone"
            )
            if name == "chunks":
                result.reingest = sorted(set(result.reingest) | set(_runs_after(db, good.timestamp)))
                _note_changed_documents(folder, db, m, result)
        return
    # no whole earlier version: keep the readable fragments, whole documents only
    before = _saved_ids(folder, m.version) if name == "chunks" else None
    for f in sorted(damaged):
        t.delete(f"_rowid >= {f << 32} AND _rowid < {(f + 1) << 32}")
    result.actions.append(
        f"{part}: deleted the rows of damaged fragment(s) {', '.join(map(str, sorted(damaged)))} "
        f"(no earlier version with whole files is left)"
    )
    if name != "chunks":
        result.lost.append(f"{part}: the entries stored in fragment(s) {', '.join(map(str, sorted(damaged)))}")
        return
    lost = {d for _, d, fr in (before or []) if fr in damaged}
    rows = _column_rows(t, ["chunk_id", "doc_id", "prev_id", "next_id"])
    have = {r["chunk_id"] for r in rows}
    partial = {
        r["doc_id"]
        for r in rows
        if (r["prev_id"] and r["prev_id"] not in have) or (r["next_id"] and r["next_id"] not in have)
    }
    partial |= lost & {r["doc_id"] for r in rows}
    if partial:
        from citewise.store.lance import _q

        t.delete(f"doc_id IN ({', '.join(_q(d) for d in sorted(partial))})")
        result.actions.append(
            f"chunks table: deleted the remaining chunks of {len(partial)} document(s) that lost "
            "chunks, so every document left is whole"
        )
    gone = sorted(lost | partial)
    result.lost_documents = sorted(set(result.lost_documents) | set(gone))
    result.lost.append(
        f"chunks table: {len(gone)} document(s) removed ({', '.join(gone[:20])}{' ...' if len(gone) > 20 else ''})"
        if gone
        else "chunks table: the rows of the damaged fragments (which documents is not known: their "
        "postings were not saved)"
    )
    result.reingest = sorted(set(result.reingest) | set(_runs_after(db, None)))


def read_or_none(path: Path | None) -> Manifest | None:
    if path is None:
        return None
    try:
        return read_manifest(path)
    except (FormatError, OSError):
        return None


def _note_changed_documents(folder: Path, db: Any, damaged: Manifest, result: RepairResult) -> None:
    """After a rollback: documents added or removed since the restored version, when the
    damaged version's saved postings list its documents."""
    ids = _saved_ids(folder, damaged.version)
    if ids is None:
        return
    now = {r["doc_id"] for r in _column_rows(db.open_table("chunks"), ["doc_id"])}
    then = {d for _, d, _ in ids}
    added, removed = sorted(then - now), sorted(now - then)
    if added:
        result.lost_documents = sorted(set(result.lost_documents) | set(added))
        result.lost.append(f"chunks table: {len(added)} document(s) added since are gone ({', '.join(added[:20])})")
    if removed:
        result.lost.append(
            f"chunks table: {len(removed)} document(s) deleted since are back ({', '.join(removed[:20])})"
        )


def repair(folder: str | Path, dim: int, quarantine: str | Path) -> RepairResult:
    """Repair the LanceDB database in ``folder`` (module docstring); damaged files go to
    ``quarantine``. The caller holds the index's ingest lock."""
    from citewise.store.lance import SCALAR_INDEXES, LanceStore

    folder, quarantine = Path(folder), Path(quarantine)
    result = RepairResult()
    before = check(folder)
    if not before:
        return result
    for name in TABLES:
        _repair_table(folder, name, quarantine, result)
    dropped = []
    findings = [f for f in check(folder) if f.part.startswith("index ")]
    if findings:
        t = _connect(folder).open_table("chunks")
        have = {i.name for i in t.list_indices()}
        for f in findings:
            index = f.part[len("index ") :]
            if index in have:
                t.drop_index(index)
                dropped.append(index)
        result.actions.append(f"dropped the damaged index(es) {', '.join(dropped)}")
    bm25 = folder / BM25_FOLDER
    if bm25.exists():
        shutil.rmtree(bm25)
        result.actions.append("deleted the BM25 postings")
    # a scalar index built once stays, whatever the table's size (LanceStore.refresh_indexes):
    # one dropped here is rebuilt even when the table has shrunk below scalar_min_rows since
    scalar_dropped = any(i.endswith("_idx") and i[: -len("_idx")] in SCALAR_INDEXES for i in dropped)
    LanceStore(folder, dim, scalar_min_rows=0 if scalar_dropped else None).refresh_indexes()
    result.actions.append("rebuilt the missing indexes and the BM25 postings from the stored chunks")
    return result
