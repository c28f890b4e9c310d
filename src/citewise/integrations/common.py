"""What the framework adapters share: opening an index, filters, result metadata, and turning a
framework document (text and a metadata mapping) into a citewise :class:`~citewise.core.Document`."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from citewise.core import CitewiseError, Document, Filters, MetaCondition, Principal, SearchResult

#: Metadata keys that become the document's own fields in :func:`to_document` (the rest stays metadata).
FIELD_KEYS = ("id", "doc_id", "title", "source", "version", "updated", "effective", "permissions")


def open_citewise(citewise=None, index: str | Path | None = None):
    """``citewise`` (a :class:`citewise.api.Citewise`), or the index at ``index`` opened read-only.

    Raises:
        CitewiseError: neither is given, or there is no index at ``index``.
    """
    if citewise is not None:
        return citewise
    from citewise.api import Citewise
    from citewise.index import Index

    if index is None:
        raise CitewiseError("give citewise= (a citewise.api.Citewise) or index= (an index folder)")
    if not Index.exists(index):
        raise CitewiseError(f"{index}: no index here yet; run 'citewise ingest PATH --index {index}' first")
    return Citewise.open(index, read_only=True)


def make_filters(filters: Sequence[str] | Sequence[MetaCondition] | Filters | None) -> Filters | None:
    """:class:`Filters` from citewise filter expressions (``"department=finance"``), conditions,
    or a :class:`Filters` (returned as is).

    Raises:
        CitewiseError: a bad expression.
    """
    if filters is None or isinstance(filters, Filters):
        return filters
    from citewise.metadata import parse_filter

    conds = tuple(f if isinstance(f, MetaCondition) else parse_filter(str(f), "filters") for f in filters)
    return Filters(metadata=conds) if conds else None


def principal_of(principal: Principal | None, groups: Sequence[str] | None = None) -> Principal:
    """``principal``, else one named ``integration`` in ``groups`` (neither: anonymous, public only)."""
    if principal is not None:
        return principal
    return Principal("integration", tuple(groups)) if groups else Principal()


def result_metadata(r: SearchResult) -> dict[str, Any]:
    """A result's fields as a framework document's metadata: the document's own metadata
    (front matter keys) first, then citewise's fields (which win on a clash): ``doc_id``,
    ``chunk_id``, ``title``, ``score``, ``rank``, ``stage``, ``heading_path``, ``snippet``,
    ``snippet_start``, ``snippet_end``, ``start``, ``end`` (offsets in the source file),
    ``version``, ``updated``, ``effective``, ``groups``."""
    return {
        **r.metadata,
        "doc_id": r.doc_id,
        "chunk_id": r.chunk_id,
        "title": r.title,
        "score": r.score,
        "rank": r.rank,
        "stage": r.stage,
        "heading_path": list(r.heading_path),
        "snippet": r.snippet,
        "snippet_start": r.snippet_start,
        "snippet_end": r.snippet_end,
        "start": r.start,
        "end": r.end,
        "version": r.version,
        "updated": r.updated,
        "effective": r.effective,
        "groups": list(r.groups),
    }


def _date(value: Any, key: str, doc_id: str):
    import datetime as dt

    if value in (None, ""):
        return None
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        raise CitewiseError(f"{doc_id}: metadata '{key}' must be a YYYY-MM-DD date, got {value!r}") from None


def to_document(
    text: str, metadata: Mapping[str, Any] | None = None, *, doc_id: str | None = None, fmt: str = "markdown"
) -> Document:
    """A citewise :class:`Document` from a framework document's text and metadata.

    The id is ``doc_id``, else the metadata's ``doc_id`` / ``id`` / ``source`` (a path: its stem
    under its folder, ``docs/a.md`` -> ``docs/a``), else a hash of the text. ``title``,
    ``version``, ``updated``, ``effective`` and ``permissions`` (a list or comma-separated groups;
    none: the index's default policy) become the document's fields; every other key is metadata,
    filterable as front matter is. The content hash covers the text and the metadata, so a changed
    field re-indexes the document.

    Raises:
        CitewiseError: empty text, or a date field that is not YYYY-MM-DD.
    """
    from citewise.metadata import normalize, to_json

    meta = dict(metadata or {})
    if not text or not text.strip():
        raise CitewiseError(f"{doc_id or meta.get('source') or 'document'}: no text")
    source = str(meta.get("source") or "")
    ident = doc_id or meta.get("doc_id") or meta.get("id")
    if not ident and source:
        p = Path(source)
        ident = (p.parent / p.stem).as_posix().lstrip("/") if p.suffix else source
    ident = str(ident or "doc-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16])
    perms = meta.get("permissions")
    groups = tuple(
        sorted(
            {
                g.strip()
                for g in (re.split(r"[,\s]+", perms) if isinstance(perms, str) else perms or ())
                if str(g).strip()
            }
        )
    )
    rest = normalize({k: v for k, v in meta.items() if k not in FIELD_KEYS})
    digest = hashlib.sha256(
        (text + "\0" + to_json({**rest, **{k: str(meta.get(k, "")) for k in FIELD_KEYS}})).encode(
            "utf-8", "surrogatepass"
        )
    ).hexdigest()
    return Document(
        doc_id=ident,
        title=str(meta.get("title") or ident),
        text=text,
        source=source or ident,
        format=fmt,
        content_hash=digest,
        version=str(meta.get("version") or ""),
        updated=_date(meta.get("updated"), "updated", ident),
        effective=_date(meta.get("effective"), "effective", ident),
        groups=groups,
        metadata=rest,
    )


def ingest(index, documents: Iterable[Document], policy=None, root: str = "integration"):
    """Ingest citewise documents into ``index`` (an :class:`citewise.index.Index` or a
    :class:`citewise.api.Citewise`); returns the :class:`citewise.ingest.IngestReport`."""
    idx = getattr(index, "index", index)
    return idx.ingestor(policy=policy).ingest_documents(list(documents), root=root)
