"""The MCP server, driven by the official SDK's own client: ``citewise mcp`` over stdio in a
subprocess, and the Streamable HTTP endpoint mounted on a bare Starlette app served by uvicorn on a
free port. Real sample-corpus answers, read-only annotations, the permission probe set."""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner

from citewise.core import Principal
from test_permissions import ADVERSARIAL, GROUP_OF, K

REPO = Path(__file__).resolve().parents[1]
REFUND_Q = "Can I get a refund after 20 days on the Pro plan?"
RESTRICTED_Q = "Who has to approve a $20,000 refund for an Enterprise customer?"


def restricted(doc_id: str) -> str | None:
    return next((g for prefix, g in GROUP_OF.items() if doc_id.startswith(prefix + "/")), None)


@asynccontextmanager
async def stdio_session(index_dir, *extra):
    """A ClientSession to ``citewise mcp --index DIR *extra`` in a subprocess."""
    from mcp import ClientSession, StdioServerParameters  # here: the mcp import is most of collection
    from mcp.client.stdio import stdio_client

    env = {"PYTHONPATH": str(REPO / "src"), "HOME": os.environ.get("HOME", "/root")}
    for key in ("CITEWISE_CACHE", "XDG_CACHE_HOME"):
        if key in os.environ:
            env[key] = os.environ[key]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "citewise.cli", "mcp", "--index", str(index_dir), *extra], env=env
    )
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


async def call(session, name, **arguments) -> dict:
    result = await session.call_tool(name, arguments)
    assert not result.is_error, result.content
    # the text content carries the same JSON for clients that ignore structured content
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def cli_json(*args) -> dict:
    from citewise.cli import app

    run = CliRunner().invoke(app, list(args))
    assert run.exit_code == 0, run.output
    return json.loads(run.stdout)


