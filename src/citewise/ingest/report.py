"""What an ingest run reports (:class:`IngestReport`), the progress callbacks' shapes and the
default-permission policies (:mod:`citewise.ingest`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


#: Policies for documents that declare no permissions.
DEFAULT_PERMISSIONS = ("public", "deny")


@dataclass
class IngestReport:
    """What one ingest run did. Counts are documents unless named otherwise.

    ``metadata_updated``: unchanged text whose permissions changed (rows rewritten with stored
    vectors). ``moved``: unchanged text and permissions read from another path than last time (a
    moved folder, a second clone); they count as ``unchanged`` too, their rows are rewritten with
    the new path and stored vectors. ``moved_from``: ``{old folder: documents}`` for them, the
    old path with the part it shares with the new one (the path below the ingested root) cut off. ``superseded``: one line per older version not indexed (not an error).
    ``errors``: one line per file skipped for an error. ``warnings``: one line per oddity that
    skipped nothing of value (unknown front matter key, folder named like a file).
    ``removed``: one line per deleted document (its file is gone). ``added_docs``,
    ``updated_docs``, ``deleted_docs``: the doc ids behind ``added``, ``updated`` and ``deleted``,
    in the order they were committed (``--json`` carries them; the counts stay the summary).
    ``duplicates``: one line per whole-book copy or near-duplicate not indexed (not an error).
    ``units_embedded``: answer units embedded. ``units_refreshed``: unchanged documents whose
    unit vectors were recomputed for a new splitter version (chunk vectors reused).
    """

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks_embedded: int = 0
    metadata_updated: int = 0
    units_embedded: int = 0
    units_refreshed: int = 0
    moved: int = 0
    moved_from: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    added_docs: list[str] = field(default_factory=list)
    updated_docs: list[str] = field(default_factory=list)
    deleted_docs: list[str] = field(default_factory=list)

    def unchanged_text(self) -> str:
        """``"60 unchanged"``, naming where moved documents came from: ``"60 unchanged (moved from
        /old/docs)"`` when all moved from one place, ``"60 unchanged (3 moved from /a, 2 from /b)"``
        otherwise (up to three places, then ``"and N more places"``)."""
        text = f"{self.unchanged} unchanged"
        if not self.moved:
            return text
        places = sorted(self.moved_from.items(), key=lambda kv: (-kv[1], kv[0]))
        if len(places) == 1 and self.moved == self.unchanged:
            return f"{text} (moved from {places[0][0]})"
        parts = [f"{n} moved from {root}" if i == 0 else f"{n} from {root}" for i, (root, n) in enumerate(places[:3])]
        if len(places) > 3:
            parts.append(f"and {len(places) - 3} more places")
        return f"{text} ({', '.join(parts)})"

    def as_dict(self) -> dict:
        return {
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "chunks_embedded": self.chunks_embedded,
            "metadata_updated": self.metadata_updated,
            "units_embedded": self.units_embedded,
            "units_refreshed": self.units_refreshed,
            "moved": self.moved,
            "moved_from": dict(sorted(self.moved_from.items())),
            "errors": list(self.errors),
            "superseded": list(self.superseded),
            "warnings": list(self.warnings),
            "duplicates": list(self.duplicates),
            "added_docs": list(self.added_docs),
            "updated_docs": list(self.updated_docs),
            "deleted_docs": list(self.deleted_docs),
        }


Progress = Callable[[int], None]
#: Embedding progress: called with (chunks embedded so far, chunks planned so far) during a run.
EmbedProgress = Callable[[int, int], None]


def _one_line(e: BaseException) -> str:
    msg = " ".join(str(e).split())[:200]
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__
