"""The web page: server-rendered Jinja2 templates and plain HTML forms (no JavaScript, no build
step, nothing fetched from a CDN).

* ``GET /`` — sign in with an API key (kept in an HttpOnly, SameSite=Strict cookie), ask a
  question (``?q=``) as that principal: the answer with a numbered link per citation, then the
  sources with title, version and date, each opening the source view at the cited span;
  an abstention is shown as such, with its reason.
* ``GET /search?q=`` — ranked hits with their snippets.
* ``GET /doc/{doc_id}?start=&end=`` — the permission-checked cited span marked
  (``<mark id="cited">``; the link's ``#cited`` scrolls to it) with :data:`WEB_CONTEXT_CHARS`
  characters of context on each side (the document's opening without a span); the whole document
  with ``&full=1`` only on a server started with ``--full-documents`` (which also shows the link).
* ``GET /index-status`` — documents, chunks, lag, staleness, stale documents.
* ``POST /signin`` (form field ``key``), ``POST /signout``.

Ask and search are GET forms (read-only, bookmarkable); the credential is only ever the cookie.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, quote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from citewise.service.auth import AuthError, Caller

_ENV = Environment(loader=FileSystemLoader(str(Path(__file__).parent / "templates")),
                   autoescape=select_autoescape(["html"]))
_MARKER = re.compile(r"\[doc:([^\]\s]+)\]")
#: Characters of context on each side of the cited span on the source page (about a screen).
WEB_CONTEXT_CHARS = 1000


def doc_url(doc_id: str, start: int | None = None, end: int | None = None, full: bool = False) -> str:
    """URL of the source view of ``doc_id`` with the span ``[start, end)`` marked (``full``: the
    whole document, which the server must allow)."""
    params = [f"start={start}", f"end={end}"] if start is not None and end is not None else []
    params += ["full=1"] if full else []
    return "/doc/" + quote(doc_id, safe="/@") + ("?" + "&".join(params) if params else "") + \
        ("#cited" if start is not None and end is not None else "")


def linked_answer(text: str, citations: list[dict]) -> Markup:
    """The answer text, escaped, with each ``[doc:ID]`` marker turned into a numbered link to the
    source view of that document's first citation (its span marked)."""
    number: dict[str, int] = {}
    first: dict[str, dict] = {}
    for c in citations:
        if c["doc_id"] not in first:
            first[c["doc_id"]] = c
            number[c["doc_id"]] = len(number) + 1
    out, pos = [], 0
    for m in _MARKER.finditer(text):
        out.append(escape(text[pos:m.start()]))
        c = first.get(m.group(1))
        if c is None:
            out.append(escape(m.group(0)))
        else:
            out.append(Markup('<a class="cite" href="{}" title="{}">[{}]</a>').format(
                doc_url(c["doc_id"], c["start"], c["end"]), c["title"], number[c["doc_id"]]))
        pos = m.end()
    out.append(escape(text[pos:]))
    return Markup("").join(out)


def add_web_routes(app: FastAPI, svc) -> None:
    """Add the web page routes to ``app`` (``svc``: the :class:`citewise.service.app.Service`)."""
    from citewise.service.app import ApiError, KEY_COOKIE

    def render(name: str, status: int = 200, **ctx) -> HTMLResponse:
        return HTMLResponse(_ENV.get_template(name).render(**ctx), status_code=status)

    def web_caller(request: Request) -> tuple[Caller | None, str]:
        """(caller, message): the cookie's caller; None when the server requires sign-in and there
        is none, or the cookie's key is no longer valid."""
        key = request.cookies.get(KEY_COOKIE)
        try:
            return svc.auth.from_credential(key or None), ""
        except AuthError as e:
            return None, ("Your key is no longer valid; sign in again." if key else str(e))

    def base_ctx(c: Caller | None, msg: str = "") -> dict:
        return {"caller": c, "message": msg, "require_auth": svc.auth.require_auth,
                "groups": ", ".join(c.principal.groups) if c and c.principal.groups else "public only"}

    async def guarded(request: Request, work):
        c, msg = web_caller(request)
        if c is None:
            return render("signin.html", 401, **base_ctx(None, msg))
        try:
            svc.limit(c, request.client.host if request.client else "unknown")
            return await work(c)
        except ApiError as e:
            return render("error.html", e.status, **base_ctx(c), error=e.message)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def home(request: Request, q: str = ""):
        async def work(c):
            result = None
            if q.strip():
                svc.check_query(q, "question")
                result = await svc.run(svc.ask, q, 5, "shipped", c.principal, None)
                result["html"] = linked_answer(result["answer"], result["citations"])
                result["links"] = [doc_url(x["doc_id"], x["start"], x["end"]) for x in result["citations"]]
            return render("ask.html", **base_ctx(c), q=q, result=result)
        return await guarded(request, work)

    @app.get("/search", response_class=HTMLResponse, include_in_schema=False)
    async def search_page(request: Request, q: str = ""):
        async def work(c):
            hits, missing = None, []
            if q.strip():
                svc.check_query(q, "query")
                found = await svc.run(svc.search, q, 10, "shipped", c.principal, None)
                hits, missing = found["hits"], found["missing_words"]
                for h in hits:
                    h["url"] = doc_url(h["doc_id"], h["snippet_start"], h["snippet_end"])
            return render("search.html", **base_ctx(c), q=q, hits=hits, missing=missing)
        return await guarded(request, work)

    @app.get("/doc/{doc_id:path}", response_class=HTMLResponse, include_in_schema=False)
    async def doc_page(request: Request, doc_id: str, start: int | None = None, end: int | None = None,
                       full: bool = False):
        async def work(c):
            svc.check_span(start, end)
            svc.check_full(full)
            view = await svc.run(svc.document, doc_id, c.principal)
            if view is None:
                return render("error.html", 404, **base_ctx(c),
                              error=f"No document {doc_id!r} is visible to you.")
            sp = view.span(start, end)
            lo, hi = (0, len(view.text)) if full else view.excerpt(start, end, WEB_CONTEXT_CHARS)
            s, e = sp if sp is not None else (lo, lo)
            whole = doc_url(doc_id, *(sp or (None, None)), full=True)
            return render("document.html", **base_ctx(c), view=view, before=view.text[lo:s], cited=view.text[s:e],
                          after=view.text[e:hi], shown_from=lo, shown_to=hi, length=len(view.text),
                          whole_url=whole if svc.full_documents and (lo > 0 or hi < len(view.text)) else None)
        return await guarded(request, work)

    @app.get("/index-status", response_class=HTMLResponse, include_in_schema=False)
    async def status_page(request: Request):
        async def work(c):
            st = await svc.run(svc.status, c)
            return render("status.html", **base_ctx(c), st=st)
        return await guarded(request, work)

    @app.post("/signin", include_in_schema=False)
    async def signin(request: Request):
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        key = (form.get("key") or [""])[0].strip()
        try:
            if not key:
                raise AuthError("enter an API key")
            svc.auth.from_credential(key)
        except AuthError as e:
            return render("signin.html", 401, **base_ctx(None, f"Sign-in failed: {e}"))
        resp = RedirectResponse("/", status_code=303)
        resp.set_cookie(KEY_COOKIE, key, httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return resp

    @app.post("/signout", include_in_schema=False)
    async def signout():
        resp = RedirectResponse("/", status_code=303)
        resp.delete_cookie(KEY_COOKIE)
        return resp
