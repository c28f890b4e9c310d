"""Span attribute names, the tracer, OTLP export configuration and the span helpers of
:mod:`citewise.telemetry`."""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping


if TYPE_CHECKING:
    from opentelemetry import trace


# Attribute names (GenAI semantic conventions; the incubating constants module warns of moves, so
# the strings are spelled here).
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_TOP_K = "gen_ai.request.top_k"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
EMBEDDINGS_DIMENSION = "gen_ai.embeddings.dimension.count"
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
DATA_SOURCE_ID = "gen_ai.data_source.id"
WORKFLOW_NAME = "gen_ai.workflow.name"
RETRIEVAL_QUERY = "gen_ai.retrieval.query.text"
ERROR_TYPE = "error.type"
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_SCORE = "gen_ai.evaluation.score.value"
EVALUATION_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"

#: Environment switch for recording question and document text (off by default).
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

_SCOPE = "citewise"

#: Seconds one OTLP export request (retries included) may take unless
#: ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` / ``OTEL_EXPORTER_OTLP_TIMEOUT`` say otherwise. The SDK's
#: default is 10 s with retries backing off 1, 2, 4 s, which kept a command ~7-11 s on an
#: unreachable collector; a collector on the same network answers in milliseconds.
EXPORT_TIMEOUT_S = 1.0
#: Seconds the process exit waits for the last batch beyond the export timeout.
EXIT_GRACE_S = 0.25
#: Seconds after a failed export during which spans are dropped without trying the collector (a
#: long-running ``serve`` resumes exporting when the collector is back).
RETRY_AFTER_S = 30.0
#: The exporter's logger (its retry and failure lines); :class:`GuardedExporter` reports instead.
_EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"
_lock = threading.Lock()
_configured: str | None = None


def _api():
    # Imported on first use: a CLI command that opens no span does not pay the ~10 ms import.
    from opentelemetry import trace

    return trace


_global_tracer = None
_provider = None  # set by use_provider(): citewise's spans go there instead of the global provider


def tracer() -> trace.Tracer:
    """citewise's tracer from the global tracer provider (the API's no-op one unless configured),
    or from the provider given to :func:`use_provider`.

    A provider installed later (:func:`configure`) is used from then on.
    """
    global _global_tracer
    if _provider is not None:
        return _provider.get_tracer(_SCOPE)
    if _global_tracer is None:  # the API's proxy tracer follows a provider installed later
        _global_tracer = _api().get_tracer(_SCOPE)
    return _global_tracer


def use_provider(provider) -> None:
    """Send citewise's spans to ``provider`` (an SDK ``TracerProvider``) instead of the global
    one; None goes back to the global provider. For tests and for applications that keep
    citewise's traces apart; the global provider can be set only once per process."""
    global _provider
    _provider = provider


def capture_content() -> bool:
    """Whether spans may record question and document text (:data:`CAPTURE_CONTENT_ENV`)."""
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in ("1", "true", "yes")


def otlp_endpoint() -> str | None:
    """The OTLP endpoint from the environment (traces-specific variable first), or None."""
    return os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None


def _export_timeout() -> float:
    """Seconds per export: ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`` or ``OTEL_EXPORTER_OTLP_TIMEOUT``
    when set to a positive number (the Python exporter reads them in seconds), else
    :data:`EXPORT_TIMEOUT_S`."""
    raw = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    try:
        value = float(raw) if raw else EXPORT_TIMEOUT_S
    except ValueError:
        value = EXPORT_TIMEOUT_S
    return value if value > 0 else EXPORT_TIMEOUT_S


def _traces_url(endpoint: str | None) -> str:
    """The URL spans are posted to: an explicit base URL gets ``/v1/traces`` appended (unless it
    ends with it); else ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as it is, or
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces`` (the OTLP exporter's rules)."""
    if endpoint:
        return endpoint if endpoint.rstrip("/").endswith("/v1/traces") else endpoint.rstrip("/") + "/v1/traces"
    traces = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    if traces:
        return traces
    return os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").rstrip("/") + "/v1/traces"


def _cause(error: BaseException | None, timeout: float) -> str:
    """A short cause for an export failure: the innermost OS error's text (``Connection
    refused``, ``Name or service not known``), a timeout, or the exception's class."""
    seen, x = set(), error
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        if isinstance(x, TimeoutError) or "Timeout" in type(x).__name__:
            return f"no answer within {timeout:g} s"
        if isinstance(x, OSError) and x.strerror:
            return x.strerror
        x = (
            x.__cause__
            or x.__context__
            or getattr(x, "reason", None)
            or next((a for a in getattr(x, "args", ()) if isinstance(a, BaseException)), None)
        )
    return type(error).__name__ if error is not None else "export failed"


