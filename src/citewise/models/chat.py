"""``ChatModel``: one HTTP client for every OpenAI-compatible chat-completions endpoint.

Speaks the OpenAI chat-completions wire format (``POST {base_url}/chat/completions`` with
``model``, ``messages``, optional ``tools`` / ``tool_choice``; response ``choices[0].message``
with ``content`` and ``tool_calls``), which vLLM, Ollama (``/v1``), llama.cpp server and OpenAI
all serve. Configuration: ``base_url``, ``model``, ``api_key`` given directly or read from the
environment (``CITEWISE_LLM_BASE_URL`` / ``OPENAI_BASE_URL``, ``CITEWISE_LLM_MODEL``,
``CITEWISE_LLM_API_KEY`` / ``OPENAI_API_KEY``).

Every failure (connection, timeout, HTTP status, malformed body) raises :class:`ChatError`, so
callers that must fail closed (judges) have one exception to catch.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

import httpx

from citewise.core import CitewiseError
from citewise.telemetry import traced_chat



def body_excerpt(text: str, limit: int = 200) -> str:
    """An HTTP error body fit for one error line: HTML tags dropped (a proxy's error page),
    whitespace collapsed, at most ``limit`` characters.

    >>> body_excerpt("<html>\\n<h1>502 Bad Gateway</h1>\\n<p>nginx</p></html>")
    '502 Bad Gateway nginx'
    """
    plain = re.sub(r"<(script|style)\b.*?</\1>|<[^>]+>", " ", text, flags=re.S | re.I)
    plain = " ".join(plain.split())
    return plain if len(plain) <= limit else plain[: limit - 1] + "…"

class ChatError(CitewiseError):
    """The endpoint could not be reached, timed out, or answered something unusable."""


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model.

    Attributes:
        id: the call id to answer with a ``tool`` message.
        name: function name.
        arguments: parsed JSON arguments (``{}`` if they were not valid JSON; see ``raw_arguments``).
        raw_arguments: the arguments string as sent.
    """

    id: str
    name: str
    arguments: dict
    raw_arguments: str


@dataclass(frozen=True)
class ChatResponse:
    """The first choice of a chat completion."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ChatConfig:
    """Where and how to call the endpoint. ``timeout`` is in seconds."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    temperature: float = 0.0

    @classmethod
    def from_env(cls, **overrides) -> "ChatConfig":
        """Config from the environment; keyword overrides win.

        Raises:
            ChatError: no base URL or model configured.
        """
        env = os.environ
        values = {
            "base_url": env.get("CITEWISE_LLM_BASE_URL") or env.get("OPENAI_BASE_URL"),
            "model": env.get("CITEWISE_LLM_MODEL"),
            "api_key": env.get("CITEWISE_LLM_API_KEY") or env.get("OPENAI_API_KEY"),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if not values.get("base_url"):
            raise ChatError("no LLM endpoint configured: set CITEWISE_LLM_BASE_URL (e.g. http://localhost:8000/v1)")
        if not values.get("model"):
            raise ChatError("no LLM model configured: set CITEWISE_LLM_MODEL")
        return cls(**values)


@runtime_checkable
class ChatModel(Protocol):
    """Anything that completes a chat in the OpenAI wire format."""

    def chat(self, messages: Sequence[dict], tools: Sequence[dict] | None = None,
             tool_choice: Any = None, max_tokens: int | None = None) -> ChatResponse:
        ...


class OpenAIChatModel:
    """HTTP client for ``/chat/completions`` (see module docstring).

    Raises (from :meth:`chat`):
        ChatError: connection failure, timeout, non-2xx status, or a body without a message.
    """

    def __init__(self, config: ChatConfig, transport: httpx.BaseTransport | None = None):
        self.config = config
        headers = {"Content-Type": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._client = httpx.Client(base_url=config.base_url.rstrip("/"), headers=headers,
                                    timeout=config.timeout, transport=transport)

    def close(self) -> None:
        self._client.close()

    @traced_chat
    def chat(self, messages, tools=None, tool_choice=None, max_tokens=None) -> ChatResponse:
        body: dict[str, Any] = {"model": self.config.model, "messages": list(messages),
                                "temperature": self.config.temperature}
        if tools:
            body["tools"] = list(tools)
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        try:
            resp = self._client.post("/chat/completions", json=body)
        except httpx.TimeoutException:
            raise ChatError(f"{self.config.base_url}: timed out after {self.config.timeout:g}s") from None
        except httpx.HTTPError as e:
            raise ChatError(f"{self.config.base_url}: {type(e).__name__}: {e}") from None
        if resp.status_code >= 400:
            raise ChatError(f"{self.config.base_url}: HTTP {resp.status_code}: {body_excerpt(resp.text)}")
        try:
            data = resp.json()
            choice = data["choices"][0]
            msg = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatError(f"{self.config.base_url}: response is not a chat completion: {body_excerpt(resp.text)}") from None
        calls = []
        for tc in msg.get("tool_calls") or []:
            fn = tc.get("function") or {}
            raw = fn.get("arguments") or "{}"
            try:
                args = json.loads(raw) if isinstance(raw, str) else dict(raw)
                if not isinstance(args, dict):
                    args = {}
            except (ValueError, TypeError):
                args = {}
            calls.append(ToolCall(tc.get("id", ""), fn.get("name", ""), args, raw if isinstance(raw, str) else json.dumps(raw)))
        return ChatResponse(msg.get("content"), calls, choice.get("finish_reason"), data.get("usage") or {}, data)
