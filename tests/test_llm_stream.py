"""Streamed LLM answers: the chat client reading server-sent events recorded from llama-cpp-python
(a slow first token, keep-alive comments), ``ask --llm --stream`` / ``--show-prompt``, and the HTTP
streams (``/v1/ask/stream``, chat completions with ``stream: true``) with the citation check on
the finished text."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from citewise.cli import app
from citewise.models.chat import ChatConfig, ChatTimeout, ContextOverflow, OpenAIChatModel
from citewise.service.app import create_app
from citewise.settings import load_settings

from conftest import write_doc
from fake_openai import FakeOpenAI
from llm_replay import ReplayServer, recording

runner = CliRunner()


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("llm-stream")
    root = tmp / "docs"
    write_doc(
        root,
        "refunds/pro.md",
        "Refunds on the Pro plan",
        "## The Pro refund rule\n\nOn Pro, you can request a refund within 30 days of the charge.\n\n"
        "Refunds go back to the card that was charged.",
    )
    write_doc(root, "exports/csv.md", "Export data to CSV", "Exports use the ISO 8601 date format.")
    res = runner.invoke(app, ["ingest", str(root), "--index", str(tmp / "index"), "--embedder", "hashing", "--json"])
    assert res.exit_code == 0, res.output
    return tmp / "index"


def events(text: str) -> list[tuple[str, dict | str]]:
    """``(event name, data)`` of a server-sent event stream (name '' when unnamed)."""
    out = []
    for block in text.strip().split("\n\n"):
        name, data = "", ""
        for line in block.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data = line[5:].strip()
        out.append((name, data if data == "[DONE]" else json.loads(data)))
    return out


def test_a_recorded_stream_is_read_piece_by_piece():
    rec = recording("stream_slow_first_token")
    pieces: list[str] = []
    with ReplayServer(rec["exchanges"]) as server:
        r = OpenAIChatModel(ChatConfig(server.base_url, "local")).chat(
            [{"role": "user", "content": "q"}], on_delta=pieces.append
        )
    sent = [
        json.loads(line[5:])["choices"][0]["delta"].get("content")
        for _, chunk in rec["exchanges"][0]["chunks"]
        for line in chunk.splitlines()
        if line.startswith("data:") and "[DONE]" not in line
    ]
    assert pieces == [p for p in sent if p] and r.content == "".join(pieces) and r.content.strip()
    assert r.finish_reason == "stop" and server.requests[0]["stream"] is True


def test_a_slow_first_token_times_out_naming_the_setting_and_a_longer_timeout_waits():
    rec = recording("stream_slow_first_token")
    first = rec["exchanges"][0]["chunks"][0][0]  # seconds the real server took to send anything
    assert first > 5
    speed = 0.5 / first  # replayed faster: the first piece comes after about 0.5 s
    with ReplayServer(rec["exchanges"], speed=speed) as server:
        with pytest.raises(
            ChatTimeout, match=r"timed out after 0.1 s .*raise llm.read_timeout_s \(or llm.answer.read_timeout_s\)"
        ):
            OpenAIChatModel(ChatConfig(server.base_url, "local", read_timeout_s=0.1, retries=0, use="answer")).chat(
                [{"role": "user", "content": "q"}], on_delta=lambda t: None
            )
        r = OpenAIChatModel(ChatConfig(server.base_url, "local", read_timeout_s=30, retries=0)).chat(
            [{"role": "user", "content": "q"}], on_delta=lambda t: None
        )
    assert r.content and r.first_token_s >= 0.25


def test_a_context_overflow_is_learned_and_answered_once_with_a_smaller_prompt(index):
    from citewise.answer.generators import LLMGenerator
    from citewise.index import Index

    over = recording("context_overflow_400")["exchanges"][0]
    body = "".join(c for _, c in over["chunks"])
    message = json.loads(body)["error"]["message"]
    window = int(message.split("maximum context length is ")[1].split()[0])
    sent = int(message.split("(")[1].split(" in the messages")[0])  # the recorded prompt's size, server's count
    reply = {
        "request": None,
        "status": 200,
        "content_type": "application/json",
        "chunks": [
            [
                0.1,
                json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "local",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {
                                    "role": "assistant",
                                    "content": "You can request a refund within 30 days of the charge [1].",
                                },
                            }
                        ],
                        "usage": {"prompt_tokens": 300, "completion_tokens": 14, "total_tokens": 314},
                    }
                ),
            ]
        ],
    }
    question = "How long do I have to request a refund on Pro?"

    def ask(exchanges):
        with ReplayServer(exchanges) as server:
            model = OpenAIChatModel(ChatConfig(server.base_url, "local", retries=0))
            gen = LLMGenerator(model, 512, units=Index.open(index).answerer().units)
            return Index.open(index).ask(question, generator=gen), model

    first, _ = ask([reply])
    counted = first.llm["prompt_tokens_counted"]  # this test's first prompt, by citewise's tokenizer
    # the recorded 400 answered a longer prompt; its count is set to this test's prompt as a server
    # whose tokenizer counts 10% more would give it, so the retry is sized as against that server
    server_count = counted * 11 // 10
    body = body.replace(f"{sent} in the messages", f"{server_count} in the messages")
    ans, model = ask([{**over, "chunks": [[over["chunks"][0][0], body]]}, reply])
    assert ans.outcome == "answered" and ans.citations[0].doc_id == "refunds/pro"
    assert model.context_window() == window and ans.llm["tries"] == 2
    assert "context window of 2,048 tokens" in ans.llm["overflow"] and ans.llm["overflow_server"] == server_count
    assert ans.llm["overflow_counted"] == counted
    assert ans.llm["budget"]["context_window"] == window * counted // server_count
    assert ans.llm["budget"]["window_source"] == "overflow"
    with ReplayServer([over]) as server:
        with pytest.raises(ContextOverflow) as e:
            OpenAIChatModel(ChatConfig(server.base_url, "local", retries=0)).chat([{"role": "user", "content": "q"}])
    assert e.value.context_window == window and e.value.prompt_tokens == sent > window


def stream_exchange(text: str) -> dict:
    """A streamed reply in llama-cpp-python's event format (as recorded), carrying ``text``."""
    base = recording("stream_slow_first_token")["exchanges"][0]
    head = {"id": "chatcmpl-x", "model": "local", "created": 0, "object": "chat.completion.chunk"}
    chunks = [
        [
            0.0,
            "data: "
            + json.dumps({**head, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
            + "\r\n\r\n",
        ]
    ]
    for word in text.split(" "):
        chunks.append(
            [
                0.0,
                "data: "
                + json.dumps(
                    {**head, "choices": [{"index": 0, "delta": {"content": word + " "}, "finish_reason": None}]}
                )
                + "\r\n\r\n",
            ]
        )
    chunks.append(
        [
            0.0,
            "data: "
            + json.dumps({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            + "\r\n\r\n",
        ]
    )
    chunks.append([0.0, "data: [DONE]\r\n\r\n"])
    return {**base, "chunks": chunks}


REPLY = "You can request a refund within 30 days of the charge [1]. Refunds arrive within 2 hours."


def test_ask_streams_the_model_then_prints_the_checked_answer(index):
    with ReplayServer([stream_exchange(REPLY)]) as server:
        res = runner.invoke(
            app,
            [
                "ask",
                "How long do I have to request a refund on Pro?",
                "--index",
                str(index),
                "--llm",
                "--llm-url",
                server.base_url,
                "--llm-model",
                "local",
                "--llm-context",
                "2048",
                "--stream",
                "--show-prompt",
            ],
        )
    assert res.exit_code == 0, res.output
    out = res.stdout
    streamed = out.index(REPLY.split(" [1]")[0])
    checked = out.index("checked answer")
    prompt = out.index("prompt: ")
    final = out.index("You can request a refund within 30 days of the charge. [doc:refunds/pro]")
    assert streamed < checked < prompt < final
    assert "window 2,048 (setting): 256 output" in out and "[system]" in out and "[1] Refunds on the Pro plan" in out
    assert (
        "Note: Withdrawn 1 sentence of the model's answer that no source supports: \u201cRefunds arrive within 2 hours.\u201d"
        in out
    )
    assert server.requests[0]["model"] == "local" and server.requests[0]["stream"] is True


def test_ask_flags_reach_the_settings(index):
    with FakeOpenAI([{"content": "I have no document on this."}]) as server:
        res = runner.invoke(
            app,
            [
                "ask",
                "How long do I have to request a refund on Pro?",
                "--index",
                str(index),
                "--llm",
                "--llm-url",
                server.base_url,
                "--llm-model",
                "m2",
                "--llm-timeout",
                "5",
                "--json",
            ],
        )
    data = json.loads(res.stdout)
    assert data["outcome"] == "abstained" and data["reason"]["code"] == "model_abstained"
    assert data["llm"]["messages"][0]["role"] == "system" and data["llm"]["prompt_tokens"] > 0
    assert server.requests[0]["model"] == "m2" and data["notes"] == []


def app_with_llm(index, base_url):
    s = load_settings(
        index,
        {"llm.base_url": base_url, "llm.model": "local", "llm.context_window": 2048, "answer.generator": "llm"},
        env={},
    )
    return create_app(index, rate=0, settings=s)


def test_http_streams_send_the_model_text_then_the_checked_answer(index):
    with ReplayServer([stream_exchange(REPLY)] * 2) as server:
        with TestClient(app_with_llm(index, server.base_url)) as c:
            ask = c.post("/v1/ask/stream", json={"question": "How long do I have to request a refund on Pro?"})
            chat = c.post(
                "/v1/chat/completions",
                json={
                    "model": "citewise",
                    "stream": True,
                    "messages": [{"role": "user", "content": "How long do I have to request a refund on Pro?"}],
                },
            )
    got = events(ask.text)
    deltas = "".join(d["text"] for name, d in got if name == "delta")
    assert deltas.strip() == REPLY and got[-1][0] == "answer"
    answer = got[-1][1]
    assert answer["answer"] == "You can request a refund within 30 days of the charge. [doc:refunds/pro]"
    assert answer["outcome"] == "partial" and answer["dropped_sentences"] == ["Refunds arrive within 2 hours."]
    chunks = events(chat.text)
    assert chunks[-1] == ("", "[DONE]")
    text = "".join(d["choices"][0]["delta"].get("content") or "" for _, d in chunks[:-1] if isinstance(d, dict))
    assert text.startswith(REPLY) and text.endswith(
        "[citation check] Withdrawn 1 sentence of the model's answer that no source supports: "
        "\u201cRefunds arrive within 2 hours.\u201d."
    )
    last = chunks[-2][1]
    assert last["choices"][0]["finish_reason"] == "stop" and last["withdrawn"] == ["Refunds arrive within 2 hours."]
    assert last["citations"][0]["doc_id"] == "refunds/pro" and last["outcome"] == "partial"