def test_stdio_tools_list_call_and_permissions(sample_index, db_path):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from test_telemetry import _Collector

    collector = _Collector().__enter__()
    otlp = f"http://127.0.0.1:{collector.server.server_address[1]}"

    async def main():
        async with stdio_session(sample_index.path, "--db", str(db_path), "--otlp", otlp) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"search", "ask", "query_records"}
            for t in tools.values():
                a = t.annotations
                assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (
                    True,
                    False,
                    True,
                    False,
                )
                assert t.output_schema["type"] == "object"
            assert tools["search"].input_schema["required"] == ["query"]
            assert tools["search"].input_schema["properties"]["retriever"]["enum"] == [
                "shipped",
                "hybrid",
                "bm25",
                "dense",
                "hybrid-prf",
                "hierarchical",
                "tuned",
                "raptor-collapsed",
                "raptor-tree",
            ]
            assert tools["ask"].input_schema["properties"]["question"]["maxLength"] == 2000
            assert tools["query_records"].input_schema["required"] == ["question"]

            # search: the right document first, the same JSON as `citewise search --json`
            found = await call(s, "search", query="E-1004", k=5)
            assert found["hits"][0]["doc_id"] == "errors/E-1004" and found["hits"][0]["stage"] == "pinned"
            assert found == cli_json("search", "E-1004", "--k", "5", "--json", "--index", str(sample_index.path))
            hit = found["hits"][0]
            source = (REPO / "src/citewise/sample/corpus/errors/E-1004.md").read_text(encoding="utf-8")
            assert (
                hit["snippet_end"] > hit["snippet_start"] and source[hit["snippet_start"] : hit["snippet_end"]].strip()
            )

            # ask: cited answer, the same JSON as `citewise ask --json` (timings aside)
            ans = await call(s, "ask", question=REFUND_Q)
            # a conditional question ("after 20 days on the Pro plan") goes through the evidence-gap
            # controller, whose checks are all found: docs/answers.md, outcome "supported"; which
            # sentences it quotes is the controller's (tests/test_evidence_gap.py)
            assert ans["outcome"] == "supported" and "[doc:help/refunds/refunds-pro]" in ans["answer"]
            assert [c["doc_id"] for c in ans["citations"]] == ["help/refunds/refunds-pro"]
            assert (ans["citations"][0]["version"], ans["citations"][0]["updated"]) == ("3", "2026-09-14")
            cli = cli_json("ask", REFUND_Q, "--json", "--index", str(sample_index.path))
            assert {k: v for k, v in ans.items() if k != "timings"} == {k: v for k, v in cli.items() if k != "timings"}
            out = await call(s, "ask", question="What is the refund policy of Stripe?")
            assert out["outcome"] == "abstained" and out["abstain_reason"] == "unknown name: Stripe"

            # query_records: a record question goes to the guarded record tool
            rec = await call(s, "query_records", question="What is the status of invoice 2041?")
            assert rec["outcome"] == "answered"
            assert [(c["tool"], c["arguments"], c["rows"], c["error"]) for c in rec["tool_calls"]] == [
                ("invoice_status", {"invoice_id": 2041}, 1, None)
            ]
            assert rec["answer"].endswith("[tool:invoice_status]") and "2041" in rec["answer"]
            doc = await call(s, "query_records", question=REFUND_Q)
            assert (
                doc["outcome"] == "abstained"
                and doc["tool_calls"] == []
                and "not a record question" in doc["abstain_reason"]
            )

            # errors are tool errors, not crashes
            bad = await s.call_tool("search", {"query": "refund", "as_of": "2026-02-30"})
            assert bad.is_error and "not a date" in bad.content[0].text
            long = await s.call_tool("ask", {"question": "x" * 2001})
            assert long.is_error
            # no letter or digit: refused as the CLI and the HTTP API refuse it (it returned hits)
            for tool, field in (("search", "query"), ("ask", "question")):
                noise = await s.call_tool(tool, {field: "!!! ???"})
                assert noise.is_error and noise.content[0].text.endswith(
                    f": '{field}' has no letters or digits; give the words to search for"
                )

            # the anonymous principal never sees a restricted chunk (the permission probe set)
            for q in ADVERSARIAL:
                hits = (await call(s, "search", query=q, k=K))["hits"]
                assert len(hits) == K and [h["chunk_id"] for h in hits if restricted(h["doc_id"])] == [], q
            anon = await call(s, "ask", question=RESTRICTED_Q)
            assert not any(restricted(i) for i in anon["retrieved_ids"] + anon["context_ids"] + anon["used_ids"])
            assert not any(restricted(c["doc_id"]) for c in anon["citations"])

        async with stdio_session(sample_index.path, "--groups", "finance") as s:
            fin = await call(s, "ask", question=RESTRICTED_Q)
            assert fin["citations"][0]["doc_id"] == "internal/finance/refund-approval-matrix"
            assert "VP of Sales sign-off and Financial Controller approval" in fin["answer"]
            for q in ADVERSARIAL[:10]:  # finance sees its own documents, never support's or security's
                hits = (await call(s, "search", query=q, k=K))["hits"]
                assert all(restricted(h["doc_id"]) in (None, "finance") for h in hits), q

    try:
        anyio.run(main)
    finally:
        collector.__exit__(None, None, None)
    # --otlp: the first server exported its spans when its client closed it
    names = [
        s.name
        for path, body in collector.bodies
        for rs in ExportTraceServiceRequest.FromString(body).resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ]
    assert {
        "invoke_workflow answer",
        "retrieval shipped",
        "execute_tool invoice_status",
        "invoke_workflow route",
    } <= set(names)


def test_cli_mcp_without_an_index_is_one_line_error(tmp_path):
    import subprocess

    run = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "mcp", "--index", str(tmp_path / "none")],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2
    assert (
        run.stderr.strip()
        == f"error: {tmp_path / 'none'}: no index here yet; run 'citewise ingest PATH --index {tmp_path / 'none'}' first"
    )


# -- Streamable HTTP mounted on a bare Starlette app ---------------------------------------------
class Caller:
    """A host app's caller record (what a service's auth returns): the principal and more."""

    def __init__(self, principal, admin=False):
        self.principal, self.admin = principal, admin


TOKENS = {"tok-finance": Caller(Principal("alice", ("finance",))), "tok-public": Principal("bob", ())}


def authenticate(request):
    from starlette.exceptions import HTTPException

    from citewise.core import CitewiseError

    header = request.headers.get("authorization", "")
    if not header:
        return None  # anonymous
    token = header.removeprefix("Bearer ")
    if token == "tok-suspended":
        raise HTTPException(403, "key suspended")
    if token not in TOKENS:
        raise CitewiseError("invalid API key")  # a host auth error type, answered as 401
    return TOKENS[token]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def http_server(sample_index, db_path):
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from citewise.api import Citewise
    from citewise.service.mcp import mount

    lent = []
    cw = Citewise(sample_index)

    @contextmanager
    def pool_use():  # a pool lending a handle per call
        lent.append(1)
        yield cw

    app = Starlette(routes=[Route("/healthz", lambda request: PlainTextResponse("ok"))])
    mount(app, pool_use, authenticate, db=str(db_path), host="127.0.0.1")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", lent
    server.should_exit = True
    thread.join(10)


