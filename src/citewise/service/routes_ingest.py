"""Ingest job routes: ``POST /v1/ingest`` and ``GET /v1/ingest/{job_id}``, admin only
(:func:`citewise.service.app.create_app` adds them)."""

from __future__ import annotations

from typing import Callable

from fastapi import Depends, FastAPI
from pydantic import BaseModel, Field

from citewise.service.errors import ApiError
from citewise.service.auth import Caller


class IngestRequest(BaseModel):
    """``POST /v1/ingest``: a folder (or file) path on the server."""

    path: str = Field(..., description="Folder on the server to ingest (incremental).")
    policy: str | None = Field(None, description="Permission policy YAML file on the server.")
    follow_links: bool = False
    keep_duplicates: bool = False


def add_ingest_routes(app: FastAPI, svc, admin: Callable) -> None:
    """Add the ingest job routes to ``app`` (``svc``: the :class:`citewise.service.app.Service`;
    ``admin``: the dependency giving an admin :class:`citewise.service.auth.Caller`)."""

    @app.post("/v1/ingest", status_code=202, tags=["admin"])
    async def ingest(req: IngestRequest, c: Caller = Depends(admin)) -> dict:
        """Start ingesting a folder on the server (admin only); poll ``status_url``."""
        job = svc.start_ingest(req, c)
        return {**job.as_dict(), "status_url": f"/v1/ingest/{job.job_id}"}

    @app.get("/v1/ingest/{job_id}", tags=["admin"])
    async def ingest_status(job_id: str, c: Caller = Depends(admin)) -> dict:
        """An ingest job's status and, when done, its report."""
        job = svc.jobs.get(job_id)
        if job is None:
            raise ApiError(404, f"no ingest job {job_id!r}", "not_found")
        return job.as_dict()
