"""Search results with text and metadata: :class:`~citewise.core.Hit` lists turned into
:class:`~citewise.core.SearchResult` lists (one ``get_chunks`` call for all of them)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from citewise.core import Hit, SearchResult
from citewise.store.base import Store, StoredChunk
from citewise.retrieval.snippets import chunk_snippet


def search_results(
    store: Store, hits: Sequence[Hit], query: str, chunks: dict[str, StoredChunk] | None = None
) -> list[SearchResult]:
    """``hits`` as :class:`SearchResult`, in the same order, each with its chunk's text, its best
    snippet for ``query`` and its document's fields (``chunks``: the hits' stored chunks by id
    when the caller read them already). A hit whose chunk is no longer stored keeps its
    :class:`Hit` fields and empty text."""
    if chunks is None:
        chunks = store.get_chunks([h.chunk_id for h in hits]) if hits else {}
    out: list[SearchResult] = []
    for h in hits:
        base = {f.name: getattr(h, f.name) for f in dataclasses.fields(Hit)}
        c = chunks.get(h.chunk_id)
        if c is None:
            out.append(SearchResult(**base))
            continue
        sn = chunk_snippet(c, query)
        out.append(
            SearchResult(
                **base,
                text=c.text,
                snippet=sn.text,
                snippet_start=sn.start,
                snippet_end=sn.end,
                heading_path=tuple(c.heading_path),
                start=c.start,
                end=c.end,
                version=c.version,
                updated=c.updated,
                effective=c.effective,
                groups=tuple(c.groups),
                pages=(c.page_start, c.page_end),
                metadata=dict(c.metadata),
            )
        )
    return out
