"""The service's pool of query handles (:class:`IndexPool`) and its background ingest jobs
(:class:`IngestJob`)."""

from __future__ import annotations

import contextlib
import datetime as dt
import queue
import threading
from dataclasses import dataclass
from pathlib import Path

from citewise.api import Citewise
from citewise.index import Index
from citewise.settings import Settings


# -- ingest jobs ------------------------------------------------------------------------------
@dataclass
class IngestJob:
    """A background ingest: ``status`` is ``running`` | ``done`` | ``failed``."""

    job_id: str
    path: str
    requested_by: str
    status: str = "running"
    started_at: str = ""
    finished_at: str | None = None
    report: dict | None = None
    error: str | None = None

    def as_dict(self) -> dict:
        return {
            "job_id": self.job_id,
            "path": self.path,
            "requested_by": self.requested_by,
            "status": self.status,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "report": self.report,
            "error": self.error,
        }


def _utc() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


class IndexPool:
    """``size`` :class:`~citewise.api.Citewise` handles (each its own :class:`Index`) on one
    folder, sharing one settings object; :meth:`use` lends one to a thread.

    Handles are opened on first need (``citewise serve`` opens the first one, model loaded, before
    it accepts requests: :func:`warm`; an app used without it pays that on its first request, and
    ``/readyz`` says when the first is open).
    """

    def __init__(self, index_dir: Path, size: int, settings: Settings):
        self.index_dir = index_dir
        self.settings = settings
        self.size = max(1, size)
        self._free: queue.LifoQueue = queue.LifoQueue()
        self._opened = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def use(self):
        try:
            idx = self._free.get_nowait()
        except queue.Empty:
            with self._lock:
                grow = self._opened < self.size
                if grow:
                    self._opened += 1
            if grow:
                try:
                    idx = Citewise(Index.open(self.index_dir, preload=True), self.settings)
                except BaseException:
                    with self._lock:
                        self._opened -= 1
                    raise
            else:
                idx = self._free.get()
        try:
            yield idx
        finally:
            self._free.put(idx)
