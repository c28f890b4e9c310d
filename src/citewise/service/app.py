"""The HTTP service: ``create_app(index_dir)`` builds the FastAPI application that
``citewise serve`` runs with uvicorn.

Routes (OpenAPI at ``/openapi.json``, interactive docs at ``/docs``):

* ``POST /v1/search`` — ranked chunks with snippets (the ``citewise search --json`` hits).
* ``POST /v1/ask`` — a cited answer or an abstention (the ``citewise ask --json`` object).
* ``POST /v1/vector_stores/{id}/search`` — the same retrieval in the shape of OpenAI's vector
  store search (``query``, ``filters``, ``max_num_results``; ``id`` is ``default``).
* ``POST /v1/chat/completions`` — OpenAI chat completions (``stream`` too): the last user message
  is the question; the answer keeps its ``[doc:ID]`` markers, each also given as a
  ``url_citation`` annotation, and the response carries the full ``citations``.
* ``POST /v1/ingest`` (admin) — ingest a folder on the server in the background;
  ``GET /v1/ingest/{job_id}`` — its status and report.
* ``GET /v1/status`` — documents, chunks, lag, staleness, stale documents.
* ``GET /v1/documents/{doc_id}?start=&end=&context=`` — the permission-checked cited span with
  ``context`` characters around it (default 300); the whole text with ``full=true`` only when the
  app allows it (``full_documents``); ``GET /doc/{doc_id}`` is the same as a web page.
* ``GET /healthz`` (process up), ``GET /readyz`` (index readable) need no credential;
  ``GET /metrics`` (Prometheus) needs one under ``require_auth`` unless ``public_metrics``.
* ``GET /`` — the web page: sign in with an API key, ask, search, index status.

Auth (:mod:`citewise.service.auth`): the principal comes only from the credential. Errors are
JSON ``{"error": {"message", "type"}}`` with 400 (bad input), 401 (no/bad credential), 403 (not
admin), 404, 413 (query too long, or a body over :data:`MAX_BODY_BYTES`), 429 (rate limit, with ``Retry-After``), 504 (timeout).

Concurrency: queries run on a small pool of :class:`citewise.api.Citewise` handles (one thread
per handle at a time; each handle's caches are not shared between threads); an ingest job runs
in a thread on a handle of its own and holds the index's ingest lock, so queries never wait for
it and see its documents after each commit (a handle reads the latest committed table version
on every query).

MCP: ``create_app`` mounts the MCP server's Streamable HTTP endpoint at ``/mcp``
(:func:`citewise.service.mcp.mount`) with ``index_factory`` = ``Service.pool.use`` (a context
manager lending a :class:`~citewise.api.Citewise` handle to one thread) and the same credentials as the API
(``Authenticator.from_headers`` on the request's ``Authorization`` / ``X-API-Key`` headers).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import queue
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from fastapi import Depends, FastAPI, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse
from pydantic import BaseModel, Field

from citewise.core import CitewiseError, Filters, Principal
from citewise.api import Citewise
from citewise.index import MAX_QUERY_CHARS, Index
from citewise.settings import Settings, load_settings
from citewise.service.auth import AuthError, Authenticator, Caller, JwtConfig, KeyStore
from citewise.service.documents import DEFAULT_CONTEXT_CHARS, MAX_CONTEXT_CHARS
from citewise.service.metrics import Metrics
from citewise.service.online_eval import online_evaluator, sample_of
from citewise.service.ratelimit import TokenBuckets
from citewise.service.payloads import answer_to_dict, search_json
from citewise.service.schemas import AskRequest, SearchRequest  # noqa: F401 - the request bodies, re-exported

#: Cookie holding the web page's API key (HttpOnly, SameSite=Strict).
KEY_COOKIE = "citewise_key"


class ApiError(Exception):
    """An error answered as ``{"error": {"message", "type"}}`` with ``status``."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.headers = status, message, kind, headers or {}


