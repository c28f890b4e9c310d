"""citewise as an MCP server (the official ``mcp`` SDK, 2.x): tools ``search``, ``ask`` and
``query_records``; resources ``citewise://documents/{doc_id}`` and ``citewise://chunks/{chunk_id}``.

Every tool is read-only (``ToolAnnotations(readOnlyHint=True, destructiveHint=False,
idempotentHint=True, openWorldHint=False)``), takes JSON-Schema'd parameters and returns
structured content with an output schema: the JSON of ``citewise search --json`` (``{"hits":
[...]}``) for ``search``, and of ``citewise ask --json`` for ``ask`` and ``query_records``.

* ``search``: ranked chunks with their best passage and its character offsets in the source.
* ``ask``: a cited answer or an abstention, routed like ``citewise ask`` (record questions go to
  the guarded record tools first).
* ``search`` and ``ask`` take the CLI's options: every retriever, ``as_of``, ``version``,
  metadata ``filters`` (``department=finance``, ``date>=2025-01-01``), and for ``ask`` the
  evidence-gap controller's ``scope``, ``max_rounds``, ``deadline_ms`` and ``budget_tokens``.
* resources: a cited document (its text, or on a server that sends spans only, its opening, with
  its chunks' offsets) and a chunk (text, heading path, document fields, metadata), each read
  only when the caller's groups may read it (a missing and a forbidden one look the same).
* ``query_records``: a record question (status of invoice 2041, a customer's outgoing total on a
  date, ...) answered by the guarded record tools only (:mod:`citewise.tools.pipeline`: one
  allow-listed, parameterised SELECT on a read-only connection); a question the router does not
  send to records is an abstention saying so, never a document answer.

The principal (whose groups decide which documents and record tools are visible) never comes
from tool arguments:

* stdio (:func:`serve_stdio`, ``citewise mcp``): the principal given when the server starts
  (``--groups``; local, trusted use: whoever starts the process chooses it).
* Streamable HTTP (:func:`mount`): ``authenticate(request)`` supplied by the host application
  (the HTTP service's own auth) runs on every request to the endpoint; raising Starlette's
  ``HTTPException`` answers with that status (401/403), anything else it returns is the principal
  (None: anonymous, public documents only).
"""

from __future__ import annotations

import contextlib
import inspect
import threading
from typing import Annotated, Any, Callable

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from citewise.core import CitewiseError, Filters, Principal
from citewise.service.options import FILTERS_HELP, RETRIEVER_HELP, RetrieverName as _Retriever, request_filters
from citewise.service.payloads import AnswerJSON, SearchJSON, answer_json, search_json  # noqa: F401 (re-exported)

#: Tool annotations shared by every citewise tool: nothing is written, calls can be repeated.
READ_ONLY = {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True, "open_world_hint": False}

#: Key under ``request.state`` (the ASGI scope's ``state``) where :func:`mount` keeps the principal.
PRINCIPAL_STATE_KEY = "citewise_principal"

Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=2000,
        description="What to look for, in words or identifiers (at most 2,000 characters).",
    ),
]
Question = Annotated[
    str, Field(min_length=1, max_length=2000, description="A question in words (at most 2,000 characters).")
]
RetrieverName = Annotated[_Retriever, Field(description=RETRIEVER_HELP)]
MetaFilters = Annotated[list[str] | None, Field(max_length=20, description=FILTERS_HELP)]
Scope = Annotated[
    list[str] | None,
    Field(
        max_length=50,
        description=(
            "Answer only from these document ids or folder prefixes (never wider than what the caller may read); "
            "turns on the evidence-gap controller."
        ),
    ),
]
MaxRounds = Annotated[int | None, Field(ge=1, le=5, description="Retrieval rounds allowed, the first included.")]
DeadlineMs = Annotated[float | None, Field(gt=0, le=120_000, description="No follow-up round after this many ms.")]
BudgetTokens = Annotated[int | None, Field(ge=100, le=32_000, description="Token budget of the assembled evidence.")]
AsOf = Annotated[
    str | None, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="Only documents in force on this date (YYYY-MM-DD).")
]
Version = Annotated[str | None, Field(max_length=200, description="Only documents with exactly this version.")]


def _words(text: str, field_name: str) -> None:
    """Refuse a query or question without a letter or digit (``!!!``), as the CLI and the HTTP API
    do (BM25 has no term and dense search would rank noise); the MCP tool returned hits for it."""
    if not any(ch.isalnum() for ch in text):
        raise ToolError(f"'{field_name}' has no letters or digits; give the words to search for")


def _filters(as_of: str | None, version: str | None, filters: list[str] | None = None) -> Filters | None:
    return request_filters(as_of, version, filters)