def _recording_session():
    """A ``requests.Session`` that remembers the first failure of the exporter's requests since
    ``last_failure`` was last reset to None (the exception, or ``"HTTP 404 Not Found"`` for a
    status >= 400); given to the exporter through its public ``session`` argument so the warning
    can name the cause. The first, not the latest: the OTLP exporter (1.45) retries a refused
    connection after a backoff that can overrun its deadline and then sends ``timeout=0``, which
    ``requests`` rejects with a ValueError that says nothing about the collector."""
    import requests

    class Session(requests.Session):
        last_failure: str | BaseException | None = None

        def request(self, *args, **kwargs):
            try:
                response = super().request(*args, **kwargs)
            except BaseException as e:
                if self.last_failure is None:
                    self.last_failure = e
                raise
            if response.status_code >= 400 and self.last_failure is None:
                self.last_failure = f"HTTP {response.status_code} {response.reason or ''}".strip()
            return response

    return Session()


class GuardedExporter:
    """A span exporter wrapper (the SDK's ``SpanExporter`` interface: ``export``, ``shutdown``,
    ``force_flush``) that reports a failing collector in one stderr line and stops trying it for a
    while.

    Args:
        exporter: the OTLP exporter (its ``session`` from :func:`_recording_session`, for the cause).
        endpoint: the URL named in the warning.
        timeout: the exporter's request timeout, seconds (for the cause of a timeout).
        session: the exporter's session (reads ``last_failure``), or None.
        retry_after: seconds after a failure during which ``export`` fails at once.
        stream: where the warning goes (default ``sys.stderr`` at the time of the warning).

    A failure prints ``warning: traces not exported to URL: CAUSE; spans dropped`` once per outage
    (the next :attr:`retry_after` seconds of spans are dropped without a connection attempt); the
    first success after an outage prints ``traces: URL answers again``.
    """

    def __init__(
        self,
        exporter,
        endpoint: str,
        timeout: float,
        session=None,
        retry_after: float = RETRY_AFTER_S,
        stream=None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.exporter, self.endpoint, self.timeout = exporter, endpoint, timeout
        self.session, self.retry_after, self.stream, self.clock = session, retry_after, stream, clock
        self.down_until: float | None = None  # clock time before which exports are skipped
        self.outage = False
        self.dropped = 0  # spans not delivered (failed or skipped)

    def _say(self, line: str) -> None:
        try:
            print(line, file=self.stream or sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - a closed stderr at exit must not raise in the SDK's thread
            pass

    def export(self, spans):
        from opentelemetry.sdk.trace.export import SpanExportResult

        if self.down_until is not None and self.clock() < self.down_until:
            self.dropped += len(spans)
            return SpanExportResult.FAILURE
        if self.session is not None:
            self.session.last_failure = None
        try:
            result = self.exporter.export(spans)
            failure = (
                None
                if result == SpanExportResult.SUCCESS
                else (getattr(self.session, "last_failure", None) or "export failed")
            )
        except Exception as e:  # noqa: BLE001 - reported, never raised into the SDK's worker thread
            result, failure = SpanExportResult.FAILURE, e
        if failure is None:
            if self.outage:
                self._say(f"traces: {self.endpoint} answers again")
            self.down_until, self.outage = None, False
            return result
        self.dropped += len(spans)
        self.down_until = self.clock() + self.retry_after
        if not self.outage:
            self.outage = True
            cause = failure if isinstance(failure, str) else _cause(failure, self.timeout)
            self._say(f"warning: traces not exported to {self.endpoint}: {cause}; spans dropped")
        return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporter.force_flush(timeout_millis)


def _shutdown_within(provider, seconds: float) -> None:
    """Flush and shut ``provider`` down at exit, waiting at most ``seconds`` (the SDK's own exit
    hook waits up to 30 s; ``BatchSpanProcessor.shutdown`` takes no timeout). The work runs in a
    daemon thread, so an export still hanging after ``seconds`` does not hold the process."""
    worker = threading.Thread(target=provider.shutdown, name="citewise-otel-shutdown", daemon=True)
    try:
        worker.start()
    except RuntimeError:  # no new threads this late in interpreter shutdown: the export timeout bounds it
        provider.shutdown()
        return
    worker.join(seconds)


def configure(endpoint: str | None = None, service_name: str = "citewise") -> bool:
    """Export spans by OTLP/HTTP when an endpoint is given or set in the environment, and to an
    OTLP/JSON lines file when ``CITEWISE_TRACES_FILE`` names one (:mod:`citewise.telemetry_file`;
    what ``citewise decide latency`` reads).

    Args:
        endpoint: an OTLP/HTTP base URL (``http://collector:4318``; ``/v1/traces`` is appended
            unless the URL already ends with it). None: :func:`otlp_endpoint`.
        service_name: ``service.name`` of the resource (``OTEL_SERVICE_NAME`` wins).

    Returns:
        True when an exporter is installed (now or by an earlier call), False when tracing stays
        a no-op. Calling it again is harmless. A tracer provider installed by someone else
        (``opentelemetry-instrument``) is left alone.
    """
    global _configured
    url, path = endpoint or otlp_endpoint(), os.environ.get("CITEWISE_TRACES_FILE")
    if not url and not path:
        return _configured is not None
    with _lock:
        if _configured is not None:
            return True
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        timeout = _export_timeout()
        from citewise.trace_privacy import RedactingExporter

        # shutdown_on_exit=False: the SDK's exit hook would wait up to 30 s for the last batch
        provider = TracerProvider(
            resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or service_name}),
            shutdown_on_exit=False,
        )
        if url:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            session = _recording_session()
            # the full signal URL (the exporter does not append /v1/traces to an explicit endpoint); it
            # still reads the other OTEL_EXPORTER_OTLP_* variables (headers, TLS, compression) itself
            url = _traces_url(endpoint)
            exporter = OTLPSpanExporter(endpoint=url, timeout=timeout, session=session)
            logging.getLogger(_EXPORTER_LOGGER).addFilter(lambda record: False)  # GuardedExporter reports
            # query strings (the web page's ?q=question) redacted unless content capture is on
            provider.add_span_processor(
                BatchSpanProcessor(GuardedExporter(RedactingExporter(exporter, capture_content), url, timeout, session))
            )
        if path:
            from citewise.telemetry_file import FileSpanExporter

            provider.add_span_processor(BatchSpanProcessor(RedactingExporter(FileSpanExporter(path), capture_content)))
        atexit.register(_shutdown_within, provider, timeout + EXIT_GRACE_S)
        _api().set_tracer_provider(provider)
        _configured = url or path
        return True