@asynccontextmanager
async def http_session(url, token=None):
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as client:
        async with streamable_http_client(url + "/mcp", http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def test_streamable_http_mount_uses_the_host_apps_auth(http_server):
    import httpx

    http_server, lent = http_server

    # the host app's other routes still answer; a bad key is refused before MCP sees the request
    assert httpx.get(http_server + "/healthz").text == "ok"
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    refused = httpx.post(
        http_server + "/mcp",
        json=init,
        headers={"Authorization": "Bearer nope", "Accept": "application/json, text/event-stream"},
    )
    assert refused.status_code == 401 and refused.json() == {"detail": "invalid API key"}
    assert refused.headers["www-authenticate"] == "Bearer"
    suspended = httpx.post(
        http_server + "/mcp",
        json=init,
        headers={"Authorization": "Bearer tok-suspended", "Accept": "application/json, text/event-stream"},
    )
    assert suspended.status_code == 403 and suspended.json() == {"detail": "key suspended"}

    async def main():
        async with http_session(http_server, "tok-finance") as s:
            assert {t.name for t in (await s.list_tools()).tools} == {"search", "ask", "query_records"}
            fin = await call(s, "ask", question=RESTRICTED_Q)
            assert fin["citations"][0]["doc_id"] == "internal/finance/refund-approval-matrix"
            rec = await call(s, "query_records", question="What is the status of invoice 2041?")
            assert rec["tool_calls"][0]["tool"] == "invoice_status" and rec["tool_calls"][0]["rows"] == 1
        for token in (None, "tok-public"):  # anonymous and a key without the group
            async with http_session(http_server, token) as s:
                anon = await call(s, "ask", question=RESTRICTED_Q)
                assert not any(restricted(i) for i in anon["retrieved_ids"] + anon["context_ids"])
                for q in ADVERSARIAL[:12]:
                    hits = (await call(s, "search", query=q, k=K))["hits"]
                    assert len(hits) == K and not any(restricted(h["doc_id"]) for h in hits), q
                top = (await call(s, "search", query="E-1004", k=3))["hits"][0]
                assert top["doc_id"] == "errors/E-1004"

    anyio.run(main)
    assert len(lent) == 2 + 2 * (1 + 12 + 1)  # one handle lent per tool call


def test_as_principal_takes_principal_like_objects_and_refuses_others():
    from types import SimpleNamespace

    from citewise.service.mcp import as_principal

    assert as_principal(None) == Principal()
    assert as_principal(Principal("a", ("hr",))) == Principal("a", ("hr",))
    assert as_principal(SimpleNamespace(name="key-7", groups=["finance", "support"])) == Principal(
        "key-7", ("finance", "support")
    )
    assert as_principal(SimpleNamespace(principal=Principal("key:ci", ("hr",)), admin=True)) == Principal(
        "key:ci", ("hr",)
    )
    with pytest.raises(TypeError, match="returned str, not a Principal or None"):
        as_principal("finance")


def test_stdio_principal_from_an_api_key_and_a_revoked_key_refused(sample_index, tmp_path):
    import subprocess

    from citewise.service.auth import KeyStore

    keys = KeyStore(sample_index.path)
    fin = keys.add("mcp-test-finance", ("finance",))
    old = keys.add("mcp-test-old", ("finance",))
    keys.revoke("mcp-test-old")

    async def main():
        async with stdio_session(sample_index.path, "--api-key", fin) as s:
            ans = await call(s, "ask", question=RESTRICTED_Q)
            assert ans["citations"][0]["doc_id"] == "internal/finance/refund-approval-matrix"

    anyio.run(main)
    run = subprocess.run(
        [sys.executable, "-m", "citewise.cli", "mcp", "--index", str(sample_index.path), "--api-key", old],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2 and run.stderr.strip() == "error: invalid API key", run.stderr
    keys.revoke("mcp-test-finance")
