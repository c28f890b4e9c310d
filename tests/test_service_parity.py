"""HTTP and MCP at parity with the CLI through the one ask pipeline (issue 35): every retriever,
metadata filters, scope and evidence options give the same JSON from ``citewise ... --json``,
``POST /v1/...`` and the MCP tools; MCP resources for documents and chunks are permission-checked;
the MCP server has a version; OpenAPI documents the bearer scheme, typed bodies and errors."""

from __future__ import annotations

import json

import anyio
import pytest
from fastapi.testclient import TestClient

from citewise.index import Index
from citewise.service.app import create_app
from citewise.service.auth import KeyStore

from conftest import write_doc
from test_mcp import call, cli_json, stdio_session


@pytest.fixture(scope="module")
def meta_index(tmp_path_factory):
    """Four documents with front matter metadata (one readable by 'exec' only), hashing embedder,
    and an API key of group exec."""
    root = tmp_path_factory.mktemp("docs")
    write_doc(
        root,
        "policies/refunds.md",
        "Refund policy",
        "Refunds are paid within 30 days of a request. Refunds over 5,000 USD need the controller's approval.",
        department="finance",
        year=2025,
        tags=["refunds", "billing"],
    )
    write_doc(
        root,
        "policies/travel.md",
        "Travel policy",
        "Travel refunds are paid within 10 days.",
        department="hr",
        year=2023,
        tags=["travel"],
    )
    write_doc(
        root,
        "policies/old-refunds.md",
        "Old refund policy",
        "Refunds were paid within 60 days.",
        department="finance",
        year=2019,
        tags=["refunds"],
    )
    write_doc(
        root,
        "board/budget.md",
        "Board budget",
        "Refunds budget is 2 million USD this year.",
        department="finance",
        year=2025,
        permissions=["exec"],
    )
    idx = Index.open(tmp_path_factory.mktemp("meta-index"), embedder="hashing")
    assert idx.ingest(root).added == 4
    key = KeyStore(idx.path).add("board", ("exec",))
    return idx, key


@pytest.fixture(scope="module")
def client(meta_index):
    idx, _ = meta_index
    with TestClient(create_app(idx.path, rate=0)) as c:
        yield c


def _same(a: dict, b: dict) -> None:
    assert {k: v for k, v in a.items() if k != "timings"} == {k: v for k, v in b.items() if k != "timings"}


def test_search_and_ask_options_are_the_same_on_cli_http_and_mcp(meta_index, client):
    idx, _ = meta_index
    folder = str(idx.path)
    cli_search = cli_json(
        "search",
        "refunds paid",
        "--retriever",
        "hybrid-prf",
        "--filter",
        "department=finance",
        "--filter",
        "year>=2020",
        "--json",
        "--index",
        folder,
    )
    assert [h["doc_id"] for h in cli_search["hits"]] == ["policies/refunds"]
    hit = cli_search["hits"][0]
    assert hit["metadata"] == {"department": "finance", "tags": ["refunds", "billing"], "year": 2025}
    assert hit["text"].startswith("# Refund policy") and hit["heading_path"] == ["Refund policy"]
    assert hit["groups"] == ["public"] and hit["text"][hit["snippet_start"] - hit["start"] :].startswith(hit["snippet"])
    http_search = client.post(
        "/v1/search",
        json={"query": "refunds paid", "retriever": "hybrid-prf", "filters": ["department=finance", "year>=2020"]},
    ).json()
    assert http_search.pop("principal") == "anonymous" and http_search == cli_search

    scope_args = ["--scope", "policies/", "--max-rounds", "1", "--budget-tokens", "2000"]
    cli_ask = cli_json(
        "ask",
        "How long do refunds take to be paid?",
        *scope_args,
        "--filter",
        "tags=refunds",
        "--json",
        "--index",
        folder,
    )
    assert cli_ask["outcome"] in ("supported", "gap", "not_established") and "controller" in cli_ask
    assert {c["doc_id"] for c in cli_ask["citations"]} <= {"policies/refunds", "policies/old-refunds"}
    http_ask = client.post(
        "/v1/ask",
        json={
            "question": "How long do refunds take to be paid?",
            "scope": ["policies/"],
            "max_rounds": 1,
            "budget_tokens": 2000,
            "filters": ["tags=refunds"],
        },
    ).json()
    _same(http_ask, cli_ask)

    async def main():
        async with stdio_session(idx.path) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            props = tools["ask"].input_schema["properties"]
            assert {"filters", "scope", "max_rounds", "deadline_ms", "budget_tokens", "retriever"} <= set(props)
            _same(
                await call(
                    s,
                    "search",
                    query="refunds paid",
                    retriever="hybrid-prf",
                    filters=["department=finance", "year>=2020"],
                ),
                cli_search,
            )
            _same(
                await call(
                    s,
                    "ask",
                    question="How long do refunds take to be paid?",
                    scope=["policies/"],
                    max_rounds=1,
                    budget_tokens=2000,
                    filters=["tags=refunds"],
                ),
                cli_ask,
            )
            bad = await s.call_tool("search", {"query": "refunds", "filters": ["year>=soon"]})
            assert bad.is_error and "a range needs a number or a YYYY-MM-DD date" in bad.content[0].text

    anyio.run(main)