def create_server(
    index_factory: Callable[[], Any],
    principal: Principal | None = None,
    *,
    db: str | None = None,
    name: str = "citewise",
    serialize: bool = False,
    full_documents: bool = True,
):
    """An ``MCPServer`` with the citewise tools.

    Args:
        index_factory: called once per tool call; returns the :class:`citewise.api.Citewise`
            to use, or a context manager that lends one for the call (a pool's ``use``).
        principal: the principal of calls that carry no HTTP request (stdio). Calls over HTTP use
            the principal :func:`mount` stored on the request; a request without one is anonymous.
        db: records database for ``query_records`` / record questions (``sqlite:///PATH`` or a
            path; default: the settings' ``records.database``).
        serialize: run one tool call at a time (the SDK runs each call in a worker thread; stdio
            serves one client from one Index).
        full_documents: the document resource holds the whole text (else its opening window,
            as the HTTP service sends without ``--full-documents``).

    Tool errors (a bad date, an unknown retriever, a question over 2,000 characters) come back as
    tool results with ``isError`` and one line of text, never as a protocol failure.
    """
    from citewise.version import version

    stdio_principal = principal or Principal()
    server = MCPServer(
        name,
        version=version(),
        log_level="WARNING",
        instructions=(
            "Evidence-grounded answers over this organisation's documents and records. `ask` answers "
            "with a citation on every sentence or abstains ('I have no document on this.'); `search` "
            "returns ranked passages with offsets; `query_records` answers record questions (invoice "
            "status, totals) from the system of record. Results are limited to what the caller may read."
        ),
    )

    def who(ctx: Context) -> Principal:
        request = getattr(ctx.request_context, "request", None)
        if request is None:
            return stdio_principal
        found = (request.scope.get("state") or {}).get(PRINCIPAL_STATE_KEY)
        return found if isinstance(found, Principal) else Principal()  # unauthenticated: public only

    lock = threading.Lock() if serialize else contextlib.nullcontext()

    def run(fn):
        try:
            with lock:
                lent = index_factory()
                if hasattr(lent, "__enter__"):  # a pool lending a handle for the call
                    with lent as cw:
                        return fn(cw)
                return fn(lent)
        except CitewiseError as e:
            raise ToolError(str(e)) from None

    @server.tool(annotations=ToolAnnotations(title="Search documents", **READ_ONLY))
    def search(
        query: Query,
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=100, description="How many results.")] = 10,
        retriever: RetrieverName = "shipped",
        as_of: AsOf = None,
        version: Version = None,
        filters: MetaFilters = None,
    ) -> SearchJSON:
        """Rank document chunks for a query (permission and metadata filters applied inside the
        search). Each hit has its chunk text, best-matching passage (`snippet`) with its character
        offsets in the source file, and its document's version, dates and metadata."""
        _words(query, "query")

        def go(cw):
            hits = cw.search(query, who(ctx), k=k, retriever=retriever, filters=_filters(as_of, version, filters))
            return search_json(cw.index.store, query, hits)

        return run(go)

    @server.tool(annotations=ToolAnnotations(title="Ask with citations", **READ_ONLY))
    def ask(
        question: Question,
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=100, description="Chunks retrieved as evidence.")] = 5,
        retriever: RetrieverName = "shipped",
        as_of: AsOf = None,
        version: Version = None,
        filters: MetaFilters = None,
        scope: Scope = None,
        max_rounds: MaxRounds = None,
        deadline_ms: DeadlineMs = None,
        budget_tokens: BudgetTokens = None,
        agent: Annotated[
            bool | None,
            Field(
                description="Answer with the ReAct agent over the tools (needs an LLM on "
                "the server); null: the server's setting."
            ),
        ] = None,
    ) -> AnswerJSON:
        """Answer a question from the documents with a citation ([doc:ID]) on every sentence, or
        abstain with outcome "abstained" and a `reason`. Record questions (invoice status, totals,
        limits) are answered from the records tools, cited as [tool:NAME]; one that no configured
        query answers has outcome "no_tool"; a live value (a price today) abstains unless a web
        search is configured. With `scope` or a limit the evidence-gap controller answers
        (supported / gap / conflict / not_established)."""
        _words(question, "question")

        def go(cw):
            from citewise.service.options import ask_options

            opts = ask_options(
                k=k,
                retriever=retriever,
                filters=_filters(as_of, version, filters),
                scope=scope,
                max_rounds=max_rounds,
                deadline_ms=deadline_ms,
                budget_tokens=budget_tokens,
                database=db,
                agent=agent,
            )
            return answer_json(cw.ask(question, who(ctx), opts))

        return run(go)

    @server.tool(annotations=ToolAnnotations(title="Query records", **READ_ONLY))
    def query_records(question: Question, ctx: Context) -> AnswerJSON:
        """Answer a record question (an invoice's status, a customer's outgoing total on a date,
        whether a limit was exceeded) with the guarded record tools: one allow-listed,
        parameterised read-only SELECT. `tool_calls` lists the tool, its arguments and rows. A
        question that is not about records abstains (use `ask`)."""

        def go(cw):
            from citewise.api import AskOptions

            return answer_json(cw.ask_records(question, who(ctx), AskOptions(database=db)))

        return run(go)

    from citewise.service.mcp_resources import add_resources

    add_resources(server, who, run, full_documents)
    return server


