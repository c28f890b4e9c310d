"""The OpenAI-compatible client against a local wire-format server."""

from __future__ import annotations

import pytest

from citewise.models.chat import ChatConfig, ChatError, OpenAIChatModel

from fake_openai import FakeOpenAI


def test_chat_returns_content_and_sends_the_wire_format():
    with FakeOpenAI([{"content": "Hello there."}]) as server:
        model = OpenAIChatModel(ChatConfig(server.base_url, "m1", api_key="k"))
        resp = model.chat([{"role": "user", "content": "hi"}], max_tokens=5)
    assert resp.content == "Hello there." and resp.tool_calls == [] and resp.finish_reason == "stop"
    sent = server.requests[0]
    assert sent["model"] == "m1" and sent["messages"] == [{"role": "user", "content": "hi"}] and sent["max_tokens"] == 5


def test_chat_parses_tool_calls():
    tools = [{"type": "function", "function": {"name": "sql_query", "parameters": {"type": "object"}}}]
    with FakeOpenAI([{"tool_calls": [{"id": "c1", "name": "sql_query", "arguments": {"sql": "SELECT 1"}}]}]) as server:
        resp = OpenAIChatModel(ChatConfig(server.base_url, "m")).chat([{"role": "user", "content": "q"}], tools=tools)
    assert [(c.id, c.name, c.arguments) for c in resp.tool_calls] == [("c1", "sql_query", {"sql": "SELECT 1"})]
    assert server.requests[0]["tools"] == tools


def test_timeout_and_http_errors_raise_chat_error():
    with FakeOpenAI([{"content": "late"}], delay=1.0) as server:
        with pytest.raises(ChatError, match="timed out"):
            OpenAIChatModel(ChatConfig(server.base_url, "m", timeout=0.2)).chat([{"role": "user", "content": "q"}])
    waits: list[float] = []  # the backoff between tries (retries=1 by default: one wait of 0.5 s)
    with FakeOpenAI([{"content": "x"}], status=500) as server:
        with pytest.raises(ChatError, match="HTTP 500"):
            OpenAIChatModel(ChatConfig(server.base_url, "m"), sleep=waits.append).chat(
                [{"role": "user", "content": "q"}]
            )
    assert waits == [0.5]
    with pytest.raises(ChatError):
        OpenAIChatModel(ChatConfig("http://127.0.0.1:9", "m", timeout=2, retries=3), sleep=waits.append).chat(
            [{"role": "user", "content": "q"}]
        )
    assert waits == [0.5, 0.5, 1.0, 2.0]


def test_an_html_error_page_becomes_one_short_line():
    from citewise.models.chat import body_excerpt

    page = "<html>\n<head><style>h1 {color: red}</style></head>\n<body><h1>502 Bad Gateway</h1>\n<hr><p>nginx</p></body></html>"
    assert body_excerpt(page) == "502 Bad Gateway nginx"
    assert body_excerpt("x" * 500) == "x" * 199 + "…" and "\n" not in body_excerpt("a\n\nb")


def test_config_from_env(monkeypatch):
    monkeypatch.setenv("CITEWISE_LLM_BASE_URL", "http://localhost:8000/v1")
    monkeypatch.setenv("CITEWISE_LLM_MODEL", "qwen")
    monkeypatch.delenv("CITEWISE_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cfg = ChatConfig.from_env()
    assert (cfg.base_url, cfg.model, cfg.api_key) == ("http://localhost:8000/v1", "qwen", None)
    monkeypatch.delenv("CITEWISE_LLM_MODEL")
    with pytest.raises(ChatError, match="CITEWISE_LLM_MODEL"):
        ChatConfig.from_env()


def test_http_clients_share_one_verifying_tls_context():
    """Every client gets the process's TLS context (built once, not per client), and it verifies
    certificates and host names against a loaded CA bundle."""
    import ssl

    from citewise.models.tls import tls_context
    from citewise.retrieval.rerank import HttpReranker
    from citewise.tools.web import WebSearchTool

    clients = [
        OpenAIChatModel(ChatConfig("https://llm.example", "m"))._client,
        OpenAIChatModel(ChatConfig("http://127.0.0.1:9", "m"))._client,
        HttpReranker("https://rerank.example")._client,
        WebSearchTool("https://search.example")._client,
    ]
    assert all(c._transport._pool._ssl_context is tls_context() for c in clients)
    ctx = tls_context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname and len(ctx.get_ca_certs()) > 0
