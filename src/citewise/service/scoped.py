"""What a caller who is not an admin may be told about the index as a whole.

Counts, lags and stale lists describe documents; a caller may learn them only for documents they
may read. An anonymous ``/metrics`` scrape and a non-admin ``/v1/status`` both reported the
totals of every document, restricted ones included (break-it trial: ``citewise_index_documents``
told an anonymous caller how many restricted documents exist, and moved when one was added).

:func:`caller_view` turns the full status (``citewise status --json`` plus ``duplicates`` and
``index``) into the caller's view: documents and chunks counted over the documents whose groups
meet the caller's, the lag over those documents only, the stale list limited to them, and the
figures that cannot be split by document (rows not yet in the lexical index, files that failed
in the last run, duplicate lines, the index path) left out (None or empty).
"""

from __future__ import annotations

from citewise.lifecycle import index_lags, percentile
from citewise.store.base import DocumentEntry, IngestRun


def visible_entries(entries: dict[str, DocumentEntry], groups: set[str]) -> dict[str, DocumentEntry]:
    """The documents whose permission groups meet ``groups`` (the store's "any group" rule)."""
    return {d: e for d, e in entries.items() if groups & set(e.groups)}


def caller_view(full: dict, entries: dict[str, DocumentEntry], runs: list[IngestRun], groups: set[str]) -> dict:
    """The status a caller reading ``groups`` may see (module docstring); ``full`` is not changed.

    Args:
        full: the full status dict (``Status.as_dict()`` with ``duplicates`` and ``index``).
        entries: every stored document (``Store.documents()``); runs: the ingest log.
        groups: the caller's groups (``Principal.all_groups()``).
    """
    visible = visible_entries(entries, groups)
    lags = index_lags(visible, runs)
    stale = [s for s in full["stale"] if s["doc_id"] and s["doc_id"] in visible]
    return {
        **full,
        "documents": len(visible),
        "chunks": sum(e.chunk_count for e in visible.values()),
        "lag_s": {"max": round(max(lags, default=0.0), 3), "p95": round(percentile(lags, 95), 3)},
        "stale": stale,
        "pending_max_s": max((s["pending_s"] for s in stale), default=0.0),
        "unindexed_rows": None,
        "last_run_errors": None,
        "duplicates": [],
        "index": None,
    }
