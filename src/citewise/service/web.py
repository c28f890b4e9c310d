"""The web page: server-rendered Jinja2 templates that work without JavaScript, plus a small
inline script that streams answers (nothing is fetched from a CDN).

* ``GET /`` — a new conversation: the question box, and "Narrow the search" (scope, metadata
  filters, "as of" date) that the whole conversation keeps. ``GET /?q=`` asks at once.
* ``POST /ask`` (form ``q``, ``c`` = conversation id for a follow-up, ``scope``, ``filters``,
  ``as_of``) — asks as the signed-in principal within the conversation's scope and shows the
  conversation (``303`` to ``/c/{id}``). With JavaScript the form posts to ``POST /ask/stream``
  instead: Server-Sent Events ``start`` (the question), ``sentence`` (each answer sentence as HTML,
  its citation links included) and ``done`` (the conversation's URL, which the page then shows).
* ``GET /c/{id}`` — a conversation: every turn with its question, its outcome in words, the scope
  line (who searched, within what), the answer rendered from Markdown (sanitised) with a numbered
  link per citation marker to that sentence's own span, or the abstention with its reason as a
  sentence; and source cards (title, cited passage, version, date, groups).
* ``GET /search?q=`` — ranked results as cards (title, snippet, heading path, version, date, groups).
* ``GET /doc/{doc_id}?start=&end=`` — the permission-checked source rendered from Markdown with
  the cited span marked (``<mark id="cited">``; the link's ``#cited`` scrolls to it) within
  :data:`WEB_CONTEXT_CHARS` characters of context (the whole document with ``&full=1`` only on a
  server started with ``--full-documents``).
* ``GET /index-status`` — documents, chunks, lag, staleness, stale documents.
* ``POST /signin`` (form field ``key``), ``POST /signout``.

The credential is only ever the HttpOnly, SameSite=Strict cookie; questions travel in form
bodies (a ``?q=`` link still works), conversations live in the server's memory
(:mod:`citewise.service.conversations`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, StreamingResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from citewise.service.auth import AuthError, Caller
from citewise.service.render import answer_html, doc_url, mark_span, markdown_html  # noqa: F401 (doc_url re-exported)

_ENV = Environment(
    loader=FileSystemLoader(str(Path(__file__).parent / "templates")), autoescape=select_autoescape(["html"])
)
_ENV.filters["md"] = lambda text: markdown_html(text or "", inline=True)
#: Characters of context on each side of the cited span on the source page (about a screen).
WEB_CONTEXT_CHARS = 1000
#: Longest cited passage shown on a source card (characters; the link opens the whole span).
CARD_CHARS = 400
#: The outcome of an answer in words.
OUTCOME_WORDS = {
    "answered": "Answered from your documents",
    "partial": "Partly answered: sentences the sources did not support were left out",
    "abstained": "No answer",
    "supported": "Supported by the sources",
    "gap": "Not fully answered: the sources have a gap",
    "conflict": "The sources disagree",
    "not_established": "Not established by the sources",
    "no_tool": "No answer",
}
NO_ANSWER = ("abstained", "no_tool")
SIGN_IN_NEEDED = (
    "This server shows documents only to people who sign in. Paste the API key your administrator gave you."
)


def linked_answer(text: str, citations: list[dict]) -> Markup:
    """The answer as sanitised HTML with a numbered link per citation marker, each to its own
    sentence's span (:func:`citewise.service.render.answer_html`)."""
    return answer_html(text, citations)


def reason_sentence(payload: dict) -> str:
    """The payload's reason as a sentence for people ('' when it has none)."""
    r = payload.get("reason") or {}
    text = (r.get("text") or "").strip().rstrip(".")
    return (text[:1].upper() + text[1:] + ".") if text else ""


def scope_line(caller: Caller, conv) -> str:
    """Who searched and within what: the principal's groups, the conversation's scope, filters and date."""
    groups = [g for g in caller.principal.groups if g != "public"]
    who = "documents readable by " + (
        f"{caller.principal.name} (groups: {', '.join(groups)})" if groups else "anyone (public documents)"
    )
    parts = [f"Searched {who}"]
    if conv is not None and conv.scope:
        parts.append("only within " + ", ".join(conv.scope))
    if conv is not None and conv.filters:
        parts.append("where " + " and ".join(conv.filters))
    if conv is not None and conv.as_of:
        parts.append(f"as in force on {conv.as_of}")
    return "; ".join(parts) + "."