# -- request bodies ---------------------------------------------------------------------------
class IngestRequest(BaseModel):
    """``POST /v1/ingest``: a folder (or file) path on the server."""

    path: str = Field(..., description="Folder on the server to ingest (incremental).")
    policy: str | None = Field(None, description="Permission policy YAML file on the server.")
    follow_links: bool = False
    keep_duplicates: bool = False


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


# -- ingest jobs ------------------------------------------------------------------------------
@dataclass
class IngestJob:
    """A background ingest: ``status`` is ``running`` | ``done`` | ``failed``."""

    job_id: str
    path: str
    requested_by: str
    status: str = "running"
    started_at: str = ""
    finished_at: str | None = None
    report: dict | None = None
    error: str | None = None

    def as_dict(self) -> dict:
        return {"job_id": self.job_id, "path": self.path, "requested_by": self.requested_by, "status": self.status,
                "started_at": self.started_at, "finished_at": self.finished_at, "report": self.report,
                "error": self.error}


def _utc() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


class IndexPool:
    """``size`` :class:`~citewise.api.Citewise` handles (each its own :class:`Index`) on one
    folder, sharing one settings object; :meth:`use` lends one to a thread.

    Handles are opened on first need (``citewise serve`` opens the first one, model loaded, before
    it accepts requests: :func:`warm`; an app used without it pays that on its first request, and
    ``/readyz`` says when the first is open).
    """

    def __init__(self, index_dir: Path, size: int, settings: Settings):
        self.index_dir = index_dir
        self.settings = settings
        self.size = max(1, size)
        self._free: queue.LifoQueue = queue.LifoQueue()
        self._opened = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def use(self):
        try:
            idx = self._free.get_nowait()
        except queue.Empty:
            with self._lock:
                grow = self._opened < self.size
                if grow:
                    self._opened += 1
            if grow:
                try:
                    idx = Citewise(Index.open(self.index_dir, preload=True), self.settings)
                except BaseException:
                    with self._lock:
                        self._opened -= 1
                    raise
            else:
                idx = self._free.get()
        try:
            yield idx
        finally:
            self._free.put(idx)


