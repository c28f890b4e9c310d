"""Recorded real LLM responses, replayed in unit tests, in two forms.

**Replay server** (:class:`ReplayServer`, :func:`recording`): a local HTTP server that replays
exchanges recorded from a real LLM server. Its recordings live in ``tests/data/llm/*.json`` (written by ``bench/llm_local.py --export``): each
holds ``source`` (server, model, date) and ``exchanges``, each exchange ``{"request", "status",
"content_type", "chunks": [[seconds since the request, text], ...]}`` — a plain reply is one
chunk, a streamed reply one chunk per piece the server sent, with the times it sent them.

``POST .../chat/completions`` is answered with the next recorded exchange (the recorded
request is not compared: the test's own prompt differs); the chunks are written with the
recorded gaps times ``speed`` (0: no waiting), so a slow first token stays slow when a test asks
for it. ``GET /props`` and ``GET .../models`` answer ``props`` / ``models`` when given, else 404 /
the llama-cpp-python model list. Every request body is kept in ``requests``.

**Replay transport** (:class:`Replay`, :func:`replay_model`, :class:`Recorder`): its recordings
(``tests/data/llm/*.jsonl``) are JSON Lines, one exchange per line: ``{"request": {...chat completion body...},
"response": {...the server's JSON...}}``, written by ``tests/record_llm.py`` against a running
llama.cpp server. :class:`Replay` is an ``httpx`` transport for
:class:`citewise.models.chat.OpenAIChatModel`: a request whose body (messages, max_tokens,
temperature, tools) matches a recorded one gets that response; any other request fails the test
with the first lines of the unexpected prompt (a changed prompt needs a new recording).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

DATA = Path(__file__).parent / "data" / "llm"


def recording(name: str) -> dict:
    """A recording by file stem (``tests/data/llm/<name>.json``)."""
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


class ReplayServer:
    def __init__(
        self, exchanges: list[dict], speed: float = 0.0, props: dict | None = None, models: dict | None = None
    ):
        self.exchanges = list(exchanges)
        self.speed = speed
        self.requests: list[dict] = []
        self._i = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status: int, body: str, ctype: str = "application/json"):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/props"):
                    return self._send(200, json.dumps(props)) if props else self._send(404, '{"detail":"Not Found"}')
                if self.path.rstrip("/").endswith("/models"):
                    return self._send(
                        200,
                        json.dumps(
                            models
                            or {
                                "object": "list",
                                "data": [{"id": "local", "object": "model", "owned_by": "me", "permissions": []}],
                            }
                        ),
                    )
                return self._send(404, '{"detail":"Not Found"}')

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append(body)
                    ex = outer.exchanges[min(outer._i, len(outer.exchanges) - 1)]
                    outer._i += 1
                try:
                    if "event-stream" not in ex["content_type"]:
                        if ex["chunks"] and outer.speed:
                            time.sleep(ex["chunks"][0][0] * outer.speed)
                        return self._send(ex["status"], "".join(c for _, c in ex["chunks"]), ex["content_type"])
                    self.send_response(ex["status"])
                    self.send_header("Content-Type", ex["content_type"])
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    last = 0.0
                    for t, text in ex["chunks"]:
                        if outer.speed:
                            time.sleep(max(0.0, t - last) * outer.speed)
                        last = t
                        data = text.encode()
                        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()


LLM_DATA = DATA


def key(body: dict) -> str:
    return json.dumps(
        {k: body.get(k) for k in ("messages", "max_tokens", "temperature", "tools", "tool_choice")},
        sort_keys=True,
        ensure_ascii=False,
    )


class Replay(httpx.BaseTransport):
    def __init__(self, name: str):
        self.exchanges: dict[str, dict] = {}
        self.model = None
        for line in (LLM_DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                ex = json.loads(line)
                self.exchanges[key(ex["request"])] = ex["response"]
                self.model = ex["request"]["model"]
        self.calls = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        got = self.exchanges.get(key(body))
        if got is None:
            raise AssertionError(
                "no recorded response for this prompt (re-record with tests/record_llm.py): "
                + json.dumps(body["messages"])[:400]
            )
        self.calls += 1
        return httpx.Response(200, json=got)


def replay_model(name: str):
    """An OpenAIChatModel answering from the recording ``tests/data/llm/<name>``."""
    from citewise.models.chat import ChatConfig, OpenAIChatModel

    t = Replay(name)
    return OpenAIChatModel(ChatConfig("http://recorded.invalid/v1", t.model), transport=t), t


class Recorder(httpx.BaseTransport):
    """Pass requests to a live server and keep every exchange (for tests/record_llm.py)."""

    def __init__(self):
        self.inner = httpx.HTTPTransport()
        self.exchanges: list[dict] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        resp = self.inner.handle_request(request)
        resp.read()
        if resp.status_code == 200:
            self.exchanges.append({"request": body, "response": resp.json()})
        return resp

    def save(self, name: str) -> Path:
        LLM_DATA.mkdir(parents=True, exist_ok=True)
        path = LLM_DATA / name
        path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.exchanges), encoding="utf-8")
        return path
