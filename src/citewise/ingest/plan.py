"""Planning an ingest: which documents are new, changed, superseded or moved, and which
version of each is kept (:class:`citewise.ingest.Ingestor`)."""

from __future__ import annotations

import datetime as dt
import dataclasses
import os
from pathlib import Path
from typing import Iterable

from citewise.core import Document
from citewise.lifecycle import in_force_date, newer_key, version_key
from citewise.store.base import DocumentEntry
from citewise.text.analyzer import find_identifiers
from citewise.text.loaders import HISTORY_SEP

from citewise.ingest.report import IngestReport


def moved_root(old: str, new: str) -> str:
    """The folder (or file) a document moved from: ``old`` without the trailing path parts it
    shares with ``new`` (``/a/c1/docs/x.md``, ``/b/c2/docs/x.md`` -> ``/a/c1``); ``old`` whole if
    the file name changed."""
    o, n = Path(old).parts, Path(new).parts
    same = 0
    while same < min(len(o), len(n)) - 1 and o[len(o) - 1 - same] == n[len(n) - 1 - same]:
        same += 1
    return str(Path(*o[: len(o) - same])) if same else old


def _entry_key(entry: DocumentEntry) -> tuple:
    """:func:`citewise.lifecycle.newer_key` of a stored document entry."""
    d = entry.effective or entry.updated
    try:
        ordinal = dt.date.fromisoformat(d).toordinal() if d else 0
    except ValueError:
        ordinal = 0
    return (version_key(entry.version), ordinal)


def _superseded(old: Document, new: Document) -> str:
    return (
        f"{old.source}: version '{old.version or '-'}' of '{old.doc_id}' superseded by version "
        f"'{new.version or '-'}' in {new.source}; kept as history ('{old.doc_id}@{old.version or '-'}')"
    )


def _stale_title_ids(entry, doc: Document) -> bool:
    """Whether the identifiers stored for ``doc``'s title are not the ones this version finds
    in it (:func:`citewise.text.analyzer.find_identifiers`; titles naming a release number,
    "Ledgerly 6.5 release notes", gained the identifier ``6.5``). Such a document is ingested
    again though its text is unchanged (counted as updated), so pinning finds it; a store that
    does not report its title identifiers (None) is taken at its word."""
    return entry.title_ids is not None and tuple(entry.title_ids) != tuple(find_identifiers(doc.title))


