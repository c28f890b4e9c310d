"""Recorded real LLM responses, replayed through the real HTTP client in unit tests.

A recording is JSON Lines, one exchange per line: ``{"request": {...chat completion body...},
"response": {...the server's JSON...}}``, written by ``tests/record_llm.py`` against a running
llama.cpp server. :class:`Replay` is an ``httpx`` transport for
:class:`citewise.models.chat.OpenAIChatModel`: a request whose body (messages, max_tokens,
temperature, tools) matches a recorded one gets that response; any other request fails the test
with the first lines of the unexpected prompt (a changed prompt needs a new recording).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

LLM_DATA = Path(__file__).parent / "data" / "llm"


def key(body: dict) -> str:
    return json.dumps({k: body.get(k) for k in ("messages", "max_tokens", "temperature", "tools", "tool_choice")},
                      sort_keys=True, ensure_ascii=False)


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
            raise AssertionError("no recorded response for this prompt (re-record with tests/record_llm.py): "
                                 + json.dumps(body["messages"])[:400])
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
