"""The JSON of ``citewise search --json`` and ``citewise ask --json`` as functions and typed
dicts, for every interface that must return the same objects (MCP tools, the HTTP API).

No MCP or web imports here: ``citewise.service.payloads`` is cheap to import.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import NotRequired, TypedDict  # pydantic (MCP output schemas) needs this one on Python < 3.12


class HitJSON(TypedDict):
    """One search hit, as ``citewise search --json`` prints it (:class:`citewise.core.SearchResult`):
    ``snippet_start``/``snippet_end`` and ``start``/``end`` are character offsets in the source
    file (the snippet's, the chunk's); ``text`` the chunk's text; ``metadata`` the document's
    front matter keys beyond the built-in ones. Snippet fields are None when the chunk is gone."""

    chunk_id: str
    doc_id: str
    title: str
    score: float
    rank: int
    stage: str
    snippet: str | None
    snippet_start: int | None
    snippet_end: int | None
    text: str
    heading_path: list[str]
    start: int
    end: int
    version: str
    updated: str
    effective: str
    groups: list[str]
    pages: list[int]
    metadata: dict[str, Any]


class SearchJSON(TypedDict):
    """``citewise search --json`` (also the MCP ``search`` tool and ``POST /v1/search``).

    ``missing_words``: the query's words no hit's title or text holds
    (:func:`citewise.answer.question_words.missing_words`)."""

    hits: list[HitJSON]
    missing_words: list[str]


class SpanJSON(TypedDict):
    """Where one sentence (0-based index in the answer) is supported: offsets in the source file."""

    sentence: int
    chunk_id: str
    start: int
    end: int


class CitationJSON(TypedDict):
    """A cited source: ``start``/``end`` are the first citing sentence's span (character offsets
    in the source file), ``spans`` every citing sentence's own span, in answer order."""

    doc_id: str
    title: str
    version: str | None
    updated: str | None
    chunk_id: str
    start: int
    end: int
    spans: list[SpanJSON]


class MarkerJSON(TypedDict):
    """A citation marker of the answer text (``marker_start``/``marker_end``: offsets of
    ``doc:ID`` in ``answer``) and the span of its own sentence (``start``/``end`` in the source
    file); ``number`` is the source's place in ``citations`` (1-based)."""

    marker_start: int
    marker_end: int
    kind: str
    id: str
    doc_id: str
    chunk_id: str
    title: str
    start: int
    end: int
    number: int


class AnswerJSON(TypedDict):
    """``citewise ask --json`` (``timings`` in seconds)."""

    answer: str
    markers: list[MarkerJSON]  # each citation marker with its own sentence's span
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


def result_json(r) -> HitJSON:
    """One :class:`citewise.core.SearchResult` as JSON."""
    found = r.snippet_start is not None
    return {
        "chunk_id": r.chunk_id,
        "doc_id": r.doc_id,
        "title": r.title,
        "score": r.score,
        "rank": r.rank,
        "stage": r.stage,
        "snippet": r.snippet if found else None,
        "snippet_start": r.snippet_start,
        "snippet_end": r.snippet_end,
        "text": r.text,
        "heading_path": list(r.heading_path),
        "start": r.start,
        "end": r.end,
        "version": r.version,
        "updated": r.updated,
        "effective": r.effective,
        "groups": list(r.groups),
        "pages": list(r.pages),
        "metadata": dict(r.metadata),
    }


def hits_missing_words(query: str, results) -> list[str]:
    """The words of ``query`` that no result's title or text holds."""
    from citewise.answer.question_words import missing_words

    return (
        missing_words(query, (f"{r.title}\n{r.text}" for r in results if r.snippet_start is not None))
        if results
        else []
    )


def search_json(store, query: str, hits) -> SearchJSON:
    """The search payload for ``query``: ``citewise search --json``, the MCP ``search`` tool,
    ``POST /v1/search``. ``hits``: :class:`~citewise.core.SearchResult` (as
    :meth:`citewise.api.Citewise.search` returns them), or plain hits, whose chunks are then read
    from ``store``."""
    from citewise.core import SearchResult

    if not all(isinstance(h, SearchResult) for h in hits):
        from citewise.retrieval.results import search_results

        hits = search_results(store, hits, query)
    return {"hits": [result_json(r) for r in hits], "missing_words": hits_missing_words(query, hits)}


def answer_json(ans) -> AnswerJSON:
    """The ``citewise ask --json`` object of an :class:`citewise.core.Answer`."""
    from citewise.answer.citations import marker_links

    return {
        "answer": ans.text,
        "markers": marker_links(ans.text, ans.citations),
        "outcome": ans.outcome,
        "citations": [
            {
                "doc_id": c.doc_id,
                "title": c.title,
                "version": c.version,
                "updated": c.updated,
                "chunk_id": c.chunk_id,
                "start": c.start,
                "end": c.end,
                "spans": [
                    {"sentence": sp.sentence, "chunk_id": sp.chunk_id, "start": sp.start, "end": sp.end}
                    for sp in getattr(c, "spans", ())
                ],
            }
            for c in ans.citations
        ],
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
        **(
            {"scope": ans.evidence["controller"]["scope"], "controller": ans.evidence["controller"]}
            if isinstance(ans.evidence, dict) and "controller" in ans.evidence
            else {}
        ),
        # records answers: the SQL that ran, the rule comparison computed in code
        **{k: ans.evidence[k] for k in ("sql", "comparison") if isinstance(ans.evidence, dict) and k in ans.evidence},
    }


#: The name the HTTP API and the CLI use for :func:`answer_json`.
answer_to_dict = answer_json
