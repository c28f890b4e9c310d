"""Operations routes: ``/healthz``, ``/readyz`` and ``/metrics``, and :func:`warm`
(:func:`citewise.service.app.create_app` adds the routes)."""

from __future__ import annotations

import contextlib
import time

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from typing import TYPE_CHECKING

from citewise.service.auth import ANONYMOUS

if TYPE_CHECKING:  # type-only: app imports this module
    from citewise.service.app import Service


def warm(svc: Service) -> dict:
    """Open the first query handle, load its embedding model (one query embedded) and warm its
    store (``Store.warm`` where the backend has it: the BM25 postings and, at scale, every IVF
    partition of LanceDB's ANN index, :meth:`citewise.store.lance.LanceStore.warm`), so the
    first requests do not pay for them: ``{"documents": int, "chunks": int, "seconds": float}``.
    ``citewise serve`` calls it after binding its port and before accepting requests.

    Raises:
        CitewiseError: the index cannot be opened (its message names the folder); a missing or
            corrupt model file is raised by the embedder with its own message.
    """
    t0 = time.perf_counter()
    with svc.pool.use() as cw:
        idx = cw.index
        stats = idx.store.stats()
        idx.embedder.embed(["citewise"])
        idx.store.warm()
    return {"documents": stats["documents"], "chunks": stats["chunks"], "seconds": time.perf_counter() - t0}


def _ready(svc: Service) -> dict:
    with svc.pool.use() as cw:
        return {"chunks": cw.index.store.stats()["chunks"]}


def add_ops_routes(app: FastAPI, svc, public_metrics: bool) -> None:
    """Add the health, readiness and metrics routes to ``app`` (``svc``: the
    :class:`citewise.service.app.Service`; ``public_metrics``: see :func:`~citewise.service.app.create_app`)."""

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"])
    async def readyz():
        """The index can be read (a query handle opens and counts its chunks). It needs no
        credential, so it reports no count (a total would include restricted documents)."""
        try:
            await svc.run(lambda: _ready(svc))
        except Exception as e:  # noqa: BLE001 - not ready, say why
            return JSONResponse({"status": "not ready", "reason": str(e) or type(e).__name__}, status_code=503)
        return {"status": "ready"}

    @app.get("/metrics", tags=["ops"], response_class=PlainTextResponse)
    async def metrics(request: Request):
        """Prometheus text exposition (index gauges computed on each scrape, for the caller: an
        admin sees the whole index, anyone else the documents they may read). With
        ``require_auth`` it needs a valid credential like every API route (401 without), unless
        the app was made with ``public_metrics`` (then an anonymous scrape counts public
        documents); a bad or revoked credential is always 401."""
        c = ANONYMOUS
        if not public_metrics or request.headers.get("authorization") or request.headers.get("x-api-key"):
            c = svc.auth.from_headers(request.headers.get("authorization"), request.headers.get("x-api-key"))
        index = None
        with contextlib.suppress(Exception):
            index = await svc.run(svc.status, c)
        from prometheus_client import CONTENT_TYPE_LATEST

        return PlainTextResponse(svc.metrics.render(index), media_type=CONTENT_TYPE_LATEST)