class _PlanMixin:
    """Version choice, known documents and the moved-root check of :class:`~citewise.ingest.Ingestor`."""

    def _refuse_rerooted(self, docs: list[Document], report: IngestReport, failed_sources: set[str]) -> list[Document]:
        """``docs`` without the ones this ingest would index again under a new id, each with an
        error line (its indexed version stays; its source joins ``failed_sources`` so it is not
        deleted). Ids and policy globs are relative to the ingested folder, so:

        * a file already indexed under an id its new one is a path suffix of, or the reverse
          (``citewise ingest docs/internal/finance``
          after ``citewise ingest docs``: ``internal/finance/budget`` would become ``budget``,
          the old id deleted, and the rule ``internal/finance/**`` would no longer match it,
          leaving it public);
        * a new document that is an indexed one whose file is gone, moved (the same content, or
          the same path seen from another root: ``docs/internal/finance/budget`` after ``mv docs
          parent/``), when it would be readable by a group the indexed one is not: a move never
          widens who may read a document.
        """
        stored = self.store.documents()
        if not stored:
            return docs
        by_source: dict[str, list] = {}
        for e in stored.values():
            by_source.setdefault(os.path.abspath(e.source), []).append(e)
        gone: list | None = None  # indexed documents whose file is gone: read only for a new id

        def rerooted(d: Document, e) -> bool:  # the same path seen from another root
            return d.doc_id.endswith("/" + e.doc_id) or e.doc_id.endswith("/" + d.doc_id)

        keep: list[Document] = []
        for d in docs:
            src = os.path.abspath(d.source)
            other = next((e for e in by_source.get(src, ()) if rerooted(d, e)), None)
            why = ""
            if other is not None:
                why = (
                    f"already indexed as '{other.doc_id}'; ingested from here it would become '{d.doc_id}' "
                    "(ids and policy globs are relative to the ingested folder); skipped, the indexed "
                    "version kept: ingest the folder it was indexed from (unchanged files are skipped), "
                    "or set 'id' in its front matter"
                )
            elif d.doc_id not in stored:
                if gone is None:  # a stat per indexed document; a re-ingest of known ids never pays it
                    gone = [e for e in stored.values() if not Path(e.source).exists()]
                groups = set(self.groups_for(d))
                was = next(
                    (
                        e
                        for e in gone
                        if (e.content_hash == d.content_hash or rerooted(d, e)) and not groups <= set(e.groups)
                    ),
                    None,
                )
                if was is not None:
                    why = (
                        f"looks like '{was.doc_id}' moved (readable by {', '.join(was.groups) or 'nobody'}), whose "
                        f"file {was.source} is gone; as '{d.doc_id}' it would be readable by "
                        f"{', '.join(sorted(groups)) or 'nobody'}: a moved document never gets wider permissions. "
                        "Skipped: make the policy globs match its new path (they are relative to the ingested "
                        "folder) or give it 'permissions' in its front matter"
                    )
            if why:
                report.errors.append(f"{d.source}: {why}")
                failed_sources.update((d.source, src))
            else:
                keep.append(d)
        return keep

    def _unmatched_rules(self, docs: list[Document], root: Path, report: IngestReport) -> None:
        """A warning line per policy rule that matches none of the folder's documents: its
        groups protect nothing, and a glob written as a file-system path ("/srv/docs/hr/**",
        "../hr/**") or with a typo made documents meant for a group readable by the default
        permission with no word said."""
        if self.policy is None or not self.policy.rules:
            return
        rels = [self._rel(d.source) for d in docs]
        for n, rule in enumerate(self.policy.rules, start=1):
            if not any(rule.matches(r) for r in rels):
                report.warnings.append(
                    f"{self.policy.source or 'policy'}: rule {n} (glob '{rule.glob}', groups {', '.join(rule.groups)}) "
                    f"matches no document under {root}; globs are relative to the ingested folder "
                    "(e.g. 'internal/finance/**' for its internal/finance/ subfolder), so no document got these groups"
                )

    def _known(self, docs: list[Document]) -> dict[str, DocumentEntry]:
        """The stored entries this run can consult: those of the incoming ids and of the history
        ids (``id@version``) their versions would get, not the whole index (at 1M chunks reading
        every entry was most of a one-document re-ingest, issue 12). Moves are detected per id
        (same id, other source), so no other entry is needed."""
        ids = {d.doc_id for d in docs} | {f"{d.doc_id}@{d.version or '-'}" for d in docs}
        return self.store.documents(doc_ids=ids)

    def _pick_versions(
        self, docs: Iterable[Document], known: dict[str, DocumentEntry], report: IngestReport
    ) -> list[Document]:
        """The newest version of each id (current), then older versions kept as history.

        Versions of one id are ordered by :func:`citewise.lifecycle.newer_key`. Each older one is
        stored as ``doc_id@version`` with ``current=False`` and ``valid_to`` = the date its
        successor came into force, so ``as_of``/``version`` queries still find it while default
        searches see only the newest. Equal keys: the first file wins, the second is an error.
        """
        versions: dict[str, list[Document]] = {}
        for doc in docs:
            if HISTORY_SEP in doc.doc_id:
                report.errors.append(
                    f"{doc.source}: document id '{doc.doc_id}' contains '{HISTORY_SEP}', which is reserved for "
                    f"older versions kept as history (id{HISTORY_SEP}version); rename the file or set another 'id'; skipped"
                )
                continue
            seen = versions.setdefault(doc.doc_id, [])
            twin = next((d for d in seen if newer_key(d) == newer_key(doc)), None)
            if twin is not None:
                report.errors.append(
                    f"{doc.source}: duplicate document id '{doc.doc_id}' "
                    f"(already used by {twin.source}, same version); skipped"
                )
                continue
            seen.append(doc)
        current: list[Document] = []
        history: list[Document] = []
        for doc_id, docs_of_id in versions.items():
            ordered = sorted(docs_of_id, key=newer_key)  # oldest first
            newest = ordered[-1]
            for older, newer in zip(ordered, ordered[1:]):
                report.superseded.append(_superseded(older, newer))
                history.append(
                    dataclasses.replace(
                        older, doc_id=f"{doc_id}@{older.version or '-'}", current=False, valid_to=in_force_date(newer)
                    )
                )
            entry = known.get(doc_id)
            if (
                entry is not None
                and entry.source != newest.source
                and Path(entry.source).is_file()
                and _entry_key(entry) > newer_key(newest)
            ):
                report.superseded.append(
                    f"{newest.source}: version '{newest.version or '-'}' of '{doc_id}' is older than the indexed "
                    f"version '{entry.version or '-'}' from {entry.source}; not indexed"
                )
                report.unchanged += 1
                continue
            current.append(newest)
        return current + history
