"""Document lifecycle: which version supersedes which, and how fresh an index is.

Versions
--------
Two sources that declare the same document id (front matter ``id``) are compared by
:func:`newer_key`: first the ``version`` string in natural order (``v2`` < ``v10``, ``4.2`` <
``4.10``, no version < any version), then the date the document is in force (``effective``, else
``updated``; undated is oldest). The newer one is indexed and the other is *superseded*: reported
in ``IngestReport.superseded``, not an error. Equal keys are a true duplicate: the first source
in path order is kept and the other is reported as an error. A document already in the index
from a source that still exists is only replaced by a newer version from another source.

Freshness (``citewise status``)
-------------------------------
* ``indexed_at``: when a document's current version was committed; ``source_changed_at``: the
  source file's modification time when it was read.
* index lag of a document = ``indexed_at − max(source_changed_at, first ingest run start)``: how
  long a change waited before it was searchable (a file older than the index counts from the
  index's first run, since no index could lag before it existed). Reported as max and p95.
* staleness = now − the finish of the last completed ingest run (a killed run does not count).
* stale documents: the source on disk differs from what is indexed (``changed``: content hash
  differs; ``missing``: file gone), plus ``unindexed`` files under an ingested folder that changed
  after the last run over that folder started and are not in the index (files the last run saw
  and rejected or found superseded are in its report, not here). Their pending lag =
  now − max(file mtime, first ingest run start).
* Alert: with a threshold, status is ``alert`` (CLI exit 1) when staleness or the largest
  pending lag exceeds it. Lag of already-indexed changes is history and reported, not alerted.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from citewise.core import Document, InputError
from citewise.store.base import DocumentEntry, IngestRun
from citewise.text.loaders import SUPPORTED_EXT, content_hash, iter_files

_TOKEN = re.compile(r"\d+|[^\d]+")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def version_key(version: str) -> tuple:
    """Natural-order sort key of a version string.

    Digit runs compare as numbers, other runs as lowercase text; a leading ``v`` is ignored;
    ``''`` sorts before every version.

    >>> sorted(["10", "9", "v2", "4.10", "4.2", ""], key=version_key)
    ['', 'v2', '4.2', '4.10', '9', '10']
    """
    v = version.strip().lower()
    if v.startswith("v") and v[1:2].isdigit():
        v = v[1:]
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in _TOKEN.findall(v))


def in_force_date(doc: Document) -> dt.date | None:
    """The date a document is in force from: ``effective``, else ``updated``, else None."""
    return doc.effective or doc.updated


def newer_key(doc: Document) -> tuple:
    """Key ordering two versions of one document id: (version, in-force date); bigger = newer."""
    d = in_force_date(doc)
    return (version_key(doc.version), d.toordinal() if d else 0)


def parse_duration(text: str) -> float:
    """Seconds in a duration like ``90``, ``90s``, ``15m``, ``6h``, ``2d``, ``1w``.

    Raises:
        InputError: anything else (naming the value).
    """
    m = _DURATION.match(str(text).lower())
    if not m:
        raise InputError("--max-lag", f"not a duration: {text!r} (use e.g. 900, 15m, 6h, 2d)")
    return float(m.group(1)) * _UNIT_S[m.group(2)]


def utc_now() -> dt.datetime:
    """The current time, timezone-aware UTC."""
    return dt.datetime.now(dt.timezone.utc)


def iso(ts: dt.datetime) -> str:
    """ISO-8601 with milliseconds, UTC."""
    return ts.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds")


def mtime_iso(path: str | Path) -> str:
    """A file's modification time as ISO-8601 UTC, or '' when it is not a readable file."""
    try:
        return iso(dt.datetime.fromtimestamp(Path(path).stat().st_mtime, dt.timezone.utc))
    except (OSError, ValueError):
        return ""


