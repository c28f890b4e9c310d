"""Question text stays out of traces unless content capture is on.

:class:`RedactingExporter` wraps the exporter that :func:`citewise.telemetry.configure`
installs: every span it exports (the HTTP server span of :mod:`citewise.service.tracing`, or one
made by any other instrumentation in the process, whenever it set its attributes) has every value
in the query string of ``url.query``, ``url.full``, ``http.target`` and ``http.url`` replaced by
``REDACTED`` (``/?q=REDACTED``; the OpenTelemetry HTTP conventions' word for it), unless
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``. The web page's
``/?q=...``, ``/search?q=...`` would otherwise carry the question to the collector. Citewise's own
spans record a reason's code, never its fields (which can hold a question's words).
"""

from __future__ import annotations

import copy
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

#: Span attributes that may hold a URL's query string.
QUERY_ATTRIBUTES = ("url.query", "url.full", "http.target", "http.url")


def redact_query(value: str, whole_url: bool) -> str:
    """``value`` with each query parameter's value replaced by ``REDACTED`` (``whole_url``: a
    URL or target with a path; else a bare query string).

    >>> redact_query("/?q=secret+words&k=5", True), redact_query("q=secret", False)
    ('/?q=REDACTED&k=REDACTED', 'q=REDACTED')
    """
    if not whole_url:
        return urlencode([(k, "REDACTED") for k, _ in parse_qsl(value, keep_blank_values=True)], safe="")
    parts = urlsplit(value)
    if not parts.query:
        return value
    return urlunsplit(parts._replace(query=redact_query(parts.query, False)))


def redacted(span):
    """``span`` (an SDK ``ReadableSpan``), or a copy of it whose query attributes are redacted."""
    attrs = span.attributes or {}
    fixed = {
        k: redact_query(attrs[k], k != "url.query")
        for k in QUERY_ATTRIBUTES
        if isinstance(attrs.get(k), str) and attrs[k]
    }
    fixed = {k: v for k, v in fixed.items() if v != attrs[k]}
    if not fixed:
        return span
    out = copy.copy(span)
    out._attributes = {**attrs, **fixed}  # the SDK's ReadableSpan keeps them there (read-only property)
    return out


class RedactingExporter:
    """A span exporter that exports ``redacted`` copies of the spans through ``inner`` (see
    module docstring) unless ``capture()`` says content capture is on; ``shutdown`` and
    ``force_flush`` go to ``inner``."""

    def __init__(self, inner, capture):
        self.inner, self.capture = inner, capture

    def export(self, spans):
        return self.inner.export(spans if self.capture() else [redacted(s) for s in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)
