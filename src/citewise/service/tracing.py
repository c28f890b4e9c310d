"""The HTTP service's server spans: one ``SERVER`` span per request (OpenTelemetry's ASGI
instrumentation: method, route, status, duration), parent of the ask / search spans, when traces
are exported (:func:`citewise.telemetry.configure`). Query strings in its URL attributes are
redacted unless content capture is on (:mod:`citewise.trace_privacy`); the request and response
bodies are never recorded."""

from __future__ import annotations


def add_server_spans(app) -> bool:
    """Wrap ``app`` (FastAPI / Starlette, before it starts) in the ASGI instrumentation's
    middleware when a tracer provider is installed; returns whether it did. Without tracing
    configured the service gets no middleware (no per-request cost)."""
    from opentelemetry import trace

    if type(trace.get_tracer_provider()).__name__ in ("ProxyTracerProvider", "NoOpTracerProvider"):
        return False
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

    # one span per request: no spans of their own for the body's receive/send events
    app.add_middleware(OpenTelemetryMiddleware, exclude_spans=["receive", "send"])
    return True