def serve_stdio(index_dir, principal: Principal | None = None, *, db: str | None = None) -> None:
    """Run the MCP server over stdio (blocks until the client closes stdin).

    Args:
        index_dir: the index folder (it must exist).
        principal: who every call runs as (local, trusted use; default anonymous: public
            documents only).
        db: records database (see :func:`create_server`).

    Raises:
        CitewiseError: no index at ``index_dir``.
    """
    from citewise.api import Citewise
    from citewise.index import Index

    if not Index.exists(index_dir):
        raise CitewiseError(f"{index_dir}: no index here yet; run 'citewise ingest PATH --index {index_dir}' first")
    cw = Citewise.open(index_dir, preload=True)
    server = create_server(lambda: cw, principal, db=db, serialize=True)
    server.run("stdio")


def as_principal(value) -> Principal:
    """What ``authenticate`` returned, as a :class:`Principal`: None is anonymous; an object with a
    ``principal`` attribute holding one gives that; any object with ``groups`` (and ``name``) is
    taken as a principal.

    Raises:
        TypeError: anything else (a bug in the host's authenticate, answered as a server error).
    """
    if value is None:
        return Principal()
    if isinstance(value, Principal):
        return value
    if isinstance(getattr(value, "principal", None), Principal):  # a caller record holding one
        return value.principal
    groups = getattr(value, "groups", None)
    if groups is not None and not isinstance(groups, str):
        return Principal(str(getattr(value, "name", "principal")), tuple(str(g) for g in groups))
    raise TypeError(f"authenticate(request) returned {type(value).__name__}, not a Principal or None")


class _Authenticate:
    """ASGI wrapper: ``authenticate(request)`` on every HTTP request, the principal stored on
    the request's state (``PRINCIPAL_STATE_KEY``) for the tools. An ``HTTPException`` it raises
    becomes that response (JSON ``{"detail": ...}``); a ``CitewiseError`` becomes 401 (or its
    ``status_code``) with the error's message."""

    def __init__(self, app, authenticate: Callable):
        self.app = app
        self.authenticate = authenticate

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from starlette.exceptions import HTTPException
        from starlette.requests import Request
        from starlette.responses import JSONResponse

        request = Request(scope, receive)
        try:
            principal = self.authenticate(request)
            if inspect.isawaitable(principal):
                principal = await principal
        except HTTPException as e:
            await JSONResponse({"detail": e.detail}, status_code=e.status_code, headers=e.headers)(scope, receive, send)
            return
        except CitewiseError as e:  # the host's auth refused the credential (bad, revoked, missing)
            status = getattr(e, "status_code", 401)
            await JSONResponse(
                {"detail": str(e)},
                status_code=status if isinstance(status, int) else 401,
                headers={"WWW-Authenticate": "Bearer"},
            )(scope, receive, send)
            return
        scope.setdefault("state", {})[PRINCIPAL_STATE_KEY] = as_principal(principal)
        await self.app(scope, receive, send)


def mount(
    app,
    index_factory: Callable[[], Any],
    authenticate: Callable,
    *,
    path: str = "/mcp",
    db: str | None = None,
    host: str = "0.0.0.0",
    stateless: bool = True,
    full_documents: bool = False,
):
    """Serve the citewise MCP tools as a Streamable HTTP endpoint at ``path`` of a Starlette or
    FastAPI ``app``.

    Args:
        app: the host application (before it starts: its lifespan is wrapped to run the MCP
            session manager).
        index_factory: returns the Index for a call (see :func:`create_server`).
        authenticate: ``authenticate(request) -> Principal | None`` (sync or async; or an object
            with a ``principal``), the host's own auth, run on every request to ``path``. Raise
            ``starlette.exceptions.HTTPException`` (401/403) or a ``CitewiseError`` (401) to
            refuse; None means anonymous (public documents only).
        db: records database (see :func:`create_server`).
        host: the address the app is served on; for ``127.0.0.1`` / ``localhost`` the SDK's DNS
            rebinding protection accepts only local ``Host`` headers.
        stateless: no MCP session state between requests (any replica can answer any request).
        full_documents: the document resource sends the whole text (the service's
            ``--full-documents``); else the opening window and the chunk offsets.

    Returns:
        The ``MCPServer`` (its ``session_manager`` runs inside the app's lifespan).
    """
    from contextlib import asynccontextmanager

    from starlette.routing import Route

    server = create_server(index_factory, None, db=db, full_documents=full_documents)
    sub = server.streamable_http_app(streamable_http_path=path, stateless_http=stateless, json_response=True, host=host)
    (route,) = [r for r in sub.routes if isinstance(r, Route) and r.path == path]
    app.router.routes.append(Route(path, endpoint=_Authenticate(route.app, authenticate)))
    manager = server.session_manager
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a):
        async with manager.run():
            async with inner(a) as state:
                yield state

    app.router.lifespan_context = lifespan
    return server