def source_cards(svc, payload: dict) -> list[dict]:
    """One card per cited source: title, the first citing sentence's passage (at most
    :data:`CARD_CHARS` characters), version, date, groups and the link to the span."""
    ids = [c["chunk_id"] for c in payload.get("citations", []) if c.get("chunk_id")]
    with svc.pool.use() as cw:
        chunks = cw.index.store.get_chunks(ids) if ids else {}
    cards = []
    for c in payload.get("citations", []):
        ch = chunks.get(c.get("chunk_id"))
        passage = ""
        if ch is not None:
            lo, hi = max(0, c["start"] - ch.start), max(0, c["end"] - ch.start)
            passage = ch.text[lo:hi] or ch.text
        if len(passage) > CARD_CHARS:
            passage = passage[:CARD_CHARS].rsplit(" ", 1)[0] + " …"
        groups = [g for g in (ch.groups if ch is not None else ()) if g != "public"]
        cards.append(
            {
                "title": c.get("title") or c["doc_id"],
                "doc_id": c["doc_id"],
                "url": doc_url(c["doc_id"], c["start"], c["end"]),
                "passage": passage,
                "version": c.get("version") or "",
                "updated": c.get("updated") or "",
                "groups": groups or ["public"],
            }
        )
    return cards


def turn_view(turn, last: bool) -> dict:
    """What the template shows of a turn."""
    p = turn.payload
    return {
        "question": turn.question,
        "outcome": p["outcome"],
        "words": OUTCOME_WORDS.get(p["outcome"], p["outcome"]),
        "no_answer": p["outcome"] in NO_ANSWER,
        "answer": p["answer"],
        "reason": reason_sentence(p),
        "html": linked_answer(p["answer"], p["citations"]),
        "cards": turn.cards,
        "tool_calls": p.get("tool_calls", []),
        "unavailable": (p.get("scope") or {}).get("unavailable") or [],
        "last": last,
    }


def _form_list(value: str) -> tuple[str, ...]:
    """Form text as a list: one item per line or comma-separated (filters keep their commas
    when given one per line)."""
    lines = [ln.strip() for ln in (value or "").splitlines() if ln.strip()]
    return tuple(lines)


def _stream_pieces(html: str) -> list[str]:
    """An answer's HTML cut after each citation link group (one piece per cited sentence)."""
    pieces = re.split(r"(?<=</a>)(?=\s+[^<\s])", html)
    return [p for p in pieces if p]


