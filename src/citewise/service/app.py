"""The HTTP service: ``create_app(index_dir)`` builds the FastAPI application that
``citewise serve`` runs with uvicorn.

Routes (OpenAPI at ``/openapi.json``, interactive docs at ``/docs``):

* ``POST /v1/search`` — ranked chunks with snippets (the ``citewise search --json`` hits).
* ``POST /v1/ask`` — a cited answer or an abstention (the ``citewise ask --json`` object);
  ``POST /v1/ask/stream`` — the same as server-sent events (:mod:`citewise.service.streaming`).
* ``POST /v1/vector_stores/{id}/search`` — the same retrieval in the shape of OpenAI's vector
  store search (``query``, ``filters``, ``max_num_results``; ``id`` is ``default``).
* ``POST /v1/chat/completions`` — OpenAI chat completions (``stream``: the LLM's text as it
  arrives, then the checked answer; :mod:`citewise.service.streaming`): the last user message
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

import json
import os
import threading
import time
import uuid
from pathlib import Path

import anyio
from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from citewise.core import CitewiseError, Filters, Principal
from citewise.index import MAX_QUERY_CHARS, Index
from citewise.settings import Settings, load_settings
from citewise.service.pool import IndexPool, IngestJob, _utc  # noqa: F401 - re-exported
from citewise.service.errors import KEY_COOKIE, ApiError  # noqa: F401 - re-exported
from citewise.service.auth import AuthError, Authenticator, Caller, JwtConfig, KeyStore
from citewise.service.metrics import Metrics
from citewise.service.online_eval import online_evaluator, sample_of
from citewise.service.ratelimit import TokenBuckets
from citewise.service.payloads import answer_to_dict, search_json
from citewise.service.schemas import AskRequest, SearchRequest  # noqa: F401 - the request bodies, re-exported
from citewise.service.routes_index import add_index_routes
from citewise.service.routes_ingest import IngestRequest, add_ingest_routes
from citewise.service.routes_openai import (
    ChatCompletionRequest,  # noqa: F401
    ChatMessage,  # noqa: F401
    VectorStoreSearchRequest,  # noqa: F401
    add_openai_routes,
    citation_annotations,  # noqa: F401
    openai_filters,  # noqa: F401
)
from citewise.service.routes_ops import add_ops_routes, warm  # noqa: F401 - re-exported


class Service:
    """The state behind one app: index pool, authenticator, rate limit, metrics, ingest jobs."""

    def __init__(
        self,
        index_dir: Path,
        *,
        require_auth: bool,
        jwt: JwtConfig | None,
        db: str | None,
        generator: str | None,
        request_timeout_s: float,
        rate: float,
        burst: int,
        pool_size: int,
        ingest_roots: list[Path] | None,
        max_query_chars: int,
        full_documents: bool = False,
        settings: Settings | None = None,
    ):
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
            raise ApiError(
                413,
                f"'{field_name}' is {len(text):,} characters; the limit is {self.max_query_chars:,}",
                "query_too_long",
            )
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
            raise ApiError(
                403,
                "this server sends the cited span with its context, not whole documents "
                "(the server's operator can allow them: citewise serve --full-documents)",
                "forbidden",
            )

    def limit(self, caller: Caller, client: str) -> None:
        key = caller.key if caller.method != "anonymous" else f"anon:{client}"
        wait = self.buckets.take(key)
        if wait:
            self.metrics.rate_limited.inc()
            raise ApiError(
                429,
                f"rate limit exceeded; retry in {wait:.1f} s",
                "rate_limit_exceeded",
                {"Retry-After": str(max(1, int(wait + 0.999)))},
            )

    # -- work (run in threads) ----------------------------------------------------------------
    def search(self, query: str, k: int, retriever: str, principal: Principal, filters: Filters | None) -> dict:
        with self.pool.use() as cw:
            t0 = time.perf_counter()
            hits = cw.search(query, principal, k=k, retriever=retriever, filters=filters)
            self.metrics.retrieval_seconds.observe(time.perf_counter() - t0)
            return search_json(cw.index.store, query, hits)

    def ask(
        self,
        question: str,
        k: int,
        retriever: str,
        principal: Principal,
        filters: Filters | None,
        options=None,
        on_delta=None,
    ) -> dict:
        """``citewise ask --json`` for ``question``; ``options`` (an :class:`~citewise.api.AskOptions`)
        carries a request's scope and evidence-gap limits (generator and database stay the server's);
        ``on_delta`` gets each piece of a streamed LLM answer."""
        import dataclasses

        from citewise.api import AskOptions

        opts = dataclasses.replace(
            options or AskOptions(k=k, retriever=retriever, filters=filters), generator=self.generator, database=self.db
        )
        with self.pool.use() as cw:
            t0 = time.perf_counter()
            ans = cw.ask(question, principal, opts, on_delta=on_delta)
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
        """``citewise status --json`` for an admin (or ``caller`` None: a trusted in-process
        caller); for anyone else the view of :func:`citewise.service.scoped.caller_view`: counts,
        lag and stale list over the documents the caller may read only."""
        from citewise.service.scoped import caller_view

        with self.pool.use() as cw:
            idx = cw.index
            st = idx.status()
            data = {**st.as_dict(), "duplicates": idx.duplicates(), "index": str(idx.path)}
            if caller is not None and not caller.admin:
                data = caller_view(data, idx.store.documents(), idx.store.runs(), set(caller.principal.all_groups()))
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
                raise ApiError(
                    403,
                    f"path {req.path!r} is outside the folders this server may ingest "
                    f"({', '.join(map(str, self.ingest_roots))})",
                    "forbidden",
                )
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
            report = idx.ingest(
                req.path,
                policy=req.policy,
                follow_links=req.follow_links,
                wait=False,
                keep_duplicates=req.keep_duplicates,
            )
            data = report.as_dict()
            for result in ("added", "updated", "unchanged", "deleted"):
                self.metrics.ingest_documents.labels(result).inc(int(data.get(result) or 0))
            self.metrics.ingest_documents.labels("error").inc(len(report.errors))
            job.report, job.status = data, "done"
        except Exception as e:  # noqa: BLE001 - reported in the job, never a crashed thread
            job.error, job.status = (str(e) if isinstance(e, CitewiseError) else f"{type(e).__name__}: {e}"), "failed"
        finally:
            job.finished_at = _utc()


#: Largest request body accepted (bytes). Every endpoint takes a short query, question or path;
#: without a limit a 50 MB JSON body to /v1/search was read and parsed whole (break-it trial).
MAX_BODY_BYTES = 1 << 20


class _BodyTooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: a request whose body is over ``limit`` bytes gets 413 with the JSON error
    shape, by its ``Content-Length`` before anything is read, or while a body without one
    (chunked) is read.

    A chunked body is counted as the app receives it; past the limit the next receive raises,
    which stops the read. FastAPI turns an error while reading a body into its own 400 ("error
    parsing the body"), so once the limit was passed whatever response the app starts is
    replaced by the 413 (a chunked 2 MiB body got 400, break-it trial)."""

    def __init__(self, app, limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or ()).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            return await self._refuse(send)
        seen = 0
        over = False
        started = False

        async def counted():
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    over = True
                    raise _BodyTooLarge()
            return message

        async def tracked(message):
            nonlocal started
            if over:  # the app's answer to a body it could not finish reading: ours instead
                if not started:
                    started = True
                    await self._refuse(send)
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _BodyTooLarge:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send):
        body = json.dumps(
            {"error": {"message": f"request body over {self.limit:,} bytes", "type": "request_too_large"}}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


def create_app(
    index_dir: str | Path,
    *,
    require_auth: bool = False,
    jwt: JwtConfig | None = None,
    db: str | None = None,
    generator: str | None = None,
    request_timeout_s: float = 30.0,
    rate: float = 20.0,
    burst: int = 40,
    pool_size: int | None = None,
    ingest_roots: list[str | Path] | None = None,
    max_query_chars: int = MAX_QUERY_CHARS,
    host: str = "0.0.0.0",
    public_metrics: bool = False,
    full_documents: bool = False,
    settings: Settings | None = None,
) -> FastAPI:
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
    svc = Service(
        index_dir,
        require_auth=require_auth,
        jwt=jwt,
        db=db,
        generator=generator,
        request_timeout_s=request_timeout_s,
        rate=rate,
        burst=burst,
        pool_size=pool_size or min(4, os.cpu_count() or 1),
        ingest_roots=[Path(r) for r in ingest_roots] if ingest_roots else None,
        max_query_chars=max_query_chars,
        full_documents=full_documents,
        settings=settings,
    )
    app = FastAPI(
        title="citewise",
        version="0.1.0",
        description="Evidence-grounded answers with citations over your documents. "
        "Authenticate with 'Authorization: Bearer <API key or JWT>' (or 'X-API-Key: <API key>').",
    )
    app.state.service = svc

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return JSONResponse(
            {"error": {"message": exc.message, "type": exc.kind}}, status_code=exc.status, headers=exc.headers
        )

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', 'invalid')}" for e in exc.errors()
        )
        return JSONResponse(
            {
                "error": {"message": problems or "invalid request", "type": "invalid_request_error"},
                "detail": jsonable_encoder(exc.errors()),
            },
            status_code=422,
        )

    @app.exception_handler(AuthError)
    async def _auth_error(request: Request, exc: AuthError):
        return JSONResponse(
            {"error": {"message": str(exc), "type": "authentication_error"}},
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )

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

    add_openai_routes(app, svc, caller)

    add_ingest_routes(app, svc, admin)

    add_index_routes(app, svc, caller)

    add_ops_routes(app, svc, public_metrics)

    from citewise.service.web import add_web_routes

    add_web_routes(app, svc)
    from citewise.service.openapi import install_api_docs
    from citewise.service.tracing import add_server_spans

    install_api_docs(app, require_auth)  # /docs offline; bearer scheme, typed bodies, errors in /openapi.json

    add_server_spans(app)  # a SERVER span per request when traces are exported

    # The MCP server's Streamable HTTP endpoint at /mcp, behind the same credentials (a Caller
    # carries the principal; a bad key raises AuthError, a CitewiseError: 401).
    from citewise.service import mcp as _mcp

    _mcp.mount(
        app,
        svc.pool.use,
        lambda r: svc.auth.from_headers(r.headers.get("authorization"), r.headers.get("x-api-key")),
        db=db,
        host=host,
    )
    return app
