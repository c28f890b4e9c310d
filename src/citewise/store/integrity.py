"""The result types of ``citewise index check`` and ``citewise index repair``, shared by the
store backends (:mod:`citewise.store.lance_check`, :mod:`citewise.store.pg_check`) and the index
level (:mod:`citewise.integrity`)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Finding:
    """One damaged part of an index.

    Attributes:
        part: what it is ("chunks table", "index groups_idx", "BM25 postings", "settings" ...).
        path: the damaged file or folder (a table name for a server store).
        problem: what is wrong with it, one line.
        derived: whether it is rebuilt from the stored chunks (repair loses nothing).
    """

    part: str
    path: str
    problem: str
    derived: bool = False

    def line(self) -> str:
        kind = "derived, rebuilt from the stored chunks" if self.derived else "stored data"
        return f"{self.part}: {self.path}: {self.problem} ({kind})"


@dataclass
class RepairResult:
    """What a repair did and what it could not keep.

    Attributes:
        actions: one line per step taken, in order.
        lost: one line per loss (documents back at an earlier version or gone, log entries gone);
            empty when nothing was lost.
        lost_documents: ids of documents that are gone or at an earlier version, when known.
        reingest: folders (ingest roots from the ingest log) whose re-ingest brings back what
            was lost.
        moved_aside: damaged files moved out of the store (kept for inspection, never deleted).
    """

    actions: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    lost_documents: list[str] = field(default_factory=list)
    reingest: list[str] = field(default_factory=list)
    moved_aside: list[str] = field(default_factory=list)

    def merge(self, other: "RepairResult") -> None:
        self.actions += other.actions
        self.lost += other.lost
        self.lost_documents = sorted(set(self.lost_documents) | set(other.lost_documents))
        self.reingest = sorted(set(self.reingest) | set(other.reingest))
        self.moved_aside += other.moved_aside
