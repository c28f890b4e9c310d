"""A local HTTP server that speaks the OpenAI chat-completions wire format, for tests.

It answers ``POST /v1/chat/completions`` from a script: a list of recorded responses served in
order (each a message dict such as ``{"content": "..."}`` or ``{"tool_calls": [...]}``, optionally
with the ``usage`` to report), or a
callable ``(request_body) -> message dict``. ``delay`` seconds before answering lets tests
provoke client timeouts. Every request body is kept in ``requests``.

    with FakeOpenAI([{"content": "hi"}]) as server:
        model = OpenAIChatModel(ChatConfig(server.base_url, "test-model"))
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def completion(message: dict, model: str = "fake") -> dict:
    """A chat.completion body around one assistant message."""
    msg = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        msg["tool_calls"] = [
            {
                "id": tc.get("id", f"call_{i}"),
                "type": "function",
                "function": {
                    "name": tc["name"],
                    "arguments": tc["arguments"] if isinstance(tc["arguments"], str) else json.dumps(tc["arguments"]),
                },
            }
            for i, tc in enumerate(message["tool_calls"])
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "message": msg, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}
        ],
        "usage": message.get("usage") or {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


class FakeOpenAI:
    def __init__(self, script, delay: float = 0.0, status: int = 200):
        self.script = script
        self.delay = delay
        self.status = status
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._i = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append(body)
                    if callable(outer.script):
                        message = outer.script(body)
                    else:
                        message = outer.script[min(outer._i, len(outer.script) - 1)]
                        outer._i += 1
                if outer.delay:
                    time.sleep(outer.delay)
                payload = json.dumps(
                    completion(message, body.get("model", "fake"))
                    if outer.status == 200
                    else {"error": {"message": "scripted failure"}}
                ).encode()
                try:
                    self.send_response(outer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # shutdown() returns at the loop's next poll: every 0.05 s, not the default 0.5 s (per test)
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