def _parse(ts: str) -> dt.datetime | None:
    if not ts:
        return None
    try:
        t = dt.datetime.fromisoformat(ts)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between closest ranks.

    Same definition as ``numpy.percentile(..., method="linear")`` (Hyndman & Fan type 7).
    Returns 0.0 for an empty list.

    >>> percentile([1, 2, 3, 4], 95)
    3.85
    """
    if not values:
        return 0.0
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return round(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo), 6)


@dataclass
class StaleDocument:
    """A document whose source on disk is not what the index holds.

    ``reason``: ``changed`` (content differs), ``missing`` (source file gone) or ``unindexed`` (a
    file under an ingested folder, new since the last run); ``pending_s``: seconds it has waited.
    """

    doc_id: str
    source: str
    reason: str
    pending_s: float

    def as_dict(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "source": self.source,
            "reason": self.reason,
            "pending_s": round(self.pending_s, 3),
        }


@dataclass
class Status:
    """Freshness of an index (see module docstring). Durations are seconds."""

    documents: int
    chunks: int
    last_run_at: str
    staleness_s: float | None
    lag_max_s: float
    lag_p95_s: float
    stale: list[StaleDocument] = field(default_factory=list)
    runs: int = 0
    unindexed_rows: int = 0
    threshold_s: float | None = None
    last_run_errors: int = 0
    #: a server store's replication role and lag (:mod:`citewise.store.pg_replication`), else None
    replication: dict | None = None

    @property
    def pending_max_s(self) -> float:
        return max((s.pending_s for s in self.stale), default=0.0)

    @property
    def alerts(self) -> list[str]:
        """Reasons the threshold is exceeded (empty = healthy or no threshold)."""
        if self.threshold_s is None:
            return []
        out = []
        if self.staleness_s is None:
            out.append("no completed ingest run recorded")
        elif self.staleness_s > self.threshold_s:
            out.append(f"last completed ingest {self.staleness_s:.0f}s ago > {self.threshold_s:.0f}s")
        if self.pending_max_s > self.threshold_s:
            out.append(f"a source change has waited {self.pending_max_s:.0f}s > {self.threshold_s:.0f}s")
        return out

    def as_dict(self) -> dict:
        return {
            "documents": self.documents,
            "chunks": self.chunks,
            "runs": self.runs,
            "last_run_at": self.last_run_at,
            "staleness_s": None if self.staleness_s is None else round(self.staleness_s, 3),
            "lag_s": {"max": round(self.lag_max_s, 3), "p95": round(self.lag_p95_s, 3)},
            "pending_max_s": round(self.pending_max_s, 3),
            "stale": [s.as_dict() for s in self.stale],
            "unindexed_rows": self.unindexed_rows,
            "last_run_errors": self.last_run_errors,
            "threshold_s": self.threshold_s,
            "status": "alert" if self.alerts else "ok",
            "alerts": self.alerts,
            **({"replication": self.replication} if self.replication is not None else {}),
        }


def compute_status(
    entries: dict[str, DocumentEntry],
    chunks: int,
    runs: list[IngestRun],
    now: dt.datetime | None = None,
    threshold_s: float | None = None,
    unindexed_rows: int = 0,
) -> Status:
    """Freshness of an index from its document entries and ingest log (see module docstring).

    Reads each indexed source file's mtime, and hashes it only when the mtime moved past the one
    recorded; lists files under the ingested folders (the ``root`` of each logged run) to find
    new ones. Sources that are not files (BEIR lines, URLs) are not checked.
    """
    now = now or utc_now()
    first = min((t for t in (_parse(r.started_at) for r in runs) if t), default=None)
    last = max((t for t in (_parse(r.finished_at) for r in runs) if t), default=None)

    lags = index_lags(entries, runs)
    stale: list[StaleDocument] = []
    known_sources = set()
    for e in entries.values():
        p = Path(e.source)
        known_sources.add(str(p))
        if not e.source_changed_at:  # not a file source
            continue
        if not p.is_file():
            stale.append(StaleDocument(e.doc_id, e.source, "missing", _pending(now, None, first)))
            continue
        m = mtime_iso(p)
        if m == e.source_changed_at:
            continue
        try:
            changed = content_hash(p.read_bytes(), p.suffix) != e.content_hash
        except OSError:
            changed = True
        if changed:
            stale.append(StaleDocument(e.doc_id, e.source, "changed", _pending(now, _parse(m), first)))
    last_start: dict[str, dt.datetime] = {}
    for r in runs:
        t = _parse(r.started_at)
        if r.root and t and (r.root not in last_start or t > last_start[r.root]):
            last_start[r.root] = t
    for root in sorted(last_start):
        rp = Path(root)
        if not rp.exists():
            continue
        for f in iter_files(rp):
            if f.suffix.lower() not in SUPPORTED_EXT or str(f) in known_sources:
                continue
            m = _parse(mtime_iso(f))
            if m is not None and m >= last_start[root]:
                known_sources.add(str(f))
                stale.append(StaleDocument("", str(f), "unindexed", _pending(now, m, first)))
    stale.sort(key=lambda s: (-s.pending_s, s.source, s.doc_id))
    return Status(
        documents=len(entries),
        chunks=chunks,
        last_run_at=iso(last) if last else "",
        staleness_s=(now - last).total_seconds() if last else None,
        lag_max_s=max(lags, default=0.0),
        lag_p95_s=percentile(lags, 95),
        stale=stale,
        runs=len(runs),
        unindexed_rows=unindexed_rows,
        threshold_s=threshold_s,
        last_run_errors=max(runs, key=lambda r: r.finished_at).errors if runs else 0,
    )


def index_lags(entries: dict[str, DocumentEntry], runs: list[IngestRun]) -> list[float]:
    """Index lag of each document that has both times, in seconds (module docstring:
    ``indexed_at − max(source_changed_at, first ingest run start)``, at least 0)."""
    first = min((t for t in (_parse(r.started_at) for r in runs) if t), default=None)
    lags = []
    for e in entries.values():
        idx, src = _parse(e.indexed_at), _parse(e.source_changed_at)
        src = max(src, first) if src and first else (src or first)
        if idx and src:
            lags.append(max(0.0, (idx - src).total_seconds()))
    return lags


def _pending(now: dt.datetime, changed: dt.datetime | None, first: dt.datetime | None) -> float:
    start = max(t for t in (changed, first) if t) if (changed or first) else now
    return max(0.0, (now - start).total_seconds())
