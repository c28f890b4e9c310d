"""Streamed answers over HTTP: server-sent events while the LLM writes, the checked answer last.

Two formats, one mechanism: the ask runs in a worker thread with an ``on_delta`` callback
(:meth:`citewise.api.Citewise.ask`); each piece of the model's text goes to the client as it
arrives; when the model is done the citation check runs on the finished text, and the last
events carry the checked answer, its citations and notes. A sentence the check withdrew was
already streamed, so it is withdrawn visibly: a final text piece names it (and, when the model
failed after it began and the extractive answer replaced it, gives that answer).

* ``POST /v1/chat/completions`` with ``stream: true`` — OpenAI ``chat.completion.chunk`` events
  (``choices[0].delta.content``), then a chunk with ``finish_reason: "stop"`` and the
  ``citations``, ``outcome``, checked ``answer``, ``notes`` and ``withdrawn`` sentences, then
  ``data: [DONE]``.
* ``POST /v1/ask/stream`` — ``event: delta`` (``{"text"}``), then ``event: answer`` (the
  ``/v1/ask`` JSON) or ``event: error`` (``{"message", "type"}``).

The extractive generator does not stream: its answer arrives as one piece. The request timeout
does not cut a stream short (the LLM client's read timeout bounds each wait for the model).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any, Callable, Iterator

import anyio
from fastapi.responses import StreamingResponse

_DONE = object()


def _sse(data: Any, event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return head + "data: " + (data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)) + "\n\n"


async def _pieces(run: Callable[[Callable[[str], None]], dict]):
    """Run ``run(on_delta)`` in a thread; yield ``("delta", text)`` as it streams, then
    ``("answer", payload)`` or ``("error", exception)``."""
    send, receive = anyio.create_memory_object_stream(max_buffer_size=10_000)
    loop_token = anyio.lowlevel.current_token()

    def put(item) -> None:
        try:
            anyio.from_thread.run_sync(send.send_nowait, item, token=loop_token)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, RuntimeError):
            pass  # the client went away (or the loop ended): the answer finishes unread

    def work() -> None:
        try:
            result = ("answer", run(lambda text: put(("delta", text))))
        except Exception as e:  # noqa: BLE001 - reported to the client as an error event
            result = ("error", e)
        put(result)
        try:
            anyio.from_thread.run_sync(send.close, token=loop_token)
        except RuntimeError:
            pass

    threading.Thread(target=work, daemon=True, name="citewise-stream").start()
    async with receive:
        async for item in receive:
            yield item


def withdrawn_note(payload: dict) -> str:
    """The text piece sent after a streamed answer whose check withdrew sentences ('' when none)."""
    dropped = payload.get("dropped_sentences") or []
    notes = payload.get("notes") or []
    if not dropped and not notes:
        return ""
    lines = [f"[citation check] {n}" for n in notes] or [f"[citation check] withdrawn: {s}" for s in dropped]
    return "\n\n" + "\n".join(lines)


def _error(e: Exception) -> dict:
    from citewise.core import CitewiseError

    kind = "invalid_request_error" if isinstance(e, CitewiseError) else "server_error"
    return {"message": str(e) if isinstance(e, CitewiseError) else f"{type(e).__name__}: {e}", "type": kind}


def openai_stream(run: Callable[[Callable[[str], None]], dict], model: str) -> StreamingResponse:
    """``chat.completion.chunk`` events of ``run(on_delta) -> /v1/ask payload`` (module docstring)."""
    cid, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
    base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}

    def chunk(delta: dict, finish: str | None = None, **extra) -> str:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})

    async def events() -> Iterator[str]:
        yield chunk({"role": "assistant", "content": ""})
        streamed = False
        async for kind, item in _pieces(run):
            if kind == "delta":
                streamed = True
                yield chunk({"content": item})
            elif kind == "answer":
                text = withdrawn_note(item) if streamed else item["answer"]
                if streamed and item.get("generator", "") != "llm":  # the model failed mid-answer: the fallback's text
                    text += "\n\n" + item["answer"]
                if text:
                    yield chunk({"content": text})
                yield chunk(
                    {},
                    "stop",
                    citations=item["citations"],
                    outcome=item["outcome"],
                    answer=item["answer"],
                    notes=item.get("notes", []),
                    withdrawn=item.get("dropped_sentences", []),
                )
            else:
                yield _sse({"error": _error(item)})
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


def ask_stream(run: Callable[[Callable[[str], None]], dict]) -> StreamingResponse:
    """``delta`` / ``answer`` / ``error`` events of ``run(on_delta)`` (module docstring)."""

    async def events() -> Iterator[str]:
        async for kind, item in _pieces(run):
            if kind == "delta":
                yield _sse({"text": item}, "delta")
            elif kind == "answer":
                yield _sse(item, "answer")
            else:
                yield _sse(_error(item), "error")

    return StreamingResponse(events(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
