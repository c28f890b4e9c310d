"""``POST /v1/search``, ``POST /v1/ask`` and ``POST /v1/ask/stream``: every retriever, filters, scope and evidence-gap
options of the CLI, through the one ask pipeline (:class:`citewise.api.Citewise`)."""

from __future__ import annotations

from typing import Callable

from fastapi import Depends, FastAPI

from citewise.service.options import ask_options, request_filters
from citewise.service.payloads import AnswerJSON
from citewise.service.schemas import AskRequest, SearchRequest, SearchResponse
from citewise.service.streaming import ask_stream


def add_query_routes(app: FastAPI, svc, caller: Callable) -> None:
    """Add the search and ask routes to ``app`` (``svc``: the :class:`citewise.service.app.Service`;
    ``caller``: the dependency giving the request's :class:`citewise.service.auth.Caller`)."""

    @app.post("/v1/search", tags=["retrieval"])
    async def search(req: SearchRequest, c=Depends(caller)) -> SearchResponse:
        """Ranked chunks visible to the caller, each with its text, best passage and offsets, and
        its document's version, dates and metadata (``citewise search --json``)."""
        svc.check_query(req.query, "query")
        filters = request_filters(req.as_of, req.version, req.filters)
        found = await svc.run(svc.search, req.query, req.k, req.retriever, c.principal, filters)
        return {**found, "principal": c.principal.name}

    @app.post("/v1/ask", tags=["answers"])
    async def ask(req: AskRequest, c=Depends(caller)) -> AnswerJSON:
        """A cited answer or an abstention: the JSON of ``citewise ask --json`` (each marker with
        its own sentence's span in ``markers``; ``reason`` says why it abstained)."""
        options = _options(svc, req)
        return await svc.run(svc.ask, req.question, req.k, req.retriever, c.principal, options.filters, options)

    @app.post("/v1/ask/stream", tags=["answers"])
    async def ask_streamed(req: AskRequest, c=Depends(caller)):
        """``/v1/ask`` as server-sent events: ``delta`` pieces of an LLM answer as they arrive,
        then ``answer`` (the ``/v1/ask`` JSON, after the citation check) or ``error``."""
        options = _options(svc, req)
        return ask_stream(
            lambda on_delta: svc.ask(
                req.question, req.k, req.retriever, c.principal, options.filters, options, on_delta=on_delta
            )
        )


def _options(svc, req: AskRequest):
    """The :class:`citewise.api.AskOptions` of an ask request (its question checked first)."""
    svc.check_query(req.question, "question")
    return ask_options(
        k=req.k,
        retriever=req.retriever,
        filters=request_filters(req.as_of, req.version, req.filters, "filters"),
        scope=req.scope,
        max_rounds=req.max_rounds,
        deadline_ms=req.deadline_ms,
        budget_tokens=req.budget_tokens,
        agent=req.agent,
    )