def add_web_routes(app: FastAPI, svc) -> None:
    """Add the web page routes to ``app`` (``svc``: the :class:`citewise.service.app.Service`)."""
    from citewise.api import AskOptions
    from citewise.service.errors import KEY_COOKIE, ApiError
    from citewise.service.conversations import Conversations, Turn
    from citewise.service.options import request_filters

    svc.conversations = Conversations()

    def render(name: str, status: int = 200, **ctx) -> HTMLResponse:
        return HTMLResponse(_ENV.get_template(name).render(**ctx), status_code=status)

    def web_caller(request: Request) -> tuple[Caller | None, str]:
        """(caller, message): the cookie's caller; None when the server requires sign-in and there
        is none, or the cookie's key is no longer valid."""
        key = request.cookies.get(KEY_COOKIE)
        try:
            return svc.auth.from_credential(key or None), ""
        except AuthError:
            return None, (
                "Your key is no longer valid (it may have been revoked); sign in again." if key else SIGN_IN_NEEDED
            )

    def base_ctx(c: Caller | None, msg: str = "") -> dict:
        return {
            "caller": c,
            "message": msg,
            "require_auth": svc.auth.require_auth,
            "groups": ", ".join(c.principal.groups) if c and c.principal.groups else "public only",
        }

    async def guarded(request: Request, work):
        c, msg = web_caller(request)
        if c is None:
            return render("signin.html", 401, **base_ctx(None, msg))
        try:
            svc.limit(c, request.client.host if request.client else "unknown")
            return await work(c)
        except ApiError as e:
            return render("error.html", e.status, **base_ctx(c), error=e.message)
        except Exception as e:  # a bad filter or date: one line on the page, as the API says it
            from citewise.core import CitewiseError

            if isinstance(e, CitewiseError):
                return render("error.html", 400, **base_ctx(c), error=str(e))
            raise

    def conversation_page(c: Caller, conv) -> HTMLResponse:
        turns = [turn_view(t, i == len(conv.turns) - 1) for i, t in enumerate(conv.turns)] if conv else []
        return render(
            "conversation.html",
            **base_ctx(c),
            conv=conv,
            turns=turns,
            scope=scope_line(c, conv) if conv and conv.turns else "",
        )

    async def ask_in(c: Caller, form: dict):
        """Ask ``form['q']`` in conversation ``form['c']`` (a new one when absent): (conversation, turn)."""
        q = (form.get("q") or "").strip()
        svc.check_query(q, "question")
        conv = svc.conversations.get(form["c"], c.principal) if form.get("c") else None
        if form.get("c") and conv is None:
            raise ApiError(
                404,
                "This conversation is not available to you (it ended when the server restarted, "
                "or it belongs to another sign-in). Start a new one.",
                "not_found",
            )
        if conv is None:
            scope = tuple(s for item in _form_list(form.get("scope", "")) for s in item.split(",") if s.strip())
            filters = _form_list(form.get("filters", ""))
            as_of = (form.get("as_of") or "").strip()
            request_filters(as_of or None, None, filters)  # a bad filter or date is said before anything is kept
            conv = svc.conversations.start(c.principal, tuple(s.strip() for s in scope), filters, as_of)
        f = request_filters(conv.as_of or None, None, conv.filters)
        options = AskOptions(filters=f, scope=conv.scope)
        payload = await svc.run(svc.ask, q, 5, "shipped", c.principal, f, options)
        cards = await svc.run(source_cards, svc, payload)
        n = svc.conversations.add(conv, Turn(q, payload, cards))
        return conv, n

    async def read_form(request: Request) -> dict:
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        return {k: v[0] for k, v in form.items()}

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def home(request: Request, q: str = ""):
        async def work(c):
            if not q.strip():
                return conversation_page(c, None)
            conv, _ = await ask_in(c, {"q": q})
            return conversation_page(c, conv)

        return await guarded(request, work)

    @app.post("/ask", include_in_schema=False)
    async def ask_form(request: Request):
        form = await read_form(request)

        async def work(c):
            conv, n = await ask_in(c, form)
            return RedirectResponse(f"/c/{conv.id}#turn-{n}", status_code=303)

        return await guarded(request, work)

    @app.post("/ask/stream", include_in_schema=False)
    async def ask_stream(request: Request):
        form = await read_form(request)

        def event(name: str, data: dict) -> str:
            return f"event: {name}\ndata: {json.dumps(data)}\n\n"

        async def work(c):
            async def events():
                yield event("start", {"question": (form.get("q") or "").strip()})
                try:
                    conv, n = await ask_in(c, form)
                except ApiError as e:
                    yield event("error", {"message": e.message})
                    return
                except Exception as e:  # noqa: BLE001 - a bad filter: said in the page, never a dead stream
                    yield event("error", {"message": str(e)})
                    return
                view = turn_view(conv.turns[-1], True)
                if view["no_answer"]:
                    yield event("sentence", {"html": str(Markup("<strong>No answer.</strong> ") + view["answer"])})
                else:
                    for piece in _stream_pieces(str(view["html"])):
                        yield event("sentence", {"html": piece})
                yield event("done", {"url": f"/c/{conv.id}#turn-{n}", "outcome": view["outcome"]})

            return StreamingResponse(
                events(),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
            )

        return await guarded(request, work)

    @app.get("/c/{conv_id}", response_class=HTMLResponse, include_in_schema=False)
    async def conversation(request: Request, conv_id: str):
        async def work(c):
            conv = svc.conversations.get(conv_id, c.principal)
            if conv is None:
                return render(
                    "error.html",
                    404,
                    **base_ctx(c),
                    error=(
                        "This conversation is not available to you (it ended when the server restarted, or it "
                        "belongs to another sign-in). Start a new one from Ask."
                    ),
                )
            return conversation_page(c, conv)

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
                    h["shown_groups"] = [g for g in h["groups"] if g != "public"] or ["public"]
            return render("search.html", **base_ctx(c), q=q, hits=hits, missing=missing)

        return await guarded(request, work)

    @app.get("/doc/{doc_id:path}", response_class=HTMLResponse, include_in_schema=False)
    async def doc_page(
        request: Request, doc_id: str, start: int | None = None, end: int | None = None, full: bool = False
    ):
        async def work(c):
            svc.check_span(start, end)
            svc.check_full(full)
            view = await svc.run(svc.document, doc_id, c.principal)
            if view is None:
                return render("error.html", 404, **base_ctx(c), error=f"No document {doc_id!r} is visible to you.")
            sp = view.span(start, end)
            lo, hi = (0, len(view.text)) if full else view.excerpt(start, end, WEB_CONTEXT_CHARS)
            s, e = sp if sp is not None else (lo, lo)
            whole = doc_url(doc_id, *(sp or (None, None)), full=True)
            return render(
                "document.html",
                **base_ctx(c),
                view=view,
                body=mark_span(view.text[lo:hi], s - lo, e - lo),
                cited=view.text[s:e],
                shown_from=lo,
                shown_to=hi,
                length=len(view.text),
                whole_url=whole if svc.full_documents and (lo > 0 or hi < len(view.text)) else None,
            )

        return await guarded(request, work)

    @app.get("/index-status", response_class=HTMLResponse, include_in_schema=False)
    async def status_page(request: Request):
        async def work(c):
            st = await svc.run(svc.status, c)
            return render("status.html", **base_ctx(c), st=st)

        return await guarded(request, work)

    @app.post("/signin", include_in_schema=False)
    async def signin(request: Request):
        form = await read_form(request)
        key = (form.get("key") or "").strip()
        try:
            if not key:
                raise AuthError("enter your API key")
            svc.auth.from_credential(key)
        except AuthError:
            return render(
                "signin.html",
                401,
                **base_ctx(
                    None,
                    "Sign-in failed: that key was not accepted. Check that you pasted "
                    "the whole key, or ask your administrator for a new one.",
                ),
            )
        resp = RedirectResponse("/", status_code=303)
        resp.set_cookie(KEY_COOKIE, key, httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return resp

    @app.post("/signout", include_in_schema=False)
    async def signout():
        resp = RedirectResponse("/", status_code=303)
        resp.delete_cookie(KEY_COOKIE)
        return resp