class Service:
    """The state behind one app: index pool, authenticator, rate limit, metrics, ingest jobs."""

    def __init__(self, index_dir: Path, *, require_auth: bool, jwt: JwtConfig | None, db: str | None,
                 generator: str | None, request_timeout_s: float, rate: float, burst: int, pool_size: int,
                 ingest_roots: list[Path] | None, max_query_chars: int, full_documents: bool = False,
                 settings: Settings | None = None):
        self.index_dir = index_dir
        self.full_documents = full_documents
        self.settings = settings if settings is not None else load_settings(index_dir)
        self.pool = IndexPool(index_dir, pool_size, self.settings)
        self.auth = Authenticator(KeyStore(index_dir), jwt, require_auth)
        self.db = db
        self.generator = generator
        self.timeout = request_timeout_s
        self.buckets = TokenBuckets(rate, burst)
        self.metrics = Metrics()
        self.online = online_evaluator(self.metrics, self.settings.service.eval_rate, self.settings)
        self.ingest_roots = [r.resolve() for r in ingest_roots] if ingest_roots else None
        self.max_query_chars = min(max_query_chars, MAX_QUERY_CHARS)
        self.jobs: dict[str, IngestJob] = {}
        self._jobs_lock = threading.Lock()

    # -- helpers ------------------------------------------------------------------------------
    async def run(self, fn, *args):
        """Run blocking ``fn(*args)`` in a worker thread, bounded by the request timeout.

        Raises:
            ApiError: 504 when it takes longer (the thread finishes in the background).
        """
        try:
            with anyio.fail_after(self.timeout):
                return await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
        except TimeoutError:
            self.metrics.timeouts.inc()
            raise ApiError(504, f"the request took longer than {self.timeout:g} s", "timeout") from None

    def check_query(self, text: str, field_name: str) -> str:
        """``text`` if it can be searched for, else an ApiError naming ``field_name``: 400 when
        empty or without a letter or digit (``???``: BM25 has no term and dense search would
        rank noise, as ``citewise search`` refuses too), 413 when over the length cap."""
        if not text.strip():
            raise ApiError(400, f"'{field_name}' is empty")
        if not any(ch.isalnum() for ch in text):
            raise ApiError(400, f"'{field_name}' has no letters or digits; give the words to search for")
        if len(text) > self.max_query_chars:
            raise ApiError(413, f"'{field_name}' is {len(text):,} characters; the limit is {self.max_query_chars:,}",
                           "query_too_long")
        return text

    @staticmethod
    def check_span(start: int | None, end: int | None) -> None:
        """Refuse (400, naming the field) a span that cannot be one: a negative offset, ``start``
        after ``end``, or one of the two without the other. A span past the end of the text is
        not an error here (the document may have changed since it was cited): the view then shows
        the document's opening without a highlight."""
        for name, value in (("start", start), ("end", end)):
            if value is not None and value < 0:
                raise ApiError(400, f"{name}: must be a character offset >= 0, got {value}")
        if (start is None) != (end is None):
            given, missing = ("start", "end") if end is None else ("end", "start")
            raise ApiError(400, f"{missing}: required with {given} (a span is [start, end))")
        if start is not None and end is not None and start > end:
            raise ApiError(400, f"start: {start} is after end {end} (a span is [start, end) with start <= end)")

    def check_full(self, full: bool) -> None:
        """Refuse a whole-document request (403) unless the server allows them."""
        if full and not self.full_documents:
            raise ApiError(403, "this server sends the cited span with its context, not whole documents "
                           "(the server's operator can allow them: citewise serve --full-documents)", "forbidden")

    def limit(self, caller: Caller, client: str) -> None:
        key = caller.key if caller.method != "anonymous" else f"anon:{client}"
        wait = self.buckets.take(key)
        if wait:
            self.metrics.rate_limited.inc()
            raise ApiError(429, f"rate limit exceeded; retry in {wait:.1f} s", "rate_limit_exceeded",
                           {"Retry-After": str(max(1, int(wait + 0.999)))})

    # -- work (run in threads) ----------------------------------------------------------------
    def search(self, query: str, k: int, retriever: str, principal: Principal, filters: Filters | None) -> dict:
        with self.pool.use() as cw:
            t0 = time.perf_counter()
            hits = cw.search(query, principal, k=k, retriever=retriever, filters=filters)
            self.metrics.retrieval_seconds.observe(time.perf_counter() - t0)
            return search_json(cw.index.store, query, hits)

    def ask(self, question: str, k: int, retriever: str, principal: Principal, filters: Filters | None,
            options=None) -> dict:
        """``citewise ask --json`` for ``question``; ``options`` (an :class:`~citewise.api.AskOptions`)
        carries a request's scope and evidence-gap limits (generator and database stay the server's)."""
        import dataclasses

        from citewise.api import AskOptions

        opts = dataclasses.replace(options or AskOptions(k=k, retriever=retriever, filters=filters),
                                   generator=self.generator, database=self.db)
        with self.pool.use() as cw:
            t0 = time.perf_counter()
            ans = cw.ask(question, principal, opts)
            for tc in ans.tool_calls:
                self.metrics.tool_seconds.labels(tc["tool"]).observe(time.perf_counter() - t0)
            if "retrieve_s" in ans.timings:
                self.metrics.retrieval_seconds.observe(ans.timings["retrieve_s"])
            payload = answer_to_dict(ans)
            self.metrics.observe_answer(payload, time.perf_counter() - t0)
            if self.online.wants(ans.outcome):
                self.online.submit(sample_of(cw.index, question, ans))
            return payload

    def status(self, caller: Caller | None = None) -> dict:
        """``citewise status --json`` for an admin (or ``caller`` None: metrics); for anyone else
        the document and chunk counts, the stale list and the oldest pending change cover only
        documents the caller may read, and the duplicate lines and the index path are left out
        (they name documents and server paths)."""
        with self.pool.use() as cw:
            idx = cw.index
            st = idx.status()
            data = {**st.as_dict(), "duplicates": idx.duplicates(), "index": str(idx.path)}
            self.metrics.observe_status(data)
            if caller is not None and not caller.admin:
                mine = set(caller.principal.all_groups())
                visible = {d: e for d, e in idx.store.documents().items() if mine & set(e.groups)}
                data["stale"] = [s for s in data["stale"] if s["doc_id"] and s["doc_id"] in visible]
                data["duplicates"], data["index"] = [], None
                # counts and the oldest pending change of what the caller may read: the totals
                # told an anonymous caller how many restricted documents there are, and
                # pending_max_s moved when a hidden document's file changed (break-it trial)
                data["documents"] = len(visible)
                data["chunks"] = sum(e.chunk_count for e in visible.values())
                data["pending_max_s"] = max((s["pending_s"] for s in data["stale"]), default=0.0)
        return data

    def document(self, doc_id: str, principal: Principal):
        from citewise.service.documents import source_view

        with self.pool.use() as cw:
            return source_view(cw.index, doc_id, principal)

    def start_ingest(self, req: IngestRequest, caller: Caller) -> IngestJob:
        path = Path(req.path).expanduser()
        if not path.is_absolute():
            raise ApiError(400, f"path {req.path!r}: give an absolute path on the server")
        if self.ingest_roots is not None:
            # Confinement first, on the path as resolved (``..`` and existing symlinks followed;
            # a missing tail kept as written): a path outside the roots gets the same 403 whether
            # or not it exists, so the endpoint cannot be used to probe the server's files.
            real = path.resolve()
            if not any(real == r or r in real.parents for r in self.ingest_roots):
                raise ApiError(403, f"path {req.path!r} is outside the folders this server may ingest "
                               f"({', '.join(map(str, self.ingest_roots))})", "forbidden")
        if not path.exists():
            raise ApiError(400, f"path {req.path!r}: no such file or folder on the server")
        if req.policy is not None:
            from citewise.policy import Policy

            try:
                Policy.load(req.policy)
            except CitewiseError as e:
                raise ApiError(400, str(e)) from None
        with self._jobs_lock:
            if any(j.status == "running" for j in self.jobs.values()):
                raise ApiError(409, "an ingest job is already running on this server", "conflict")
            job = IngestJob(uuid.uuid4().hex[:12], str(path), caller.principal.name, started_at=_utc())
            self.jobs[job.job_id] = job
        threading.Thread(target=self._ingest, args=(job, req), name=f"ingest-{job.job_id}", daemon=True).start()
        return job

    def _ingest(self, job: IngestJob, req: IngestRequest) -> None:
        try:
            idx = Index.open(self.index_dir)  # a handle of its own: queries never wait for it
            report = idx.ingest(req.path, policy=req.policy, follow_links=req.follow_links, wait=False,
                                keep_duplicates=req.keep_duplicates)
            data = report.as_dict()
            for result in ("added", "updated", "unchanged", "deleted"):
                self.metrics.ingest_documents.labels(result).inc(int(data.get(result) or 0))
            self.metrics.ingest_documents.labels("error").inc(len(report.errors))
            job.report, job.status = data, "done"
        except Exception as e:  # noqa: BLE001 - reported in the job, never a crashed thread
            job.error, job.status = (str(e) if isinstance(e, CitewiseError) else f"{type(e).__name__}: {e}"), "failed"
        finally:
            job.finished_at = _utc()


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
                raise ApiError(400, f"{where}: unsupported filter {json.dumps(f)[:200]} ({e}; supported: eq/in on "
                               "doc_id, eq on version and as_of, eq/in/gt/gte/lt/lte on metadata keys, and 'and' "
                               "of those)") from None
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

    return [{"type": "url_citation", "url_citation": {
        "start_index": m["marker_start"] - (text[m["marker_start"] - 1:m["marker_start"]] == "["),
        "end_index": m["marker_end"] + (text[m["marker_end"]:m["marker_end"] + 1] == "]"), "title": m["title"],
        "url": f"{base_url}doc/{m['doc_id']}?start={m['start']}&end={m['end']}#cited"}}
        for m in marker_links(text, citations) if m["kind"] == "doc"]


