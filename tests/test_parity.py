"""One ask pipeline: the same question gives the same outcome, answer, reason and citations
through the Python API, the CLI, the HTTP API and the MCP server (each front end only renders
what :class:`citewise.api.Citewise` returns)."""

from __future__ import annotations

import json

import anyio
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from citewise.api import AskOptions, Citewise
from citewise.core import Principal
from citewise.service.payloads import answer_json

#: (question, groups): a document answer, a restricted one (anonymous and as its group), an
#: out-of-scope abstention, an unknown name, a record question, a "both" question.
QUESTIONS = [
    ("How long do I have to request a refund on the Pro plan?", ()),
    ("Who has to approve a $20,000 refund for an Enterprise customer?", ()),
    ("Who has to approve a $20,000 refund for an Enterprise customer?", ("finance",)),
    ("What is the capital of France?", ()),
    ("How do I configure the Stripe webhook?", ()),
    ("What is the status of invoice 2041?", ()),
    ("Has customer C-1002 exceeded the daily limit on 2026-11-20?", ()),
]


def _same(payload: dict) -> dict:
    """What must agree across front ends (timings differ)."""
    return {
        "answer": payload["answer"],
        "outcome": payload["outcome"],
        "reason": payload["reason"],
        "citations": payload["citations"],
        "tool_calls": payload["tool_calls"],
        "used_ids": payload["used_ids"],
        "markers": payload["markers"],
    }


@pytest.fixture(scope="module")
def python_answers(sample_index):
    cw = Citewise.open(sample_index.path)
    return [_same(answer_json(cw.ask(q, Principal("p", g)))) for q, g in QUESTIONS]


def test_the_set_covers_each_kind_of_outcome(python_answers):
    outcomes = [a["outcome"] for a in python_answers]
    assert outcomes[0] == "answered" and python_answers[0]["citations"]
    assert outcomes[1] == "answered" and not any(
        c["doc_id"].startswith("internal/") for c in python_answers[1]["citations"]
    )
    assert any(c["doc_id"] == "internal/finance/refund-approval-matrix" for c in python_answers[2]["citations"])
    assert outcomes[3] == "abstained" and python_answers[3]["reason"]["code"]
    assert python_answers[4]["reason"]["code"] == "unknown_name"
    assert python_answers[5]["tool_calls"][0]["tool"] == "invoice_status"
    assert python_answers[6]["tool_calls"] and any(
        c["doc_id"].startswith("help/") for c in python_answers[6]["citations"]
    )


def test_cli_gives_the_python_answers(sample_index, python_answers):
    from citewise.cli import app

    for (q, groups), expected in zip(QUESTIONS, python_answers):
        args = ["ask", q, "--index", str(sample_index.path), "--json"] + [a for g in groups for a in ("--as", g)]
        run = CliRunner().invoke(app, args)
        assert run.exit_code == 0, run.output
        assert _same(json.loads(run.stdout)) == expected, q


def test_http_gives_the_python_answers(sample_index, python_answers):
    from citewise.service.app import create_app
    from citewise.service.auth import KeyStore

    keys = KeyStore(sample_index.path)
    finance = keys.add("parity-finance", ("finance",))
    with TestClient(create_app(sample_index.path, rate=0)) as client:
        for (q, groups), expected in zip(QUESTIONS, python_answers):
            headers = {"Authorization": f"Bearer {finance}"} if groups else {}
            r = client.post("/v1/ask", json={"question": q}, headers=headers)
            assert r.status_code == 200, r.text
            assert _same(r.json()) == expected, q


def test_mcp_gives_the_python_answers(sample_index, python_answers):
    from mcp import Client

    from citewise.service.mcp import create_server

    cw = Citewise.open(sample_index.path)

    async def main():
        for (q, groups), expected in zip(QUESTIONS, python_answers):
            async with Client(create_server(lambda: cw, Principal("p", groups))) as client:
                result = await client.call_tool("ask", {"question": q})
                assert not result.is_error, result.content
                assert _same(result.structured_content) == expected, q

    anyio.run(main)


def test_options_reach_the_pipeline(sample_index):
    cw = Citewise.open(sample_index.path)
    q = QUESTIONS[0][0]
    one = cw.ask(q, options=AskOptions(k=1))
    assert len(one.retrieved_ids) == 1
    scoped = cw.ask(q, options=AskOptions(scope=("help/refunds",)))
    assert "controller" in scoped.evidence and all(c.doc_id.startswith("help/refunds") for c in scoped.citations)
    assert cw.ask("What is the status of invoice 2041?", options=AskOptions(route=False)).tool_calls == []


def test_options_give_the_same_answer_on_every_front_end(sample_index):
    """Retriever, metadata filters (here a built-in date), scope and an evidence-gap limit: the same
    JSON from Python, the CLI, the HTTP API and the MCP server."""
    from mcp import Client

    from citewise.cli import app
    from citewise.metadata import parse_filters
    from citewise.core import Filters
    from citewise.service.app import create_app
    from citewise.service.mcp import create_server

    q = QUESTIONS[0][0]
    cw = Citewise.open(sample_index.path)
    expected = _same(
        answer_json(
            cw.ask(
                q,
                options=AskOptions(
                    retriever="hybrid",
                    filters=Filters(metadata=parse_filters(["updated>=2026-01-01"])),
                    scope=("help/refunds",),
                    max_rounds=1,
                ),
            )
        )
    )
    assert expected["outcome"] != "abstained" and expected["markers"]
    run = CliRunner().invoke(
        app,
        [
            "ask",
            q,
            "--index",
            str(sample_index.path),
            "--json",
            "--retriever",
            "hybrid",
            "--filter",
            "updated>=2026-01-01",
            "--scope",
            "help/refunds",
            "--max-rounds",
            "1",
        ],
    )
    assert run.exit_code == 0, run.output
    assert _same(json.loads(run.stdout)) == expected
    body = {
        "question": q,
        "retriever": "hybrid",
        "filters": ["updated>=2026-01-01"],
        "scope": ["help/refunds"],
        "max_rounds": 1,
    }
    with TestClient(create_app(sample_index.path, rate=0)) as client:
        assert _same(client.post("/v1/ask", json=body).json()) == expected

    async def main():
        async with Client(create_server(lambda: cw)) as client:
            result = await client.call_tool("ask", body)
            assert not result.is_error, result.content
            assert _same(result.structured_content) == expected

    anyio.run(main)
