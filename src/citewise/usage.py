"""Retrievals per chunk: how often each chunk was returned, and which were never returned.

The design documents' "what to watch": "Retrievals per chunk. Documents never retrieved are
either unnecessary or badly split." :meth:`citewise.index.Index.search` and
:meth:`~citewise.index.Index.ask` record the chunk ids they return (``ask``: the retrieved ids)
in ``<index>/usage.sqlite``: one row per chunk ``(chunk_id, retrievals, last_retrieved)``.

Writes are batched: ids are counted in memory and added to the file every
:data:`FLUSH_EVERY` ids or :data:`FLUSH_SECONDS` seconds, and at process exit, in one
transaction (SQLite WAL; concurrent CLI processes and a server add to the same counts). A file
that cannot be written (read-only folder) is reported once on stderr and the counts of that
process are dropped: search and ask never fail for it.
"""

from __future__ import annotations

import atexit
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

FLUSH_EVERY = 500
FLUSH_SECONDS = 5.0
FILE = "usage.sqlite"

#: One log per index folder in a process (the service's pool opens several handles on one folder),
#: kept until exit so the last counts are flushed.
_logs: dict[Path, "RetrievalLog"] = {}
_logs_lock = threading.Lock()


def _flush_all() -> None:
    for log in list(_logs.values()):
        log.flush()


atexit.register(_flush_all)


def retrieval_log(folder: str | Path) -> "RetrievalLog":
    """The process's :class:`RetrievalLog` of an index folder."""
    key = Path(folder).resolve()
    with _logs_lock:
        if key not in _logs:
            _logs[key] = RetrievalLog(key)
        return _logs[key]


class RetrievalLog:
    """Counts of retrievals per chunk id for one index folder (module docstring)."""

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / FILE
        self._pending: Counter = Counter()
        self._lock = threading.Lock()
        self._last = time.monotonic()
        self._failed = False

    def _connect(self):
        import sqlite3

        con = sqlite3.connect(self.path, timeout=5.0)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute(
            "CREATE TABLE IF NOT EXISTS retrievals (chunk_id TEXT PRIMARY KEY, retrievals INTEGER NOT NULL, "
            "last_retrieved REAL NOT NULL)"
        )
        return con

    def record(self, chunk_ids: Iterable[str]) -> None:
        """Count one retrieval of each id (a chunk returned twice in one list counts once)."""
        ids = set(chunk_ids)
        if not ids or self._failed:
            return
        with self._lock:
            self._pending.update(ids)
            due = sum(self._pending.values()) >= FLUSH_EVERY or time.monotonic() - self._last >= FLUSH_SECONDS
        if due:
            self.flush()

    def flush(self) -> None:
        """Add the pending counts to the file (see module docstring for failures)."""
        import sqlite3

        with self._lock:
            pending, self._pending = self._pending, Counter()
            self._last = time.monotonic()
        if not pending or self._failed:
            return
        now = time.time()
        try:
            con = self._connect()
            with con:
                con.executemany(
                    "INSERT INTO retrievals VALUES (?, ?, ?) ON CONFLICT(chunk_id) DO UPDATE SET "
                    "retrievals = retrievals + excluded.retrievals, last_retrieved = excluded.last_retrieved",
                    [(c, n, now) for c, n in sorted(pending.items())],
                )
            con.close()
        except (sqlite3.Error, OSError) as e:
            self._failed = True
            print(
                f"warning: {self.path}: retrieval counts not recorded ({e}); search and ask are unaffected",
                file=sys.stderr,
            )

    def counts(self) -> dict[str, int]:
        """``{chunk_id: retrievals}`` recorded so far (pending counts included)."""
        import sqlite3

        self.flush()
        if not self.path.exists():
            return {}
        try:
            con = self._connect()
            rows = con.execute("SELECT chunk_id, retrievals FROM retrievals").fetchall()
            con.close()
        except sqlite3.Error:
            return {}
        return {c: int(n) for c, n in rows}


@dataclass
class UsageReport:
    """Retrievals per chunk against the index's current chunks.

    Attributes:
        retrievals: total retrievals recorded of current chunks.
        chunks, chunks_retrieved: current chunks, and those retrieved at least once.
        never_retrieved_documents: ``doc_id`` of every current document none of whose chunks was
            ever retrieved, sorted.
        never_retrieved_chunks: per document with some retrieved chunks, its chunks never
            retrieved (``{doc_id: [chunk_id]}``).
        top: the 10 most retrieved chunks, ``[(chunk_id, retrievals)]`` (ties by id).
    """

    retrievals: int
    chunks: int
    chunks_retrieved: int
    never_retrieved_documents: list[str] = field(default_factory=list)
    never_retrieved_chunks: dict[str, list[str]] = field(default_factory=dict)
    top: list[tuple[str, int]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "retrievals": self.retrievals,
            "chunks": self.chunks,
            "chunks_retrieved": self.chunks_retrieved,
            "chunks_never_retrieved": self.chunks - self.chunks_retrieved,
            "never_retrieved_documents": self.never_retrieved_documents,
            "never_retrieved_chunks": self.never_retrieved_chunks,
            "top": [list(t) for t in self.top],
        }


def usage_report(store, counts: dict[str, int]) -> UsageReport:
    """Compare ``counts`` with the current chunks of ``store`` (its ``chunk_versions()``; older
    versions, ids with ``@``, are left out)."""
    chunks_of = {d: sorted(c for c, _, _ in rows) for d, rows in store.chunk_versions().items() if "@" not in d}
    current = {c for cs in chunks_of.values() for c in cs}
    seen = {c for c, n in counts.items() if n > 0 and c in current}
    never_docs = sorted(d for d, cs in chunks_of.items() if cs and not seen.intersection(cs))
    partly = {d: [c for c in cs if c not in seen] for d, cs in sorted(chunks_of.items()) if seen.intersection(cs)}
    top = sorted(((c, n) for c, n in counts.items() if c in current), key=lambda x: (-x[1], x[0]))[:10]
    return UsageReport(
        sum(counts.get(c, 0) for c in current),
        len(current),
        len(seen),
        never_docs,
        {d: cs for d, cs in partly.items() if cs},
        top,
    )