#: Largest request body accepted (bytes). Every endpoint takes a short query, question or path;
#: without a limit a 50 MB JSON body to /v1/search was read and parsed whole (break-it trial).
MAX_BODY_BYTES = 1 << 20


class _BodyTooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: a request whose body is over ``limit`` bytes gets 413 with the JSON error
    shape, by its ``Content-Length`` before anything is read, or while a body without one
    (chunked) is read."""

    def __init__(self, app, limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or ()).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            return await self._refuse(send)
        seen = 0
        started = False

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _BodyTooLarge()
            return message

        async def tracked(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _BodyTooLarge:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send):
        body = json.dumps({"error": {"message": f"request body over {self.limit:,} bytes", "type": "request_too_large"}}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def create_app(index_dir: str | Path, *, require_auth: bool = False, jwt: JwtConfig | None = None,
               db: str | None = None, generator: str | None = None, request_timeout_s: float = 30.0,
               rate: float = 20.0, burst: int = 40, pool_size: int | None = None,
               ingest_roots: list[str | Path] | None = None, max_query_chars: int = MAX_QUERY_CHARS,
               host: str = "0.0.0.0", public_metrics: bool = False, full_documents: bool = False,
               settings: Settings | None = None) -> FastAPI:
    """The FastAPI app serving the index at ``index_dir`` (see module docstring).

    Args:
        require_auth: refuse requests without a credential (401) instead of treating them as the
            anonymous principal (public documents only).
        jwt: accept JWT bearer tokens checked this way (None: API keys only).
        db: records database for record questions (as ``citewise ask --db``).
        generator: ``extractive`` or ``llm`` (None: the settings' ``answer.generator``).
        request_timeout_s: longest a search/ask/status request may run (504 after), seconds.
        rate, burst: per-caller token bucket (requests per second, bucket size); anonymous
            callers are limited per client address. ``rate <= 0`` turns it off.
        pool_size: query handles on the index (default: CPU count, at most 4).
        ingest_roots: if given, ``POST /v1/ingest`` only accepts paths under these folders.
        max_query_chars: query/question length cap (at most :data:`MAX_QUERY_CHARS`).
        host: the address the app is served on; for ``127.0.0.1``/``localhost`` the MCP endpoint
            accepts only local ``Host`` headers (the MCP SDK's DNS-rebinding protection).
        public_metrics: serve ``/metrics`` without a credential even with ``require_auth`` (for
            a scraper that cannot send one; off by default: then ``/metrics`` needs one too).
        full_documents: let callers fetch a whole document (``/v1/documents/ID?full=true``, the web
            page's "whole document" link); off by default: the cited span with its context only.
        settings: the effective settings (default: :func:`~citewise.settings.load_settings` for
            ``index_dir``); every ask and search goes through :class:`citewise.api.Citewise`.

    Raises:
        CitewiseError: no index at ``index_dir``.
    """
    index_dir = Path(index_dir)
    if not Index.exists(index_dir):
        raise CitewiseError(f"{index_dir}: no index here yet; run 'citewise ingest PATH --index {index_dir}' first")
    svc = Service(index_dir, require_auth=require_auth, jwt=jwt, db=db, generator=generator,
                  request_timeout_s=request_timeout_s, rate=rate, burst=burst,
                  pool_size=pool_size or min(4, os.cpu_count() or 1),
                  ingest_roots=[Path(r) for r in ingest_roots] if ingest_roots else None,
                  max_query_chars=max_query_chars, full_documents=full_documents, settings=settings)
    app = FastAPI(title="citewise", version="0.1.0",
                  description="Evidence-grounded answers with citations over your documents. "
                  "Authenticate with 'Authorization: Bearer <API key or JWT>' (or 'X-API-Key: <API key>').")
    app.state.service = svc

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return JSONResponse({"error": {"message": exc.message, "type": exc.kind}}, status_code=exc.status,
                            headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in exc.errors())
        return JSONResponse({"error": {"message": problems or "invalid request", "type": "invalid_request_error"},
                             "detail": jsonable_encoder(exc.errors())}, status_code=422)

    @app.exception_handler(AuthError)
    async def _auth_error(request: Request, exc: AuthError):
        return JSONResponse({"error": {"message": str(exc), "type": "authentication_error"}}, status_code=401,
                            headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(CitewiseError)
    async def _citewise_error(request: Request, exc: CitewiseError):
        return JSONResponse({"error": {"message": str(exc), "type": "invalid_request_error"}}, status_code=400)

    app.add_middleware(BodyLimit)

    @app.middleware("http")
    async def _count(request: Request, call_next):
        t0 = time.perf_counter()
        status = 500
        try:
            response = await call_next(request)
            status = response.status_code
            return response
        finally:
            route = request.scope.get("route")
            name = getattr(route, "path", None) or "unmatched"
            svc.metrics.requests.labels(name, request.method, str(status)).inc()
            svc.metrics.request_seconds.labels(name).observe(time.perf_counter() - t0)

    def caller(request: Request) -> Caller:
        """The request's caller from its headers (never its body); rate-limited."""
        c = svc.auth.from_headers(request.headers.get("authorization"), request.headers.get("x-api-key"))
        svc.limit(c, request.client.host if request.client else "unknown")
        return c

    def admin(c: Caller = Depends(caller)) -> Caller:
        if not c.admin:
            raise ApiError(403, "ingest needs an admin key (citewise keys add NAME --admin) or token", "forbidden")
        return c

    # -- API ----------------------------------------------------------------------------------
    from citewise.service.routes_query import add_query_routes

    add_query_routes(app, svc, caller)

    @app.post("/v1/vector_stores/{vector_store_id}/search", tags=["openai-compatible"])
    async def vector_store_search(vector_store_id: str, req: VectorStoreSearchRequest, c: Caller = Depends(caller)) -> dict:
        """OpenAI vector store search over the index (``vector_store_id``: ``default``)."""
        if vector_store_id not in ("default", svc.index_dir.name):
            raise ApiError(404, f"no vector store {vector_store_id!r} (this server has 'default')", "not_found")
        query = " ".join(req.query) if isinstance(req.query, list) else req.query
        svc.check_query(query, "query")
        hits = (await svc.run(svc.search, query, req.max_num_results, "shipped", c.principal,
                              openai_filters(req.filters)))["hits"]
        chunks_text = await svc.run(_chunk_texts, svc, [h["chunk_id"] for h in hits])
        return {"object": "vector_store.search_results.page", "search_query": req.query if isinstance(req.query, list) else [req.query],
                "data": [{"file_id": h["doc_id"], "filename": h["title"] or h["doc_id"], "score": h["score"],
                          "attributes": {"chunk_id": h["chunk_id"], "doc_id": h["doc_id"], "rank": h["rank"],
                                         "snippet": h["snippet"], "snippet_start": h["snippet_start"],
                                         "snippet_end": h["snippet_end"]},
                          "content": [{"type": "text", "text": chunks_text.get(h["chunk_id"], h["snippet"] or "")}]}
                         for h in hits],
                "has_more": False, "next_page": None}

    @app.post("/v1/chat/completions", tags=["openai-compatible"])
    async def chat_completions(req: ChatCompletionRequest, request: Request, c: Caller = Depends(caller)):
        """OpenAI chat completions answered by ``ask``; citations as ``url_citation`` annotations
        and in ``citations``; ``stream: true`` sends the answer as one chunk then ``[DONE]``."""
        question = svc.check_query(_chat_question(req.messages), "messages")
        payload = await svc.run(svc.ask, question, 5, "shipped", c.principal, None)
        text = payload["answer"]
        cid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        annotations = citation_annotations(text, payload["citations"], str(request.base_url))
        usage = {"prompt_tokens": len(question.split()), "completion_tokens": len(text.split())}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if req.stream:
            def events():
                base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": req.model}
                yield "data: " + json.dumps({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                                                                    "finish_reason": None}]}) + "\n\n"
                yield "data: " + json.dumps({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                                             "citations": payload["citations"], "outcome": payload["outcome"]}) + "\n\n"
                yield "data: [DONE]\n\n"
            return StreamingResponse(events(), media_type="text/event-stream")
        return {"id": cid, "object": "chat.completion", "created": created, "model": req.model,
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant", "content": text, "refusal": None,
                                         "annotations": annotations}}],
                "usage": usage, "citations": payload["citations"], "outcome": payload["outcome"],
                "abstain_reason": payload["abstain_reason"]}

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

    @app.get("/v1/status", tags=["index"])
    async def status(c: Caller = Depends(caller)) -> dict:
        """Documents, chunks, index lag, staleness, stale documents (``citewise status --json``)."""
        return await svc.run(svc.status, c)

    @app.get("/v1/documents/{doc_id:path}", tags=["index"])
    async def document(doc_id: str, start: int | None = None, end: int | None = None,
                       context: int = Query(DEFAULT_CONTEXT_CHARS, ge=0, le=MAX_CONTEXT_CHARS,
                                            description="Characters of context on each side of the span."),
                       full: bool = Query(False, description="The whole text too (the server must allow it)."),
                       c: Caller = Depends(caller)) -> dict:
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

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> dict:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"])
    async def readyz():
        """The index can be read (a query handle opens and counts its chunks)."""
        try:
            data = await svc.run(lambda: _ready(svc))
        except Exception as e:  # noqa: BLE001 - not ready, say why
            return JSONResponse({"status": "not ready", "reason": str(e) or type(e).__name__}, status_code=503)
        return {"status": "ready", **data}

    @app.get("/metrics", tags=["ops"], response_class=PlainTextResponse)
    async def metrics(request: Request):
        """Prometheus text exposition (index gauges refreshed on each scrape). With
        ``require_auth`` it needs a valid credential like every API route (401 without), unless
        the app was made with ``public_metrics``; a bad or revoked credential is always 401."""
        if not public_metrics or request.headers.get("authorization") or request.headers.get("x-api-key"):
            svc.auth.from_headers(request.headers.get("authorization"), request.headers.get("x-api-key"))
        with contextlib.suppress(Exception):
            await svc.run(svc.status)
        from prometheus_client import CONTENT_TYPE_LATEST

        return PlainTextResponse(svc.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    from citewise.service.web import add_web_routes

    add_web_routes(app, svc)
    from citewise.service.openapi import install_api_docs
    from citewise.service.tracing import add_server_spans

    install_api_docs(app, require_auth)  # /docs offline; bearer scheme, typed bodies, errors in /openapi.json

    add_server_spans(app)  # a SERVER span per request when traces are exported

    # The MCP server's Streamable HTTP endpoint at /mcp, behind the same credentials (a Caller
    # carries the principal; a bad key raises AuthError, a CitewiseError: 401).
    from citewise.service import mcp as _mcp

    _mcp.mount(app, svc.pool.use,
               lambda r: svc.auth.from_headers(r.headers.get("authorization"), r.headers.get("x-api-key")),
               db=db, host=host)
    return app


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
        if hasattr(idx.store, "warm"):
            idx.store.warm()
    return {"documents": stats["documents"], "chunks": stats["chunks"], "seconds": time.perf_counter() - t0}


def _ready(svc: Service) -> dict:
    with svc.pool.use() as cw:
        return {"chunks": cw.index.store.stats()["chunks"]}


def _chunk_texts(svc: Service, ids: list[str]) -> dict[str, str]:
    with svc.pool.use() as cw:
        return {cid: c.text for cid, c in cw.index.store.get_chunks(ids).items()}
