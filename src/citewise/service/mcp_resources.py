"""MCP resources of the citewise server: a cited document and a chunk, permission-checked.

* ``citewise://documents/{doc_id}``: JSON of the document view (:mod:`citewise.service.documents`):
  title, version, date, its source path relative to the ingested folder, its chunks' offsets and
  its text (the whole text, or on a server that sends spans only, the opening window in
  ``context``). A citation's ``doc_id`` opens it.
* ``citewise://chunks/{chunk_id}``: JSON of one chunk: text, heading path, offsets, the
  document's title, version, dates and metadata.

Ids may hold ``/`` (``help/refunds/refunds-pro``) and ``#`` (chunk ids): write them as they are,
or percent-encoded. A document or chunk the caller's groups may not read is reported exactly as
a missing one.
"""

from __future__ import annotations

import json
from typing import Callable
from urllib.parse import unquote

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError

from citewise.core import CitewiseError, Principal

DOCUMENT_URI = "citewise://documents/{+doc_id}"
CHUNK_URI = "citewise://chunks/{+chunk_id}"
#: Characters of the document's opening sent when whole documents are not allowed.
OPENING_CHARS = 2000


def document_json(cw, doc_id: str, principal: Principal, full: bool) -> dict:
    """The document resource's JSON (see module docstring).

    Raises:
        CitewiseError: no document ``doc_id`` visible to ``principal``.
    """
    from citewise.service.documents import source_view

    view = source_view(cw.index, doc_id, principal)
    if view is None:
        raise CitewiseError(f"no document {doc_id!r} visible to you")
    return view.as_dict(None, None, OPENING_CHARS, full)


def chunk_json(cw, chunk_id: str, principal: Principal) -> dict:
    """The chunk resource's JSON (see module docstring).

    Raises:
        CitewiseError: no chunk ``chunk_id`` visible to ``principal`` (its document's groups and
            the principal's do not meet, or it is not stored).
    """
    c = cw.index.store.get_chunks([chunk_id]).get(chunk_id)
    if c is None or not set(c.groups) & set(principal.all_groups()):
        raise CitewiseError(f"no chunk {chunk_id!r} visible to you")
    return {
        "chunk_id": c.chunk_id,
        "doc_id": c.doc_id,
        "title": c.title,
        "heading_path": list(c.heading_path),
        "text": c.text,
        "start": c.start,
        "end": c.end,
        "version": c.version,
        "updated": c.updated,
        "effective": c.effective,
        "groups": list(c.groups),
        "metadata": dict(c.metadata),
        "prev_id": c.prev_id,
        "next_id": c.next_id,
    }


def add_resources(server, who: Callable, run: Callable, full_documents: bool) -> None:
    """Register the resource templates on ``server`` (``who(ctx)``: the call's principal;
    ``run(fn)``: ``fn(citewise)`` on a lent handle, errors as tool errors)."""

    def read(fn) -> str:
        try:
            return json.dumps(run(fn))
        except ToolError as e:  # run() reports a CitewiseError as a tool error: here it is a missing resource
            raise ResourceNotFoundError(str(e)) from None

    @server.resource(
        DOCUMENT_URI,
        name="document",
        mime_type="application/json",
        description="A document you may read: title, version, date, source path, chunk offsets, text.",
    )
    def document(doc_id: str, ctx: Context) -> str:
        return read(lambda cw: document_json(cw, unquote(doc_id), who(ctx), full_documents))

    @server.resource(
        CHUNK_URI,
        name="chunk",
        mime_type="application/json",
        description="A chunk you may read: text, heading path, offsets, document fields and metadata.",
    )
    def chunk(chunk_id: str, ctx: Context) -> str:
        return read(lambda cw: chunk_json(cw, unquote(chunk_id), who(ctx)))
