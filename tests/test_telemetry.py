"""OpenTelemetry spans (GenAI semantic conventions): names, parent/child structure, attributes and
evaluation events for a retrieving ask, a record question that calls a tool, an LLM ask against
the local fake OpenAI server and a judge; the no-op default; OTLP/HTTP export from the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from citewise import telemetry
from fake_openai import FakeOpenAI

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def spans():
    """Route citewise's spans to an in-memory exporter for one test; yields the exporter."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.use_provider(provider)
    try:
        yield exporter
    finally:
        telemetry.use_provider(None)
        provider.shutdown()


def by_name(finished, name):
    found = [s for s in finished if s.name == name]
    assert found, f"no span {name!r} in {[s.name for s in finished]}"
    return found


def children(finished, parent):
    return [s for s in finished if s.parent is not None and s.parent.span_id == parent.context.span_id]


def events(span, name):
    return {
        e.attributes["gen_ai.evaluation.name"]: dict(e.attributes)
        for e in span.events
        if e.name == "gen_ai.evaluation.result" and e.attributes["gen_ai.evaluation.name"] == name
    }


def test_no_provider_means_non_recording_spans_and_configure_without_endpoint_installs_nothing(monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    assert telemetry.configure() is False
    with telemetry.tracer().start_as_current_span("x") as span:
        assert not span.is_recording()
        telemetry.evaluation_event("evidence_score", 0.5, "sufficient")  # no-op, no error


def test_ask_that_retrieves(sample_index, spans):
    ans = sample_index.ask("How long do I have to request a refund on the Pro plan?")
    assert ans.outcome == "answered"
    finished = spans.get_finished_spans()
    (root,) = by_name(finished, "invoke_workflow answer")
    assert root.parent is None
    assert root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert root.attributes["gen_ai.workflow.name"] == "answer"
    assert root.attributes["citewise.answer.outcome"] == "answered"
    assert root.attributes["citewise.answer.citations"] == len(ans.citations) >= 1
    (shipped,) = by_name(finished, "retrieval shipped")
    assert shipped.parent.span_id == root.context.span_id
    assert shipped.attributes["gen_ai.operation.name"] == "retrieval"
    assert shipped.attributes["gen_ai.data_source.id"] == "shipped"
    # ask searches once, deep enough for the chunks deeper_hits may add (Answerer.deep_k = 30);
    # the first 5 are the retrieved hits
    assert shipped.attributes["gen_ai.request.top_k"] == 30
    assert shipped.attributes["citewise.retrieval.hits"] >= len(ans.retrieved_ids) == 5
    # hybrid fusion: one BM25 and one dense candidate list under the shipped retriever
    assert sorted(s.name for s in children(finished, shipped)) == ["retrieval bm25", "retrieval dense"]
    (dense,) = by_name(finished, "retrieval dense")
    emb = [
        s for s in by_name(finished, "embeddings all-MiniLM-L6-v2-int8") if s.parent.span_id == dense.context.span_id
    ]
    assert len(emb) == 1  # the question, embedded once for the dense search
    assert emb[0].attributes["gen_ai.operation.name"] == "embeddings"
    assert emb[0].attributes["gen_ai.request.model"] == "all-MiniLM-L6-v2-int8"
    assert emb[0].attributes["gen_ai.embeddings.dimension.count"] == 384
    assert emb[0].attributes["citewise.embeddings.inputs"] == 1
    # question text is not recorded by default
    assert all("gen_ai.retrieval.query.text" not in s.attributes for s in finished)
    ev = events(root, "evidence_score")["evidence_score"]
    assert ev["gen_ai.evaluation.score.value"] == pytest.approx(ans.best_score)
    assert ev["gen_ai.evaluation.score.label"] == "sufficient"
    check = events(root, "citation_check")["citation_check"]
    assert check["gen_ai.evaluation.score.value"] == 0.0 and check["gen_ai.evaluation.score.label"] == "pass"
    # every span belongs to the ask's trace
    assert {s.context.trace_id for s in finished} == {root.context.trace_id}


def test_abstention_is_an_insufficient_evidence_event(sample_index, spans):
    ans = sample_index.ask("What is the capital of France?")
    assert ans.outcome == "abstained"
    (root,) = by_name(spans.get_finished_spans(), "invoke_workflow answer")
    assert root.attributes["citewise.answer.outcome"] == "abstained"
    # the reason's code, never its fields (they can hold the question's words)
    assert root.attributes["citewise.answer.abstain_reason"] == ans.reason.code.value != ""
    ev = events(root, "evidence_score")["evidence_score"]
    assert ev["gen_ai.evaluation.score.label"] == "insufficient"
    assert ev["gen_ai.evaluation.explanation"] == ans.reason.code.value
    assert not events(root, "citation_check")  # nothing was generated, nothing checked


def test_content_capture_records_the_query(sample_index, spans, monkeypatch):
    monkeypatch.setenv(telemetry.CAPTURE_CONTENT_ENV, "true")
    hits = sample_index.search("refund window", k=3, retriever="bm25")
    (span,) = by_name(spans.get_finished_spans(), "retrieval bm25")
    assert span.attributes["gen_ai.retrieval.query.text"] == "refund window"
    assert list(span.attributes["citewise.retrieval.chunk_ids"]) == [h.chunk_id for h in hits]


def test_record_question_calls_a_tool(sample_index, db_path, spans):
    from citewise.tools.pipeline import route_and_answer

    ans = route_and_answer("What is the status of invoice 2041?", sample_index, db=str(db_path))
    assert ans is not None and ans.tool_calls[0]["tool"] == "invoice_status"
    finished = spans.get_finished_spans()
    (root,) = by_name(finished, "invoke_workflow route")
    assert root.parent is None and root.attributes["citewise.route"] == "records"
    assert root.attributes["citewise.answer.tool_calls"] == 1
    (tool,) = by_name(finished, "execute_tool invoice_status")
    assert tool.parent.span_id == root.context.span_id
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "invoice_status"
    assert tool.attributes["gen_ai.tool.type"] == "function"
    assert tool.attributes["citewise.tool.rows"] == ans.tool_calls[0]["rows"] == 1
    assert "error.type" not in tool.attributes


def test_tool_error_observation_sets_error_type(tools, spans):
    obs = tools.call("sql_query", {"sql": "SELECT 1; DROP TABLE invoices"})
    assert "error" in obs
    (tool,) = by_name(spans.get_finished_spans(), "execute_tool sql_query")
    assert tool.attributes["error.type"] == "tool_error"
    assert tool.attributes["citewise.tool.error"] == obs["error"]


def test_llm_ask_has_a_chat_span_with_model_and_token_usage(sample_index, spans):
    from citewise.answer.generators import LLMGenerator
    from citewise.models.chat import ChatConfig, OpenAIChatModel

    def script(body):
        assert "<<<source-" in body["messages"][1]["content"]  # numbered sources: [1] is the first
        return {
            "content": "Refunds on Pro can be requested within 30 days [1].",
            "usage": {"prompt_tokens": 812, "completion_tokens": 17, "total_tokens": 829},
        }

    with FakeOpenAI(script) as server:
        gen = LLMGenerator(OpenAIChatModel(ChatConfig(server.base_url, "qwen-test", temperature=0.0)))
        ans = sample_index.ask("How long do I have to request a refund on the Pro plan?", generator=gen)
        port = int(server.base_url.split(":")[2].split("/")[0])
    assert ans.generator == "llm" and ans.outcome == "answered"
    finished = spans.get_finished_spans()
    (root,) = by_name(finished, "invoke_workflow answer")
    (chat,) = by_name(finished, "chat qwen-test")
    assert chat.parent.span_id == root.context.span_id
    a = chat.attributes
    assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.provider.name"] == "openai"
    assert a["gen_ai.request.model"] == "qwen-test" and a["gen_ai.response.model"] == "qwen-test"
    assert a["gen_ai.response.id"] == "chatcmpl-test"
    assert list(a["gen_ai.response.finish_reasons"]) == ["stop"]
    assert a["gen_ai.usage.input_tokens"] == 812 and a["gen_ai.usage.output_tokens"] == 17
    assert a["server.address"] == "127.0.0.1" and a["server.port"] == port
    assert root.attributes["citewise.answer.generator"] == "llm"
    assert events(root, "citation_check")["citation_check"]["gen_ai.evaluation.score.label"] == "pass"


def test_failed_chat_span_has_error_type(spans):
    from citewise.models.chat import ChatConfig, ChatError, OpenAIChatModel

    with FakeOpenAI([{"content": "x"}], status=500) as server:
        with pytest.raises(ChatError):
            OpenAIChatModel(ChatConfig(server.base_url, "m"), sleep=lambda s: None).chat(
                [{"role": "user", "content": "q"}]
            )
    (chat,) = by_name(spans.get_finished_spans(), "chat m")
    assert chat.attributes["error.type"] == "ChatError"
    assert chat.status.status_code.name == "ERROR"


def test_judge_verdict_is_an_evaluation_event(spans):
    from citewise.answer.judges import LLMFaithfulnessJudge
    from citewise.models.chat import ChatConfig, OpenAIChatModel

    reply = json.dumps({"faithful": False, "unsupported_claims": ["Refunds take 90 days."]})
    with FakeOpenAI([{"content": reply}]) as server:
        verdict = LLMFaithfulnessJudge(OpenAIChatModel(ChatConfig(server.base_url, "judge-m"))).judge(
            "How long?", "Refunds take 90 days.", ["Refunds within 30 days."]
        )
    assert not verdict.passed
    finished = spans.get_finished_spans()
    (span,) = by_name(finished, "evaluate faithfulness")
    ev = events(span, "faithfulness")["faithfulness"]
    assert ev["gen_ai.evaluation.score.value"] == 0.0 and ev["gen_ai.evaluation.score.label"] == "fail"
    assert ev["gen_ai.evaluation.explanation"] == "Refunds take 90 days."
    (chat,) = by_name(finished, "chat judge-m")
    assert chat.parent.span_id == span.context.span_id


class _Collector:
    """A local OTLP/HTTP endpoint: keeps the body of every POST /v1/traces."""

    def __init__(self):
        self.bodies: list[tuple[str, bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.bodies.append((self.path, body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def test_cli_exports_spans_by_otlp_when_the_endpoint_is_set(sample_index):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    with _Collector() as collector:
        env = {
            **os.environ,
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.server.server_address[1]}",
            "OTEL_SERVICE_NAME": "citewise-test",
            "PYTHONPATH": str(REPO / "src"),
        }
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "citewise.cli",
                "ask",
                "How long do I have to request a refund on the Pro plan?",
                "--index",
                str(sample_index.path),
                "--json",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["outcome"] == "answered"
    names, services = [], set()
    for path, body in collector.bodies:
        assert path == "/v1/traces"
        req = ExportTraceServiceRequest.FromString(body)
        for rs in req.resource_spans:
            services |= {a.value.string_value for a in rs.resource.attributes if a.key == "service.name"}
            names += [s.name for ss in rs.scope_spans for s in ss.spans]
    assert services == {"citewise-test"}
    assert {
        "invoke_workflow route",
        "invoke_workflow answer",
        "retrieval shipped",
        "retrieval bm25",
        "retrieval dense",
    } <= set(names)


def test_agent_tool_calls_in_worker_threads_stay_in_the_agent_trace(spans):
    from citewise.models.chat import ChatConfig, OpenAIChatModel
    from citewise.tools.agent import Agent
    from citewise.tools.base import FunctionTool

    empty = {"type": "object", "properties": {}}
    tools = [FunctionTool(n, f"tool {n}", empty, lambda: {"ok": True}) for n in ("a", "b")]
    script = [{"tool_calls": [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}]}, {"content": "done"}]
    with FakeOpenAI(script) as server:
        result = Agent(OpenAIChatModel(ChatConfig(server.base_url, "m")), tools).run("two things")
    assert result.stopped == "answered"
    finished = spans.get_finished_spans()
    (root,) = by_name(finished, "invoke_agent citewise")
    assert root.parent is None and root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["citewise.agent.iterations"] == 2
    under = sorted(s.name for s in children(finished, root))
    assert under == ["chat m", "chat m", "execute_tool a", "execute_tool b"]


def _closed_port() -> int:
    """A local port nothing listens on (connections are refused)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_EXIT_WAIT_SCRIPT = """
import sys, time
from citewise import telemetry
assert telemetry.configure(sys.argv[1])
with telemetry.tracer().start_as_current_span("x"):
    pass
print(time.time(), flush=True)
"""


@pytest.mark.parametrize("kind", ["refused", "silent"])
def test_unreachable_collector_exits_with_one_warning(kind):
    """The SDK's defaults (10 s timeout, retries backing off 1, 2, 4 s) kept a process ~7 s at exit
    on a refused port and printed four log lines; now the exit waits at most the 1 s export timeout
    (+ 0.25 s grace: bench/otlp_unreachable.py measures it) and says so in one line. ``silent``: a
    port that accepts the connection (the kernel's backlog) but never answers, like a collector
    behind a dead proxy."""
    import socket

    from citewise import telemetry

    listener = None
    if kind == "refused":
        port = _closed_port()
    else:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        run = subprocess.run(
            [sys.executable, "-c", _EXIT_WAIT_SCRIPT, url],
            env={**env, "PYTHONPATH": str(REPO / "src")},
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        if listener is not None:
            listener.close()
    assert run.returncode == 0, run.stderr
    # the bound on the exit wait is configuration, not a stopwatch: a 1 s export timeout plus the grace
    assert telemetry._export_timeout() == 1.0 and telemetry.EXIT_GRACE_S == 0.25
    cause = "Connection refused" if kind == "refused" else "no answer within 1 s"
    assert run.stderr.splitlines() == [f"warning: traces not exported to {url}/v1/traces: {cause}; spans dropped"]


def test_cli_with_unreachable_collector_prints_one_warning_line(sample_index):
    url = f"http://127.0.0.1:{_closed_port()}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        "PYTHONPATH": str(REPO / "src"),
    }
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "citewise.cli",
            "search",
            "refund window",
            "--retriever",
            "bm25",
            "--k",
            "2",
            "--index",
            str(sample_index.path),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert len(json.loads(run.stdout)["hits"]) == 2
    assert run.stderr.splitlines() == [
        f"warning: traces not exported to {url}/v1/traces: Connection refused; spans dropped"
    ]


def test_guarded_exporter_warns_once_per_outage_and_skips_the_collector_meanwhile():
    import io

    from opentelemetry.sdk.trace.export import SpanExportResult

    class Flaky:
        def __init__(self):
            self.calls, self.up = 0, False

        def export(self, spans):
            self.calls += 1
            if not self.up:
                raise ConnectionRefusedError(111, "Connection refused")
            return SpanExportResult.SUCCESS

    now = [100.0]
    inner, stream = Flaky(), io.StringIO()
    g = telemetry.GuardedExporter(
        inner, "http://c:4318/v1/traces", 1.0, retry_after=30.0, stream=stream, clock=lambda: now[0]
    )
    assert g.export([1, 2, 3]) == SpanExportResult.FAILURE and inner.calls == 1
    now[0] += 29.9
    assert g.export([4]) == SpanExportResult.FAILURE and inner.calls == 1  # inside retry_after: not tried
    now[0] += 0.2
    assert g.export([5]) == SpanExportResult.FAILURE and inner.calls == 2  # tried again, still down: no new line
    inner.up = True
    now[0] += 30.0
    assert g.export([6]) == SpanExportResult.SUCCESS and inner.calls == 3
    assert g.dropped == 5
    assert stream.getvalue().splitlines() == [
        "warning: traces not exported to http://c:4318/v1/traces: Connection refused; spans dropped",
        "traces: http://c:4318/v1/traces answers again",
    ]


def test_the_warning_names_the_first_failure_of_an_export_not_the_sdks_retry_artifact():
    """The OTLP exporter (1.45) retries a refused connection after a 0.8-1.2 s backoff and, when
    the backoff overran its 1 s deadline, sends the retry with ``timeout=0``, which ``requests``
    rejects with a ValueError. CI hit it under load: the warning said ``ValueError`` instead of
    ``Connection refused``. The same two requests, made through the exporter's real session."""
    import io

    import requests
    from opentelemetry.sdk.trace.export import SpanExportResult

    session = telemetry._recording_session()
    url = f"http://127.0.0.1:{_closed_port()}/v1/traces"

    class RetriesLate:
        def export(self, spans):
            for timeout in (1.0, 0.0):  # the first attempt, then the retry past the deadline
                try:
                    session.request("POST", url, data=b"x", timeout=timeout)
                except (requests.RequestException, ValueError):
                    pass
            return SpanExportResult.FAILURE

    stream = io.StringIO()
    g = telemetry.GuardedExporter(RetriesLate(), url, 1.0, session=session, stream=stream)
    assert g.export([1]) == SpanExportResult.FAILURE
    assert stream.getvalue().splitlines() == [
        f"warning: traces not exported to {url}: Connection refused; spans dropped"
    ]


def test_export_timeout_comes_from_the_environment_when_set(monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TIMEOUT", raising=False)
    assert telemetry._export_timeout() == telemetry.EXPORT_TIMEOUT_S == 1.0
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2.5")
    assert telemetry._export_timeout() == 2.5
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "4")
    assert telemetry._export_timeout() == 4.0
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "soon")
    assert telemetry._export_timeout() == 1.0
