"""``citewise index check`` and ``citewise index repair``: find the damaged file of an index and
bring the index back to a state that reads.

Checked (:func:`check_index`):

* **settings**: ``index.json`` parses as the index's settings and its dimension is the stored
  vectors'; ``<index>/citewise.toml`` (when present) is a valid settings file;
* **the store**: every table, its data files, its indexes (the ANN index included) and the BM25
  postings — :mod:`citewise.store.lance_check` for the embedded store,
  :mod:`citewise.store.pg_check` for PostgreSQL;
* **derived folders** beside the store (``doclevel/``, ``raptor/``, when present): their files
  load.

Repaired (:func:`repair_index`, under the index's ingest lock): the store as its module says
(roll back to the last version whose files are whole, or keep the readable part; rebuild the
derived indexes from the stored chunks); derived folders that do not load are moved aside and
rebuilt by their next use. Settings are never guessed: a damaged ``index.json`` is named with
what it must hold. What was lost is said: documents gone or back at an earlier version, and the
folders whose re-ingest brings them back.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from citewise.core import CitewiseError
from citewise.store.integrity import Finding, RepairResult

#: Derived folders beside the store: name -> the files that must load (rebuilt on next use).
DERIVED = {"doclevel": ("meta.json", "entries.jsonl", "vectors.npy"), "raptor": ("trees.json", "vectors.npy")}
#: Folder (inside the index) damaged files are moved to by a repair.
DAMAGED_FOLDER = "damaged"


@dataclass
class CheckReport:
    """Findings of one check; ``ok`` when there are none."""

    index: str
    store: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_dict(self) -> dict:
        return {"index": self.index, "store": self.store, "ok": self.ok, "findings": [vars(f) for f in self.findings]}


def _settings(path: Path) -> tuple[dict | None, list[Finding]]:
    from citewise.index import IndexSettings

    cfg = path / "index.json"
    try:
        data = json.loads(cfg.read_text())
        IndexSettings(**data)
    except (OSError, ValueError, TypeError) as e:
        return None, [
            Finding(
                "settings",
                str(cfg),
                f"cannot be read as index settings ({' '.join(str(e).split())}); "
                "it must hold the embedder and vector dimension the index was built with",
            )
        ]
    out = []
    toml = path / "citewise.toml"
    if toml.exists():
        from citewise.core import InputError
        from citewise.settings import load_settings

        try:
            load_settings(path, env={}, cwd=path)
        except InputError as e:
            out.append(Finding("settings", str(toml), str(e)))
    return data, out


def _derived(path: Path) -> list[Finding]:
    import numpy as np

    out = []
    for name, files in DERIVED.items():
        folder = path / name
        if not folder.is_dir():
            continue
        for f in files:
            p = folder / f
            try:
                if f.endswith(".npy"):
                    np.load(p)
                elif f.endswith(".jsonl"):
                    for line in p.read_text(encoding="utf-8").splitlines():
                        json.loads(line)
                else:
                    json.loads(p.read_text(encoding="utf-8"))
            except (OSError, ValueError, EOFError) as e:
                out.append(
                    Finding(
                        f"{name} (derived)", str(p), f"cannot be read ({' '.join(str(e).split())[:120]})", derived=True
                    )
                )
    return out


def _store_of(path: Path, data: dict | None, store: str | None) -> str:
    from citewise.index import store_choice

    return store_choice(store, (data or {}).get("store", ""))


def check_index(path: str | Path, store: str | None = None) -> CheckReport:
    """Check the index folder ``path`` (module docstring).

    Raises:
        CitewiseError: ``path`` holds no index.
    """
    path = Path(path)
    if not (path / "index.json").exists() and not (path / "lance").is_dir():
        raise CitewiseError(f"{path}: no index here")
    data, findings = _settings(path)
    url = _store_of(path, data, store)
    if url:
        from citewise.index import strip_password
        from citewise.store.pg_check import check as pg_check

        if data is None:
            raise CitewiseError(f"{path}/index.json cannot be read, so the store's dimension is unknown")
        findings += pg_check(url, int(data["dim"]))
        report = CheckReport(str(path), strip_password(url))
    else:
        from citewise.store.lance_check import check as lance_check

        findings += lance_check(path / "lance")
        if data is not None:
            findings += _dim_matches(path, int(data["dim"]))
        report = CheckReport(str(path), str(path / "lance"))
    report.findings = findings + _derived(path)
    return report


def _dim_matches(path: Path, dim: int) -> list[Finding]:
    from citewise.store.lance_files import manifests

    table = path / "lance" / "chunks.lance"
    if not manifests(table):
        return []
    try:
        from citewise.store.lance import import_lancedb

        have = import_lancedb().connect(str(path / "lance")).open_table("chunks").schema.field("vector").type.list_size
    except Exception:  # noqa: BLE001 - an unreadable table is reported by the store check
        return []
    if have != dim:
        return [
            Finding("settings", str(path / "index.json"), f"records dimension {dim}, the stored vectors have {have}")
        ]
    return []


def repair_index(path: str | Path, store: str | None = None, wait: bool = False) -> tuple[RepairResult, CheckReport]:
    """Repair the index folder ``path`` (module docstring); returns what was done and the check
    that follows it.

    Raises:
        CitewiseError: no index here, or ``index.json`` unreadable (its embedder is recorded
            nowhere else); IndexBusy: an ingest holds the lock and ``wait`` is False.
    """
    from citewise.index import ingest_lock

    path = Path(path)
    before = check_index(path, store)
    result = RepairResult()
    if before.ok:
        return result, before
    settings = [f for f in before.findings if f.part == "settings" and f.path.endswith("index.json")]
    if settings:
        raise CitewiseError(
            f"{settings[0].path}: {settings[0].problem}; repair cannot rebuild it (the embedder is "
            "recorded nowhere else): restore it from a backup, or ingest into a new --index folder"
        )
    data = json.loads((path / "index.json").read_text())
    quarantine = path / DAMAGED_FOLDER / dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    url = _store_of(path, data, store)
    with ingest_lock(path, wait=wait):
        if url:
            from citewise.store.pg_check import repair as pg_repair

            result.merge(pg_repair(url, int(data["dim"])))
        elif any(not f.part.endswith("(derived)") and f.part != "settings" for f in before.findings):
            from citewise.store.lance_check import repair as lance_repair

            result.merge(lance_repair(path / "lance", int(data["dim"]), quarantine))
        for f in before.findings:
            if f.part.endswith("(derived)"):
                folder = Path(f.path).parent
                if folder.exists():
                    dest = quarantine / folder.name
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.move(str(folder), str(dest))
                    result.moved_aside.append(f"{folder} -> {dest}")
                    result.actions.append(f"moved aside {folder.name}/ (rebuilt the next time it is used)")
    return result, check_index(path, store)


def check_lines(report: CheckReport) -> list[str]:
    """What ``citewise index check`` prints (one line per finding, then the way out)."""
    if report.ok:
        return [f"{report.index}: every table, index, the BM25 postings and the settings read ({report.store})."]
    lines = [f"{report.index}: {len(report.findings)} damaged part(s):"]
    lines += [f"  {f.line()}" for f in report.findings]
    if any(not f.derived for f in report.findings):
        lines.append(
            f"run 'citewise index repair --index {report.index}': it rolls back to the last version whose "
            "files are whole (or keeps the readable part) and says what is lost"
        )
    else:
        lines.append(
            f"run 'citewise index repair --index {report.index}': only derived data is damaged, it is "
            "rebuilt from the stored chunks and nothing is lost"
        )
    return lines


def repair_lines(result: RepairResult, after: CheckReport) -> list[str]:
    """What ``citewise index repair`` prints: the steps, what was lost, what to re-ingest, and
    the check that followed."""
    if not result.actions and after.ok:
        return [f"{after.index}: nothing to repair; every part reads."]
    lines = [f"repaired: {a}" for a in result.actions]
    lines += [f"moved aside: {m}" for m in result.moved_aside]
    lines += [f"lost: {x}" for x in result.lost] or ["lost: nothing"]
    lines += [f"to bring it back: citewise ingest {root} --index {after.index}" for root in result.reingest]
    if after.ok:
        lines.append(f"{after.index}: every part reads now.")
    else:
        lines.append(f"{after.index}: still damaged:")
        lines += [f"  {f.line()}" for f in after.findings]
    return lines
