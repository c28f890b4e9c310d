"""OpenAI-compatible routes: ``POST /v1/vector_stores/{id}/search`` and
``POST /v1/chat/completions`` (:func:`citewise.service.app.create_app` adds them)."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from typing import TYPE_CHECKING, Any, Callable

from fastapi import Depends, FastAPI, Request
from pydantic import BaseModel, Field

from citewise.core import CitewiseError, Filters
from citewise.service.errors import ApiError
from citewise.service.auth import Caller
from citewise.service.streaming import openai_stream

if TYPE_CHECKING:  # type-only: app imports this module
    from citewise.service.app import Service


class VectorStoreSearchRequest(BaseModel):
    """OpenAI ``POST /v1/vector_stores/{id}/search``. ``filters``: a comparison filter
    ``{"type": "eq"|"in", "key": "doc_id"|"version"|"as_of", "value": ...}`` or ``{"type": "and",
    "filters": [...]}`` of those. ``rewrite_query`` and ``ranking_options`` are accepted and ignored."""

    query: str | list[str]
    filters: dict[str, Any] | None = None
    max_num_results: int = Field(10, ge=1, le=50)
    rewrite_query: bool = False
    ranking_options: dict[str, Any] | None = None


class ChatMessage(BaseModel):
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatCompletionRequest(BaseModel):
    """OpenAI ``POST /v1/chat/completions``: the last ``user`` message is the question."""

    model: str = "citewise"
    messages: list[ChatMessage]
    stream: bool = False


def openai_filters(spec: dict | None) -> Filters | None:
    """:class:`Filters` from an OpenAI vector-store ``filters`` object (see
    :class:`VectorStoreSearchRequest`).

    Raises:
        ApiError: 400 naming the unsupported type, key or value.
    """
    if not spec:
        return None
    out: dict[str, Any] = {}

    def add(f: dict, where: str) -> None:
        kind = f.get("type")
        if kind == "and":
            subs = f.get("filters")
            if not isinstance(subs, list) or not subs:
                raise ApiError(400, f"{where}: an 'and' filter needs a non-empty 'filters' list")
            for i, sub in enumerate(subs):
                if not isinstance(sub, dict):
                    raise ApiError(400, f"{where}.filters[{i}]: must be an object")
                add(sub, f"{where}.filters[{i}]")
            return
        key, value = f.get("key"), f.get("value")
        if kind == "eq" and key == "doc_id" and isinstance(value, str):
            ids = (value,)
        elif kind == "in" and key == "doc_id" and isinstance(value, list) and all(isinstance(v, str) for v in value):
            ids = tuple(value)
        elif kind == "eq" and key == "version" and isinstance(value, (str, int, float)):
            out["version"] = str(value)
            return
        elif kind == "eq" and key == "as_of" and isinstance(value, str):
            try:
                out["as_of"] = dt.date.fromisoformat(value)
            except ValueError:
                raise ApiError(400, f"{where}: as_of {value!r} is not a YYYY-MM-DD date") from None
            return
        else:
            from citewise.service.options import openai_condition

            try:
                out.setdefault("metadata", []).append(openai_condition(kind, key, value))
            except CitewiseError as e:
                raise ApiError(
                    400,
                    f"{where}: unsupported filter {json.dumps(f)[:200]} ({e}; supported: eq/in on "
                    "doc_id, eq on version and as_of, eq/in/gt/gte/lt/lte on metadata keys, and 'and' "
                    "of those)",
                ) from None
            return
        prev = out.get("doc_ids")
        out["doc_ids"] = tuple(sorted(set(ids) & set(prev))) if prev is not None else ids

    add(spec, "filters")
    if "metadata" in out:
        out["metadata"] = tuple(out["metadata"])
    return Filters(**out)


def _chat_question(messages: list[ChatMessage]) -> str:
    for m in reversed(messages):
        if m.role == "user":
            if isinstance(m.content, str):
                return m.content
            if isinstance(m.content, list):
                return "\n".join(p.get("text", "") for p in m.content if p.get("type") == "text")
    raise ApiError(400, "messages: no 'user' message to answer")


def citation_annotations(text: str, citations: list[dict], base_url: str) -> list[dict]:
    """OpenAI ``url_citation`` annotations for each ``[doc:ID]`` marker in ``text``: the marker's
    ``start_index``/``end_index`` and a URL of the source view with its own sentence's span
    (:func:`citewise.answer.citations.marker_links`)."""
    from citewise.answer.citations import marker_links

    return [
        {
            "type": "url_citation",
            "url_citation": {
                "start_index": m["marker_start"] - (text[m["marker_start"] - 1 : m["marker_start"]] == "["),
                "end_index": m["marker_end"] + (text[m["marker_end"] : m["marker_end"] + 1] == "]"),
                "title": m["title"],
                "url": f"{base_url}doc/{m['doc_id']}?start={m['start']}&end={m['end']}#cited",
            },
        }
        for m in marker_links(text, citations)
        if m["kind"] == "doc"
    ]


def _chunk_texts(svc: Service, ids: list[str]) -> dict[str, str]:
    with svc.pool.use() as cw:
        return {cid: c.text for cid, c in cw.index.store.get_chunks(ids).items()}


def add_openai_routes(app: FastAPI, svc, caller: Callable) -> None:
    """Add the OpenAI-compatible routes to ``app`` (``svc``: the :class:`citewise.service.app.Service`;
    ``caller``: the dependency giving the request's :class:`citewise.service.auth.Caller`)."""

    @app.post("/v1/vector_stores/{vector_store_id}/search", tags=["openai-compatible"])
    async def vector_store_search(
        vector_store_id: str, req: VectorStoreSearchRequest, c: Caller = Depends(caller)
    ) -> dict:
        """OpenAI vector store search over the index (``vector_store_id``: ``default``)."""
        if vector_store_id not in ("default", svc.index_dir.name):
            raise ApiError(404, f"no vector store {vector_store_id!r} (this server has 'default')", "not_found")
        query = " ".join(req.query) if isinstance(req.query, list) else req.query
        svc.check_query(query, "query")
        hits = (
            await svc.run(svc.search, query, req.max_num_results, "shipped", c.principal, openai_filters(req.filters))
        )["hits"]
        chunks_text = await svc.run(_chunk_texts, svc, [h["chunk_id"] for h in hits])
        return {
            "object": "vector_store.search_results.page",
            "search_query": req.query if isinstance(req.query, list) else [req.query],
            "data": [
                {
                    "file_id": h["doc_id"],
                    "filename": h["title"] or h["doc_id"],
                    "score": h["score"],
                    "attributes": {
                        "chunk_id": h["chunk_id"],
                        "doc_id": h["doc_id"],
                        "rank": h["rank"],
                        "snippet": h["snippet"],
                        "snippet_start": h["snippet_start"],
                        "snippet_end": h["snippet_end"],
                    },
                    "content": [{"type": "text", "text": chunks_text.get(h["chunk_id"], h["snippet"] or "")}],
                }
                for h in hits
            ],
            "has_more": False,
            "next_page": None,
        }

    @app.post("/v1/chat/completions", tags=["openai-compatible"])
    async def chat_completions(req: ChatCompletionRequest, request: Request, c: Caller = Depends(caller)):
        """OpenAI chat completions answered by ``ask``; citations as ``url_citation`` annotations
        and in ``citations``; ``stream: true`` sends the answer as it is written, then the checked
        answer with its citations, then ``[DONE]`` (:mod:`citewise.service.streaming`)."""
        question = svc.check_query(_chat_question(req.messages), "messages")
        if req.stream:  # the model's text as it arrives, the checked answer last (citewise.service.streaming)
            return openai_stream(
                lambda on_delta: svc.ask(question, 5, "shipped", c.principal, None, on_delta=on_delta), req.model
            )
        payload = await svc.run(svc.ask, question, 5, "shipped", c.principal, None)
        text = payload["answer"]
        cid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        annotations = citation_annotations(text, payload["citations"], str(request.base_url))
        usage = {"prompt_tokens": len(question.split()), "completion_tokens": len(text.split())}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return {
            "id": cid,
            "object": "chat.completion",
            "created": created,
            "model": req.model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "logprobs": None,
                    "message": {"role": "assistant", "content": text, "refusal": None, "annotations": annotations},
                }
            ],
            "usage": usage,
            "citations": payload["citations"],
            "outcome": payload["outcome"],
            "abstain_reason": payload["abstain_reason"],
        }