def test_bad_filter_is_one_clear_400(client):
    r = client.post("/v1/search", json={"query": "refunds", "filters": ["year>=soon"]})
    assert r.status_code == 400 and r.json()["error"]["message"] == (
        "filters 'year>=soon': a range needs a number or a YYYY-MM-DD date, got 'soon'"
    )
    r = client.post("/v1/ask", json={"question": "refunds?", "retriever": "nope"})
    assert r.status_code == 422 and "retriever" in r.json()["error"]["message"]


def test_openai_vector_store_filters_reach_metadata(client):
    body = {
        "query": "refunds paid",
        "filters": {
            "type": "and",
            "filters": [
                {"type": "eq", "key": "department", "value": "finance"},
                {"type": "lt", "key": "year", "value": 2020},
            ],
        },
    }
    data = client.post("/v1/vector_stores/default/search", json=body).json()["data"]
    assert [d["file_id"] for d in data] == ["policies/old-refunds"]


def test_mcp_resources_are_permission_checked_and_the_server_has_a_version(meta_index):
    from citewise.version import version

    idx, key = meta_index

    async def main():
        async with stdio_session(idx.path) as s:
            templates = {t.uri_template for t in (await s.list_resource_templates()).resource_templates}
            assert templates == {"citewise://documents/{+doc_id}", "citewise://chunks/{+chunk_id}"}
            doc = json.loads((await s.read_resource("citewise://documents/policies/refunds")).contents[0].text)
            assert doc["title"] == "Refund policy" and "within 30 days" in doc["text"]
            assert doc["chunks"][0]["chunk_id"] == "policies/refunds#refund-policy"
            chunk = json.loads(
                (await s.read_resource("citewise://chunks/policies/refunds%23refund-policy")).contents[0].text
            )
            assert chunk["metadata"]["department"] == "finance" and chunk["doc_id"] == "policies/refunds"
            for uri in (
                "citewise://documents/board/budget",
                "citewise://chunks/board/budget%23board-budget",
                "citewise://documents/nope",
            ):
                with pytest.raises(Exception, match="visible to you"):
                    await s.read_resource(uri)
        async with stdio_session(idx.path, "--api-key", key) as s:
            board = json.loads((await s.read_resource("citewise://documents/board/budget")).contents[0].text)
            assert "2 million USD" in board["text"]

    anyio.run(main)
    # the server says its version at initialize
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from citewise.service.mcp import create_server; "
            "print(create_server(lambda: None)._lowlevel_server.version)",
        ],
        capture_output=True,
        text=True,
    )
    assert out.stdout.strip() == version() != ""
