"""JSON shapes of answers and search hits, shared by ``citewise ask/search --json`` and the HTTP API
(so the two can never drift apart). No web framework is imported here."""

from __future__ import annotations

from citewise.core import Answer, Hit


def answer_to_dict(ans: Answer) -> dict:
    """The JSON object of an answer (``citewise ask --json``, ``POST /v1/ask``).

    Keys: ``answer``, ``outcome``, ``citations`` (``doc_id``, ``title``, ``version``, ``updated``,
    ``chunk_id``, ``start``, ``end``: the cited span's character offsets in the source file),
    ``retrieved_ids``, ``used_ids``, ``best_score``, ``context_ids``, ``abstain_reason``,
    ``fabricated_citations``, ``dropped_sentences``, ``generator``, ``tool_calls``, ``timings``
    (seconds).
    """
    return {
        "answer": ans.text,
        "outcome": ans.outcome,
        "citations": [{"doc_id": c.doc_id, "title": c.title, "version": c.version, "updated": c.updated,
                       "chunk_id": c.chunk_id, "start": c.start, "end": c.end} for c in ans.citations],
        "retrieved_ids": ans.retrieved_ids,
        "used_ids": ans.used_ids,
        "best_score": ans.best_score,
        "context_ids": ans.context_ids,
        "abstain_reason": ans.abstain_reason,
        "fabricated_citations": ans.fabricated,
        "dropped_sentences": ans.dropped,
        "generator": ans.generator,
        "tool_calls": ans.tool_calls,
        "timings": ans.timings,
    }


def hits_to_dicts(hits: list[Hit], store, query: str) -> list[dict]:
    """Search hits as JSON objects (``citewise search --json``, ``POST /v1/search``): ``chunk_id``,
    ``doc_id``, ``title``, ``score``, ``rank``, ``stage`` and the best-matching passage
    ``snippet`` with its ``snippet_start``/``snippet_end`` character offsets in the source file
    (None when the chunk is no longer stored)."""
    from citewise.retrieval.snippets import chunk_snippet

    chunks = store.get_chunks([h.chunk_id for h in hits]) if hits else {}
    out = []
    for h in hits:
        sn = chunk_snippet(chunks[h.chunk_id], query) if h.chunk_id in chunks else None
        out.append({"chunk_id": h.chunk_id, "doc_id": h.doc_id, "title": h.title, "score": h.score,
                    "rank": h.rank, "stage": h.stage,
                    "snippet": sn.text if sn else None, "snippet_start": sn.start if sn else None,
                    "snippet_end": sn.end if sn else None})
    return out
