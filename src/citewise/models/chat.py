"""``ChatModel``: one HTTP client for every OpenAI-compatible chat-completions endpoint.

Speaks the OpenAI chat-completions wire format (``POST {base_url}/chat/completions`` with
``model``, ``messages``, optional ``tools`` / ``tool_choice`` / ``stream``; response
``choices[0].message`` with ``content`` and ``tool_calls``, or server-sent events of
``choices[0].delta`` when streaming), which vLLM, Ollama (``/v1``), llama.cpp server,
llama-cpp-python and OpenAI all serve.

Configuration (:class:`ChatConfig`) comes from the settings object (``[llm]`` and its per-use
tables ``[llm.answer]``, ``[llm.judge]`` ...; :mod:`citewise.settings`): base URL, model, API key,
connect and read timeouts, retries, output tokens, context window, temperature, streaming.

Behaviour with real servers:

* **Timeouts**: ``connect_timeout_s`` to open the connection, ``read_timeout_s`` between two
  reads of the reply (for a non-streamed reply: the whole generation, prompt reading included).
  A timeout raises :class:`ChatTimeout`, whose message names the setting to raise.
* **Retries**: a refused or reset connection, HTTP 429 and 5xx are retried ``retries`` times
  (0.5 s, 1 s, 2 s ... apart). A read timeout is not retried: the model would be asked to do the
  same slow work again.
* **Context overflow**: an HTTP 400 that says the prompt does not fit raises
  :class:`ContextOverflow` carrying the window and prompt size the server named
  (:mod:`citewise.models.serverinfo`); the window is remembered (:meth:`context_window`).
* **Tool calls** (:mod:`citewise.models.toolcalls`): read from ``tool_calls`` or from the reply's
  text (fenced JSON, ``<tool_call>`` tags, ``<|python_tag|>``, ``functions.NAME:``). A malformed
  call gets one repair turn; a second malformed reply raises :class:`ToolCallError` (fail
  closed). ``tool_choice`` is sent as given until the server refuses it (HTTP 400 naming
  ``tool_choice``), then left out; a server that refuses ``tools`` gets them described in the
  system prompt instead.
* **Streaming**: ``on_delta`` (or ``stream = true``) reads the reply as server-sent events and
  calls ``on_delta(text)`` for each piece; the returned :class:`ChatResponse` holds the whole text.

Every failure (connection, timeout, HTTP status, malformed body) raises :class:`ChatError` (or a
subclass), so callers that must fail closed (judges) have one exception to catch.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import httpx

from citewise.core import CitewiseError
from citewise.models import serverinfo, toolcalls
from citewise.models.tls import tls_context
from citewise.telemetry import traced_chat

#: The context window assumed when neither the settings nor the server give one (tokens).
DEFAULT_CONTEXT_WINDOW = 4096
#: HTTP statuses retried (besides connection failures).
RETRY_STATUSES = (429, 500, 502, 503, 504)


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


class ChatTimeout(ChatError):
    """No reply within the connect or read timeout; the message names the setting to raise."""


class ContextOverflow(ChatError):
    """The server refused the prompt as too long for its context window.

    Attributes:
        context_window: the window the server named (None when it named none).
        prompt_tokens: the prompt size it counted (None when not named).
    """

    def __init__(self, message: str, context_window: int | None = None, prompt_tokens: int | None = None):
        super().__init__(message)
        self.context_window = context_window
        self.prompt_tokens = prompt_tokens


class ToolCallError(ChatError):
    """The model's tool call stayed malformed after one repair turn."""


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model.

    Attributes:
        id: the call id to answer with a ``tool`` message.
        name: function name.
        arguments: parsed JSON arguments.
        raw_arguments: the arguments as JSON text.
    """

    id: str
    name: str
    arguments: dict
    raw_arguments: str


@dataclass(frozen=True)
class ChatResponse:
    """The first choice of a chat completion.

    Attributes:
        content: the reply text (with tool-call blocks removed when calls were read from it).
        tool_calls: the calls, from ``tool_calls`` or read from the text.
        finish_reason, usage, raw: as the server sent them (``raw``: the body, or the last event).
        tool_format: where the calls came from (:data:`citewise.models.toolcalls.FORMATS`), ''.
        repaired: the calls came after a repair turn.
        seconds: wall time of the request(s); ``first_token_s``: until the first streamed text.
    """

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict)
    tool_format: str = ""
    repaired: bool = False
    seconds: float = 0.0
    first_token_s: float | None = None


@dataclass(frozen=True)
class ChatConfig:
    """Where and how to call the endpoint (module docstring). Seconds and model tokens.

    ``timeout`` is the older name of ``read_timeout_s`` (given: it wins). ``use`` names the
    settings table the config came from (``answer``, ``judge`` ...), for error messages.
    """

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float | None = None
    temperature: float = 0.0
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 60.0
    retries: int = 1
    max_output_tokens: int = 512
    max_prompt_tokens: int | None = None
    context_window: int | None = None
    stream: bool = False
    use: str = ""

    def __post_init__(self) -> None:
        if self.timeout is not None:
            object.__setattr__(self, "read_timeout_s", float(self.timeout))

    @property
    def deadline_s(self) -> float:
        """The longest one :meth:`OpenAIChatModel.chat` call waits for the server, seconds:
        ``(connect_timeout_s + read_timeout_s) × (retries + 1)``, plus the backoff between tries."""
        backoff = sum(min(0.5 * 2**i, 4.0) for i in range(self.retries))
        return (self.connect_timeout_s + self.read_timeout_s) * (self.retries + 1) + backoff

    def setting(self, name: str) -> str:
        """The dotted setting that controls ``name`` for this use (``llm.read_timeout_s``, or
        ``llm.judge.read_timeout_s`` beside it for a per-use config)."""
        return f"llm.{name}" + (f" (or llm.{self.use}.{name})" if self.use else "")

    @classmethod
    def from_settings(cls, llm, use: str = "") -> "ChatConfig":
        """The config of one use (``answer``, ``judge``, ``router``, ``summarizer``,
        ``reranker``; '' for ``[llm]`` itself) from :class:`citewise.settings.LLMSettings`.

        Raises:
            ChatError: no base URL or model configured.
        """
        s = llm.for_use(use) if use else llm
        if not s.base_url:
            raise ChatError(
                "no LLM endpoint configured: set llm.base_url in citewise.toml or CITEWISE_LLM_BASE_URL "
                "(e.g. http://127.0.0.1:8080/v1)"
            )
        if not s.model:
            raise ChatError("no LLM model configured: set llm.model in citewise.toml or CITEWISE_LLM_MODEL")
        return cls(
            base_url=s.base_url,
            model=s.model,
            api_key=s.api_key or None,
            temperature=s.temperature,
            connect_timeout_s=s.connect_timeout_s,
            read_timeout_s=s.read_timeout_s,
            retries=s.retries,
            max_output_tokens=s.max_output_tokens,
            max_prompt_tokens=s.max_prompt_tokens,
            context_window=s.context_window,
            stream=s.stream,
            use=use,
        )

    @classmethod
    def from_env(cls, use: str = "", **overrides) -> "ChatConfig":
        """The config of ``use`` from the settings files and environment
        (:func:`citewise.settings.load_settings`); keyword overrides win.

        Raises:
            ChatError: no base URL or model configured.
        """
        from citewise.settings import load_settings

        llm = load_settings().llm
        for key in ("base_url", "model", "api_key"):
            if overrides.get(key) is not None:
                setattr(llm, key, overrides.pop(key))
        return dataclasses.replace(cls.from_settings(llm, use), **{k: v for k, v in overrides.items() if v is not None})


@runtime_checkable
class ChatModel(Protocol):
    """Anything that completes a chat in the OpenAI wire format."""

    def chat(
        self,
        messages: Sequence[dict],
        tools: Sequence[dict] | None = None,
        tool_choice: Any = None,
        max_tokens: int | None = None,
    ) -> ChatResponse: ...


#: Share of the window :func:`document_room` keeps free (chat template, tokenizer differences).
ROOM_MARGIN = 0.10


def document_room(chat, output_tokens: int, *fixed: str) -> int:
    """Tokens of document text one request to ``chat`` can carry: its context window (the
    model's :meth:`OpenAIChatModel.context_window`, else :data:`DEFAULT_CONTEXT_WINDOW`) less
    :data:`ROOM_MARGIN` of it, the output reserve, the ``fixed`` texts (instructions, query) and 8
    tokens per text for the template; at least 0. Counts are ``o200k_base``."""
    from citewise.text.tokens import count_tokens

    window = chat.context_window() if hasattr(chat, "context_window") else DEFAULT_CONTEXT_WINDOW
    used = output_tokens + sum(count_tokens(t) + 8 for t in fixed)
    return max(0, int(window * (1 - ROOM_MARGIN)) - used)


def _with_system(messages: Sequence[dict], extra: str) -> list[dict]:
    msgs = [dict(m) for m in messages]
    if msgs and msgs[0].get("role") == "system":
        msgs[0]["content"] = f"{msgs[0].get('content') or ''}\n\n{extra}"
    else:
        msgs.insert(0, {"role": "system", "content": extra})
    return msgs


class OpenAIChatModel:
    """HTTP client for ``/chat/completions`` (see module docstring).

    Raises (from :meth:`chat`):
        ChatTimeout: no reply within a timeout; ContextOverflow: the prompt does not fit;
        ToolCallError: a tool call still malformed after the repair turn; ChatError: any other
        failure (connection, non-2xx status, a body without a message).
    """

    def __init__(
        self,
        config: ChatConfig,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.config = config
        headers = {"Content-Type": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        timeout = httpx.Timeout(
            connect=config.connect_timeout_s,
            read=config.read_timeout_s,
            write=config.read_timeout_s,
            pool=config.connect_timeout_s,
        )
        self._client = httpx.Client(
            base_url=config.base_url.rstrip("/"),
            headers=headers,
            timeout=timeout,
            transport=transport,
            verify=tls_context(),
        )
        self._sleep = sleep
        self._window: int | None = config.context_window
        self._probed = config.context_window is not None
        self.send_tool_choice = True
        self.native_tools = True

    def close(self) -> None:
        self._client.close()

    # -- context window ---------------------------------------------------------------------
    def context_window(self) -> int:
        """The model's context window, tokens: the setting, else what the server reports
        (:func:`citewise.models.serverinfo.probe_window`, asked once), else what an overflow
        error named, else :data:`DEFAULT_CONTEXT_WINDOW`."""
        if not self._probed:
            self._probed = True
            self._window = serverinfo.probe_window(self._client, self.config.base_url, self.config.model)
        return self._window or DEFAULT_CONTEXT_WINDOW

    @property
    def window_source(self) -> str:
        """Where :meth:`context_window` came from: ``setting`` | ``server`` | ``default``."""
        if self.config.context_window is not None:
            return "setting"
        return "server" if self._window else "default"

    # -- requests ---------------------------------------------------------------------------
    def _fail(self, e: Exception) -> ChatError:
        base, c = self.config.base_url, self.config
        if isinstance(e, httpx.ConnectTimeout):
            return ChatTimeout(
                f"{base}: could not connect within {c.connect_timeout_s:g} s; is the server running? "
                f"(raise {c.setting('connect_timeout_s')} for a slow network)"
            )
        if isinstance(e, httpx.TimeoutException):
            return ChatTimeout(
                f"{base}: timed out after {c.read_timeout_s:g} s without a reply (a small model on a CPU can take "
                f"minutes to read a long prompt); raise {c.setting('read_timeout_s')}, e.g. "
                f"CITEWISE_LLM_READ_TIMEOUT_S=300 or --llm-timeout 300"
            )
        if isinstance(e, httpx.ConnectError):
            return ChatError(f"{base}: cannot connect ({e}); is the server running at llm.base_url?")
        return ChatError(f"{base}: {type(e).__name__}: {e}")

    def _status_error(self, status: int, text: str) -> ChatError:
        base = self.config.base_url
        if serverinfo.is_overflow(status, text):
            window, prompt = serverinfo.overflow_window(text)
            if window and self.config.context_window is None:
                self._window, self._probed = window, True
            said = f" of {window:,} tokens" if window else ""
            return ContextOverflow(
                f"{base}: the prompt does not fit the model's context window{said}"
                f"{f' ({prompt:,} tokens sent)' if prompt else ''}; set llm.context_window "
                f"to the server's window, or lower llm.max_prompt_tokens",
                window,
                prompt,
            )
        return ChatError(f"{base}: HTTP {status}: {body_excerpt(text)}")

    def _send(self, body: dict, on_delta: Callable[[str], None] | None) -> ChatResponse:
        """One request with retries (module docstring); streaming when ``on_delta`` is given."""
        attempt = 0
        while True:
            try:
                if on_delta is not None:
                    return self._stream(body, on_delta)
                resp = self._client.post("/chat/completions", json=body)
                if resp.status_code in RETRY_STATUSES:
                    raise _Retry(resp.status_code, resp.text)
                if resp.status_code >= 400:
                    raise self._status_error(resp.status_code, resp.text)
                return self._parse(resp.text)
            except (_Retry, httpx.ConnectError, httpx.RemoteProtocolError) as e:
                if attempt >= self.config.retries:
                    if isinstance(e, _Retry):
                        raise self._status_error(e.status, e.text) from None
                    raise self._fail(e) from None
                self._sleep(min(0.5 * 2**attempt, 4.0))
                attempt += 1
            except httpx.HTTPError as e:
                raise self._fail(e) from None

    def _parse(self, text: str) -> ChatResponse:
        try:
            data = json.loads(text)
            choice = data["choices"][0]
            msg = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatError(
                f"{self.config.base_url}: response is not a chat completion: {body_excerpt(text)}"
            ) from None
        calls = [c for c in (_native_call(tc) for tc in msg.get("tool_calls") or []) if c is not None]
        return ChatResponse(
            msg.get("content"),
            calls,
            choice.get("finish_reason"),
            data.get("usage") or {},
            data,
            tool_format="tool_calls" if calls else "",
        )

    def _stream(self, body: dict, on_delta: Callable[[str], None]) -> ChatResponse:
        t0 = time.perf_counter()
        parts: list[str] = []
        first: float | None = None
        finish, usage, last = None, {}, {}
        calls: dict[int, dict] = {}
        with self._client.stream("POST", "/chat/completions", json={**body, "stream": True}) as resp:
            if resp.status_code in RETRY_STATUSES:
                resp.read()
                raise _Retry(resp.status_code, resp.text)
            if resp.status_code >= 400:
                resp.read()
                raise self._status_error(resp.status_code, resp.text)
            if "event-stream" not in resp.headers.get("content-type", "event-stream"):
                resp.read()  # a server that ignores stream=true answers with one completion
                whole = self._parse(resp.text)
                if whole.content:
                    on_delta(whole.content)
                return dataclasses.replace(
                    whole, seconds=time.perf_counter() - t0, first_token_s=time.perf_counter() - t0
                )
            for line in resp.iter_lines():
                if not line.startswith("data:"):
                    continue  # comments (": ping"), event names, blank separators
                payload = line[5:].strip()
                if payload == "[DONE]":
                    break
                try:
                    event = json.loads(payload)
                except ValueError:
                    raise ChatError(
                        f"{self.config.base_url}: a streamed event is not JSON: {body_excerpt(payload)}"
                    ) from None
                last = event
                if isinstance(event.get("error"), dict):
                    raise self._status_error(400, json.dumps(event["error"]))
                usage = event.get("usage") or usage
                for choice in event.get("choices") or []:
                    delta = choice.get("delta") or {}
                    piece = delta.get("content")
                    if piece:
                        if first is None:
                            first = time.perf_counter() - t0
                        parts.append(piece)
                        on_delta(piece)
                    for tc in delta.get("tool_calls") or []:
                        slot = calls.setdefault(tc.get("index", 0), {"id": "", "name": "", "arguments": ""})
                        fn = tc.get("function") or {}
                        slot["id"] = tc.get("id") or slot["id"]
                        slot["name"] += fn.get("name") or ""
                        slot["arguments"] += fn.get("arguments") or ""
                    finish = choice.get("finish_reason") or finish
        if not usage:
            usage = {"completion_chunks": len(parts)}
        native = [c for c in (_native_call({"id": s["id"], "function": s}) for _, s in sorted(calls.items())) if c]
        return ChatResponse(
            "".join(parts),
            native,
            finish,
            usage,
            last,
            tool_format="tool_calls" if native else "",
            seconds=time.perf_counter() - t0,
            first_token_s=first,
        )

    @traced_chat
    def chat(self, messages, tools=None, tool_choice=None, max_tokens=None, on_delta=None) -> ChatResponse:
        """One chat completion (module docstring). ``max_tokens`` defaults to
        ``max_output_tokens``; ``on_delta`` (without tools) streams the reply."""
        t0 = time.perf_counter()
        messages = list(messages)
        stream = on_delta if not tools else None
        if stream is None and self.config.stream and not tools:
            stream = _ignore
        resp = self._request(messages, tools, tool_choice, max_tokens, stream)
        if tools:
            resp = self._read_calls(messages, tools, tool_choice, max_tokens, resp)
        return dataclasses.replace(resp, seconds=time.perf_counter() - t0)

    def _body(self, messages, tools, tool_choice, max_tokens) -> dict:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": list(messages),
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_output_tokens if max_tokens is None else max_tokens,
        }
        if tools and self.native_tools:
            body["tools"] = list(tools)
            if tool_choice is not None and self.send_tool_choice:
                body["tool_choice"] = tool_choice
        elif tools:
            body["messages"] = _with_system(messages, toolcalls.prompted_tools(tools))
        return body

    def _request(self, messages, tools, tool_choice, max_tokens, on_delta) -> ChatResponse:
        """Send, leaving out ``tool_choice`` or ``tools`` once when the server refuses them."""
        for _ in range(3):
            try:
                return self._send(self._body(messages, tools, tool_choice, max_tokens), on_delta)
            except ChatError as e:
                refused = str(e).lower()
                if not tools or isinstance(e, (ContextOverflow, ChatTimeout)) or "http 4" not in refused:
                    raise
                if re.search(r"tool[_ ]choice", refused) and self.send_tool_choice and tool_choice is not None:
                    self.send_tool_choice = False
                elif re.search(r"\btools?\b|function", refused) and self.native_tools:
                    self.native_tools = False
                else:
                    raise
        raise ChatError(f"{self.config.base_url}: the server refused the tools of the request")

    def _read_calls(self, messages, tools, tool_choice, max_tokens, resp: ChatResponse) -> ChatResponse:
        """Calls from ``tool_calls`` or the reply's text; one repair turn for a malformed call."""
        if resp.tool_calls:
            return resp
        parsed = toolcalls.parse_content(resp.content, tools)
        if parsed.problem:
            turn = [
                *messages,
                {"role": "assistant", "content": resp.content or ""},
                toolcalls.repair_message(parsed.problem, tools),
            ]
            again = self._request(turn, tools, tool_choice, max_tokens, None)
            if again.tool_calls:
                return dataclasses.replace(again, repaired=True)
            second = toolcalls.parse_content(again.content, tools)
            if second.problem:
                raise ToolCallError(
                    f"{self.config.base_url}: the model's tool call could not be read, also after "
                    f"one repair turn: {second.problem}"
                )
            return _with_calls(again, second, repaired=True)
        return _with_calls(resp, parsed)


class _Retry(Exception):
    """A retryable HTTP status (internal)."""

    def __init__(self, status: int, text: str):
        super().__init__(status)
        self.status, self.text = status, text


def _ignore(_: str) -> None:
    return None


def _native_call(tc: dict) -> ToolCall | None:
    fn = tc.get("function") or {}
    if not fn.get("name"):
        return None
    raw = fn.get("arguments") or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else dict(raw)
        if not isinstance(args, dict):
            args = {}
    except (ValueError, TypeError):
        args = {}
    return ToolCall(tc.get("id") or "", fn["name"], args, raw if isinstance(raw, str) else json.dumps(raw))


def _with_calls(resp: ChatResponse, parsed: toolcalls.Parsed, repaired: bool = False) -> ChatResponse:
    if not parsed.calls:
        return dataclasses.replace(resp, repaired=repaired) if repaired else resp
    calls = [ToolCall(f"call_{i}", c.name, c.arguments, c.raw_arguments) for i, c in enumerate(parsed.calls)]
    return dataclasses.replace(
        resp, content=parsed.text or None, tool_calls=calls, tool_format=parsed.format, repaired=repaired
    )
