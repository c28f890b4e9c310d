"""``citewise watch``: re-index a folder when its files change (watchdog).

Every change event (file created, modified, written and closed, deleted, moved; hidden files and
the index folder itself are ignored) marks the folder dirty; once no event has arrived for
``debounce`` seconds, one incremental ingest of the whole folder runs (unchanged files cost a
read and a hash, no embedding; deleted files leave the index). A full incremental ingest also
runs at start and every ``rescan`` seconds, which catches events the OS dropped and keeps the
ingest log's "last completed run" fresh for ``citewise status``.
"""

from __future__ import annotations

import stat
import threading
import time
from pathlib import Path
from typing import Callable

from citewise.core import CitewiseError

#: watchdog event types that mean the content of the tree may have changed (not opened/read).
CHANGE_EVENTS = {"created", "modified", "deleted", "moved", "closed"}


class FolderWatcher:
    """Watch ``path`` and keep ``index`` in step with it.

    Args:
        index: a :class:`citewise.index.Index`.
        path: folder to watch (recursively) and ingest.
        debounce: seconds without events before re-indexing (> 0).
        rescan: seconds between full incremental ingests even without events (None = never).
        policy: a :class:`citewise.policy.Policy` or policy file path, or None (the index's
            kept policy, if any; see :meth:`citewise.index.Index.ingest`).
        on_run: called with each :class:`citewise.ingest.IngestReport`.
        on_error: called with the message of a run that failed (the watcher keeps going).
        polling: use watchdog's polling observer (for file systems without inotify).

    Raises:
        CitewiseError: ``path`` is not a folder, or ``debounce`` is not positive.
    """

    def __init__(
        self,
        index,
        path: str | Path,
        debounce: float = 1.0,
        rescan: float | None = 3600.0,
        policy=None,
        on_run: Callable | None = None,
        on_error: Callable[[str], None] | None = None,
        polling: bool = False,
    ):
        self.index = index
        self.path = Path(path).resolve()
        if not self.path.is_dir():
            raise CitewiseError(f"{path}: not a folder (watch needs a folder)")
        # nan compares false with everything and inf never elapses: either silently never re-indexed
        if not (0 < debounce < float("inf")):
            raise CitewiseError(f"--debounce must be a finite number of seconds > 0, got {debounce}")
        if rescan is not None and not (0 < rescan <= float("inf")):
            raise CitewiseError(f"--rescan must be a number of seconds > 0, got {rescan}")
        self.debounce = debounce
        self.rescan = rescan
        self.policy = policy
        self.on_run = on_run or (lambda report: None)
        self.on_error = on_error or (lambda msg: None)
        self.polling = polling
        self._lock = threading.Lock()
        self._dirty = False
        self._last_event = 0.0
        self.runs = 0

    def _relevant(self, src: str) -> bool:
        p = Path(src)
        try:
            rel = p.resolve().relative_to(self.path)
        except (ValueError, OSError):
            return False
        index_dir = Path(self.index.path).resolve()
        if p.resolve() == index_dir or index_dir in p.resolve().parents:
            return False
        return not any(part.startswith(".") for part in rel.parts)

    def notify(self, event) -> None:
        """Record a watchdog event (also usable directly in tests)."""
        if event.event_type not in CHANGE_EVENTS:
            return
        paths = [event.src_path] + ([event.dest_path] if getattr(event, "dest_path", "") else [])
        if event.is_directory and event.event_type == "modified":
            return  # a folder's mtime moving says nothing the file events do not
        if any(self._relevant(str(p)) for p in paths):
            with self._lock:
                self._dirty = True
                self._last_event = time.monotonic()

    def ingest_once(self) -> None:
        """One incremental ingest of the folder; errors are reported, not raised."""
        try:
            report = self.index.ingest(self.path, policy=self.policy)
        except CitewiseError as e:
            self.on_error(str(e))
            return
        self.runs += 1
        self.on_run(report)

    def run(self, stop: threading.Event, tick: float = 0.05) -> None:
        """Ingest, then watch until ``stop`` is set (Ctrl-C in the CLI sets it)."""
        from watchdog.events import FileSystemEventHandler

        if self.polling:
            from watchdog.observers.polling import PollingObserver as Observer
        else:
            from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                watcher.notify(event)

        handler = Handler()
        observer = Observer()
        observer.schedule(handler, str(self.path), recursive=True)
        observer.start()
        identity = folder_identity(self.path)
        try:
            self.ingest_once()
            last_full = last_check = time.monotonic()
            while not stop.wait(tick):
                now = time.monotonic()
                with self._lock:
                    due = self._dirty and now - self._last_event >= self.debounce
                due = due or (self.rescan is not None and now - last_full >= self.rescan)
                if due or now - last_check >= IDENTITY_CHECK_S:
                    # the events follow the folder the OS watch was put on: a folder swapped in
                    # under the same name (mv docs.new docs) or deleted and made again gave no
                    # event and no error, and nothing was indexed again
                    last_check = now
                    current = folder_identity(self.path)
                    if current != identity:
                        if current is None:
                            self.on_error(f"{self.path}: the watched folder is gone; waiting for it to come back")
                        else:
                            observer.unschedule_all()
                            observer.schedule(handler, str(self.path), recursive=True)
                            due = True  # ingest the new folder now
                        identity = current
                    if current is None:
                        continue  # nothing to ingest until it is back (events say nothing either)
                if due:
                    with self._lock:
                        self._dirty = False
                    self.ingest_once()
                    last_full = time.monotonic()
        finally:
            observer.stop()
            observer.join(timeout=5)


#: Seconds between checks that the watched path is still the folder being watched.
IDENTITY_CHECK_S = 1.0


def folder_identity(path: Path) -> tuple[int, int] | None:
    """``(device, inode)`` of the folder at ``path``, or None when there is no folder there."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None
