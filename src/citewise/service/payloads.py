"""The JSON of ``citewise search --json`` and ``citewise ask --json`` as functions and typed
dicts, for every interface that must return the same objects (MCP tools, the HTTP API).

No MCP or web imports here: ``citewise.service.payloads`` is cheap to import.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import NotRequired, TypedDict  # pydantic (MCP output schemas) needs this one on Python < 3.12


class HitJSON(TypedDict):
    """One search hit, as ``citewise search --json`` prints it."""

    chunk_id: str
    doc_id: str
    title: str
    score: float
    rank: int
    stage: str
    snippet: str | None
    snippet_start: int | None
    snippet_end: int | None


class SearchJSON(TypedDict):
    """``citewise search --json`` (also the MCP ``search`` tool and ``POST /v1/search``).

    ``missing_words``: the query's words no hit's title or text holds
    (:func:`citewise.retrieval.snippets.missing_words`)."""

    hits: list[HitJSON]
    missing_words: list[str]


class CitationJSON(TypedDict):
    """A cited source: ``start``/``end`` are the cited span's character offsets in the source file."""

    doc_id: str
    title: str
    version: str | None
    updated: str | None
    chunk_id: str
    start: int
    end: int


class AnswerJSON(TypedDict):
    """``citewise ask --json`` (``timings`` in seconds)."""

    answer: str
    outcome: str  # answered / abstained / partial; with the evidence-gap controller: supported / gap / conflict / not_established
    citations: list[CitationJSON]
    retrieved_ids: list[str]
    used_ids: list[str]
    best_score: float
    context_ids: list[str]
    abstain_reason: str  # the reason's short form ('' when none)
    reason: dict[str, Any] | None  # {"code", "fields", "text"} (citewise.core.Reason)
    fabricated_citations: list[str]
    dropped_sentences: list[str]
    generator: str
    tool_calls: list[dict[str, Any]]
    corrections: list[dict[str, str]]  # misspelt question words read as corpus words: {"typo", "fix"}
    timings: dict[str, float]
    notes: list[str]  # what the citation check changed, or why the model was not used (LLM answers)
    llm: NotRequired[dict[str, Any]]  # LLM answers: prompt (messages, tokens, budget), usage, attribution
    scope: NotRequired[Any]  # only when the evidence-gap controller answered (ask --scope ...)
    controller: NotRequired[dict[str, Any]]


def hits_to_dicts(hits, chunks: dict, query: str) -> list[HitJSON]:
    """Search hits as JSON objects: the best-matching passage ``snippet`` of each hit's chunk
    (``chunks``: the hits' chunks by id) with its ``snippet_start``/``snippet_end`` character
    offsets in the source file (None when the chunk is no longer stored)."""
    from citewise.retrieval.snippets import chunk_snippet

    out = []
    for h in hits:
        sn = chunk_snippet(chunks[h.chunk_id], query) if h.chunk_id in chunks else None
        out.append({"chunk_id": h.chunk_id, "doc_id": h.doc_id, "title": h.title, "score": h.score, "rank": h.rank,
                    "stage": h.stage, "snippet": sn.text if sn else None, "snippet_start": sn.start if sn else None,
                    "snippet_end": sn.end if sn else None})
    return out


def hits_missing_words(query: str, hits, chunks: dict) -> list[str]:
    """The words of ``query`` that no hit's chunk (title or text) holds; ``chunks`` by id."""
    from citewise.retrieval.snippets import missing_words

    return missing_words(query, (f"{chunks[h.chunk_id].title}\n{chunks[h.chunk_id].text}"
                                 for h in hits if h.chunk_id in chunks)) if hits else []


def search_json(store, query: str, hits) -> SearchJSON:
    """The search payload of ``hits`` for ``query`` (snippets and missing words read from
    ``store``): ``citewise search --json``, the MCP ``search`` tool, ``POST /v1/search``."""
    chunks = store.get_chunks([h.chunk_id for h in hits]) if hits else {}
    return {"hits": hits_to_dicts(hits, chunks, query), "missing_words": hits_missing_words(query, hits, chunks)}


def answer_json(ans) -> AnswerJSON:
    """The ``citewise ask --json`` object of an :class:`citewise.core.Answer`."""
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
        "reason": ans.reason.as_dict() if ans.reason is not None else None,
        "fabricated_citations": ans.fabricated,
        "dropped_sentences": ans.dropped,
        "generator": ans.generator,
        "tool_calls": ans.tool_calls,
        "corrections": getattr(ans, "corrections", []),
        "timings": ans.timings,
        "notes": list(getattr(ans, "notes", [])),
        **({"llm": ans.llm} if getattr(ans, "llm", None) else {}),
        **({"scope": ans.evidence["controller"]["scope"], "controller": ans.evidence["controller"]}
           if isinstance(ans.evidence, dict) and "controller" in ans.evidence else {}),
    }


#: The name the HTTP API and the CLI use for :func:`answer_json`.
answer_to_dict = answer_json