def set_attributes(span: trace.Span, attributes: Mapping[str, Any]) -> None:
    """Set the non-None ``attributes`` on a recording ``span`` (no work for a no-op span)."""
    if span.is_recording():
        span.set_attributes({k: v for k, v in attributes.items() if v is not None})


def evaluation_event(
    name: str,
    score: float | None = None,
    label: str | None = None,
    explanation: str | None = None,
    span: trace.Span | None = None,
) -> None:
    """Add a ``gen_ai.evaluation.result`` event to ``span`` (default: the current span).

    Args:
        name: what was evaluated (``evidence_score``, ``citation_check``, ``faithfulness``).
        score: the numeric result, if any.
        label: the verdict in words (``pass`` / ``fail``, ``sufficient`` / ``insufficient``).
        explanation: why, when known.
    """
    span = span or _api().get_current_span()
    if not span.is_recording():
        return
    attrs: dict[str, Any] = {EVALUATION_NAME: name}
    if score is not None:
        attrs[EVALUATION_SCORE] = float(score)
    if label is not None:
        attrs[EVALUATION_LABEL] = label
    if explanation:
        attrs[EVALUATION_EXPLANATION] = explanation[:500]
    span.add_event(EVALUATION_EVENT, attrs)


@contextmanager
def operation(operation_name: str, target: str | None, **attributes: Any) -> Iterator[trace.Span]:
    """A span named ``"{operation_name} {target}"`` with ``gen_ai.operation.name`` set.

    Exceptions propagate; the span records them and gets ``error.type`` (the exception class).
    """
    name = f"{operation_name} {target}" if target else operation_name
    with tracer().start_as_current_span(name) as span:
        if span.is_recording():
            set_attributes(span, {OPERATION: operation_name, **attributes})
        try:
            yield span
        except BaseException as e:
            if span.is_recording():
                span.set_attribute(ERROR_TYPE, type(e).__qualname__)
            raise
