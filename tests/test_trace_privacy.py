"""Traces never carry question text unless the capture flag is set (issue 35): a real
``citewise serve`` exporting by OTLP/HTTP to a local collector, the web page's ``/?q=`` and
``/v1/ask`` with a question naming an unknown name (its abstention reason holds the name)."""

from __future__ import annotations

import os
import time

import httpx
import pytest

from citewise.index import Index

from conftest import write_doc
from svc_server import Server
from test_telemetry import _Collector

SECRET = "Zorblaxian"
QUESTION = f"What is the marmalade allowance of {SECRET}?"


@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    write_doc(root, "refunds.md", "Refund policy", "Refunds are paid within 30 days of a request.")
    idx = Index.open(tmp_path_factory.mktemp("idx"), embedder="hashing")
    assert idx.ingest(root).added == 1
    return idx


def _spans(bodies):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    return [
        s
        for _, body in bodies
        for rs in ExportTraceServiceRequest.FromString(body).resource_spans
        for ss in rs.scope_spans
        for s in ss.spans
    ]


def _attrs(span) -> dict:
    return {a.key: a.value.string_value or a.value.int_value for a in span.attributes}


def _path(span) -> str:
    """The request path of a server span (``http.target`` / ``url.path``, without its query)."""
    a = _attrs(span)
    return str(a.get("url.path") or a.get("http.target") or "").split("?")[0]


def _serve_and_ask(index, capture: bool):
    env_before = dict(os.environ)
    with _Collector() as collector:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{collector.server.server_address[1]}"
        os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "100"  # export each batch after 0.1 s, not 5 s
        if capture:
            os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
        else:
            os.environ.pop("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", None)
        try:
            server = Server(index.path)
        finally:
            os.environ.clear()
            os.environ.update(env_before)
        try:
            page = httpx.get(server.url + "/", params={"q": QUESTION}, timeout=60)
            assert page.status_code == 200 and "No answer" in page.text
            api = httpx.post(server.url + "/v1/ask", json={"question": QUESTION}, timeout=60).json()
            # the reason names a word of the question (the trace must not, without the flag)
            assert api["outcome"] == "abstained" and any(w in api["reason"]["text"] for w in (SECRET, "marmalade"))
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not {"/", "/v1/ask"} <= {
                _path(s) for s in _spans(collector.bodies) if s.kind == s.SPAN_KIND_SERVER
            }:
                time.sleep(0.2)
        finally:
            server.stop()
    return collector.bodies


def test_no_question_text_in_traces_without_the_capture_flag(small_index):
    bodies = _serve_and_ask(small_index, capture=False)
    spans = _spans(bodies)
    server = [s for s in spans if s.kind == s.SPAN_KIND_SERVER]
    assert {_path(s) for s in server} >= {"/", "/v1/ask"}
    page = next(s for s in server if _path(s) == "/")
    assert _attrs(page)["http.url"].endswith("/?q=REDACTED")
    assert {"invoke_workflow answer"} <= {s.name for s in spans}
    for _, body in bodies:  # nowhere in what reached the collector: attributes, events, names
        assert SECRET.encode() not in body and b"marmalade" not in body


def test_the_capture_flag_records_the_question(small_index):
    spans = _spans(_serve_and_ask(small_index, capture=True))
    page = next(s for s in spans if s.kind == s.SPAN_KIND_SERVER and _path(s) == "/")
    assert any(SECRET in str(v) for v in _attrs(page).values())
