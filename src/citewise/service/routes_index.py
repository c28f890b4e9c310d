"""Index routes: ``GET /v1/status`` and ``GET /v1/documents/{doc_id}``
(:func:`citewise.service.app.create_app` adds them)."""

from __future__ import annotations

from typing import Callable

from fastapi import Depends, FastAPI, Query

from citewise.service.errors import ApiError
from citewise.service.auth import Caller
from citewise.service.documents import DEFAULT_CONTEXT_CHARS, MAX_CONTEXT_CHARS


def add_index_routes(app: FastAPI, svc, caller: Callable) -> None:
    """Add the status and document routes to ``app`` (``svc``: the :class:`citewise.service.app.Service`;
    ``caller``: the dependency giving the request's :class:`citewise.service.auth.Caller`)."""

    @app.get("/v1/status", tags=["index"])
    async def status(c: Caller = Depends(caller)) -> dict:
        """Documents, chunks, index lag, staleness, stale documents (``citewise status --json``)."""
        return await svc.run(svc.status, c)

    @app.get("/v1/documents/{doc_id:path}", tags=["index"])
    async def document(
        doc_id: str,
        start: int | None = None,
        end: int | None = None,
        context: int = Query(
            DEFAULT_CONTEXT_CHARS,
            ge=0,
            le=MAX_CONTEXT_CHARS,
            description="Characters of context on each side of the span.",
        ),
        full: bool = Query(False, description="The whole text too (the server must allow it)."),
        c: Caller = Depends(caller),
    ) -> dict:
        """A document the caller may read: ``highlight`` = text[start:end] and ``context``, the
        window around it (the document's opening without a span); the whole ``text`` only with
        ``full=true`` on a server started with ``--full-documents`` (else 403). ``source``: the
        file's path relative to the folder it was ingested from. A negative offset, ``start`` after
        ``end``, or only one of them is a 400 naming the field."""
        svc.check_span(start, end)
        svc.check_full(full)
        view = await svc.run(svc.document, doc_id, c.principal)
        if view is None:
            raise ApiError(404, f"no document {doc_id!r} visible to you", "not_found")
        return view.as_dict(start, end, context, full)
