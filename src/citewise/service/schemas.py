"""Typed request and response bodies of the HTTP API (what ``/openapi.json`` documents).

Requests carry the same options as the CLI (:mod:`citewise.service.options`); responses are the
JSON of ``citewise search --json`` / ``citewise ask --json`` (:mod:`citewise.service.payloads`).
No field names a principal or groups: the credential decides who is asking.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from citewise.core import MAX_QUERY_CHARS
from citewise.service.options import FILTERS_HELP, RETRIEVER_HELP, RetrieverName
from citewise.service.payloads import AnswerJSON, SearchJSON


class SearchRequest(BaseModel):
    """``POST /v1/search``."""

    query: str = Field(..., description=f"What to look for (at most {MAX_QUERY_CHARS} characters).")
    k: int = Field(10, ge=1, le=100, description="How many hits.")
    retriever: RetrieverName = Field("shipped", description=RETRIEVER_HELP)
    as_of: dt.date | None = Field(None, description="Only documents in force on this date.")
    version: str | None = Field(None, max_length=200, description="Only documents with this version.")
    filters: list[str] = Field(
        default_factory=list,
        max_length=20,
        description=FILTERS_HELP,
        examples=[["department=finance", "date>=2025-01-01"]],
    )


class AskRequest(BaseModel):
    """``POST /v1/ask``. The scope and the limits turn on the evidence-gap controller (outcome
    supported / gap / conflict / not_established / abstained), as ``citewise ask --scope`` does."""

    question: str = Field(..., description=f"A question in words (at most {MAX_QUERY_CHARS} characters).")
    k: int = Field(5, ge=1, le=100, description="Chunks retrieved as evidence.")
    retriever: RetrieverName = Field("shipped", description=RETRIEVER_HELP)
    as_of: dt.date | None = Field(None, description="Only documents in force on this date.")
    version: str | None = Field(None, max_length=200, description="Only documents with this version.")
    filters: list[str] = Field(default_factory=list, max_length=20, description=FILTERS_HELP)
    scope: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="Answer only from these document ids or folder prefixes (never wider than "
        "what the caller may read).",
    )
    max_rounds: int | None = Field(None, ge=1, le=5, description="Retrieval rounds allowed, the first included.")
    deadline_ms: float | None = Field(
        None, gt=0, le=120_000, description="No follow-up retrieval round starts after this many milliseconds."
    )
    budget_tokens: int | None = Field(None, ge=100, le=32_000, description="Token budget of the assembled evidence.")
    agent: bool | None = Field(
        None,
        description="Answer with the ReAct agent over the tools (needs an LLM); "
        "null: the server's routing.agent setting.",
    )


class SearchResponse(SearchJSON):
    """``POST /v1/search``: the hits, the query words no hit holds, and who asked."""

    principal: str


class ErrorBody(BaseModel):
    message: str = Field(..., description="What went wrong, in one line.")
    type: str = Field(
        ...,
        description="invalid_request_error | authentication_error | forbidden | not_found | "
        "query_too_long | rate_limit_exceeded | timeout | conflict",
    )


class ErrorResponse(BaseModel):
    """Every error: ``{"error": {"message", "type"}}`` (422 adds ``detail``)."""

    error: ErrorBody
    detail: list[dict[str, Any]] | None = None


class StaleDocumentJSON(BaseModel):
    doc_id: str | None
    source: str
    reason: str
    pending_s: float


class StatusResponse(BaseModel):
    """``GET /v1/status`` (``citewise status --json``; for a caller who is not an admin the counts
    cover only documents they may read, and ``index`` and ``duplicates`` are left out). Durations
    in seconds."""

    documents: int
    chunks: int
    runs: int
    last_run_at: str
    staleness_s: float | None
    lag_s: dict[str, float] = Field(..., description="max and p95 of indexed time minus source change time.")
    pending_max_s: float
    stale: list[StaleDocumentJSON]
    unindexed_rows: int
    last_run_errors: int
    threshold_s: float | None
    status: Literal["ok", "alert"]
    alerts: list[str]
    duplicates: list[str]
    index: str | None


class TextSpan(BaseModel):
    start: int
    end: int
    text: str


class ChunkSpan(BaseModel):
    chunk_id: str
    start: int
    end: int


class DocumentResponse(BaseModel):
    """``GET /v1/documents/{doc_id}``: the cited span (``highlight``) with its ``context``
    (offsets into the source file); ``text`` only with ``full=true`` on a server that allows it."""

    doc_id: str
    title: str
    version: str
    updated: str
    source: str
    exact: bool
    length: int
    full: bool
    highlight: TextSpan | None = None
    context: TextSpan
    text: str | None = None
    chunks: list[ChunkSpan]


class IngestJobResponse(BaseModel):
    """``POST /v1/ingest`` and ``GET /v1/ingest/{job_id}``."""

    job_id: str
    path: str
    requested_by: str
    status: Literal["running", "done", "failed"]
    started_at: str
    finished_at: str | None = None
    report: dict[str, Any] | None = None
    error: str | None = None
    status_url: str | None = None


__all__ = [
    "AskRequest",
    "AnswerJSON",
    "DocumentResponse",
    "ErrorResponse",
    "IngestJobResponse",
    "SearchRequest",
    "SearchResponse",
    "StatusResponse",
    "TypedDict",
]
