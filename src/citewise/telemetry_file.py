"""Spans as OTLP/JSON lines: written by :class:`FileSpanExporter`, read by :func:`read_spans`.

One line per export batch, each a JSON ``ExportTraceServiceRequest`` as the OTLP/JSON encoding
writes it (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): ids in lowercase
hex, times as decimal strings of Unix nanoseconds::

    {"resourceSpans": [{"resource": {"attributes": [...]}, "scopeSpans": [{"scope": {"name": "citewise"},
      "spans": [{"traceId": "…", "spanId": "…", "parentSpanId": "…", "name": "chat qwen",
                 "startTimeUnixNano": "…", "endTimeUnixNano": "…", "attributes": [...]}]}]}]}

This is also what the OpenTelemetry Collector's ``file`` exporter writes (its default JSON
format), so spans that went to a collector can be read the same way. ``citewise`` writes such a
file when ``CITEWISE_TRACES_FILE`` is set (:func:`citewise.telemetry.configure`).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from citewise.core import InputError


@dataclass(frozen=True)
class SpanRecord:
    """One span read back: ids (hex), name, times (Unix ns) and attributes."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """Duration, seconds."""
        return (self.end_ns - self.start_ns) / 1e9


def _value(v: Any) -> dict:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, (list, tuple)):
        return {"arrayValue": {"values": [_value(x) for x in v]}}
    return {"stringValue": str(v)}


def _attrs(attributes) -> list[dict]:
    return [{"key": k, "value": _value(v)} for k, v in (attributes or {}).items()]


def encode(spans) -> dict:
    """OTLP/JSON ``ExportTraceServiceRequest`` of SDK ``ReadableSpan`` objects."""
    by_resource: dict[int, tuple[Any, list]] = {}
    for s in spans:
        by_resource.setdefault(id(s.resource), (s.resource, []))[1].append(s)
    out = []
    for resource, group in by_resource.values():
        rows = []
        for s in group:
            ctx = s.context
            rows.append(
                {
                    "traceId": f"{ctx.trace_id:032x}",
                    "spanId": f"{ctx.span_id:016x}",
                    "parentSpanId": f"{s.parent.span_id:016x}" if s.parent else "",
                    "name": s.name,
                    "kind": int(s.kind.value) + 1,
                    "startTimeUnixNano": str(s.start_time),
                    "endTimeUnixNano": str(s.end_time),
                    "attributes": _attrs(s.attributes),
                }
            )
        out.append(
            {
                "resource": {"attributes": _attrs(resource.attributes if resource else {})},
                "scopeSpans": [{"scope": {"name": "citewise"}, "spans": rows}],
            }
        )
    return {"resourceSpans": out}


class FileSpanExporter:
    """An OpenTelemetry SDK span exporter appending one OTLP/JSON line per batch to ``path``.

    A write error is reported once on stderr and the batch is dropped (tracing never fails a
    request).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._warned = False

    def export(self, spans):
        from opentelemetry.sdk.trace.export import SpanExportResult

        line = json.dumps(encode(spans), separators=(",", ":")) + "\n"
        try:
            with self._lock, open(self.path, "a", encoding="utf-8") as fh:
                fh.write(line)
        except OSError as e:
            if not self._warned:
                import sys

                print(f"warning: traces not written to {self.path}: {e.strerror or e}", file=sys.stderr)
                self._warned = True
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _decode_value(v: Any) -> Any:
    if not isinstance(v, dict) or not v:
        return None
    kind, x = next(iter(v.items()))
    if kind == "intValue":
        return int(x)
    if kind == "doubleValue":
        return float(x)
    if kind == "arrayValue":
        return [_decode_value(i) for i in (x or {}).get("values", [])]
    return x


def read_spans(path: str | Path) -> Iterator[SpanRecord]:
    """Every span of an OTLP/JSON lines file, in file order.

    Raises:
        InputError: unreadable file, a line that is not JSON, or a span without its ids or times
            (naming the file and line).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(path), f"cannot read OTLP/JSON trace file: {getattr(e, 'strerror', None) or e}") from None
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(str(path), f"invalid JSON ({e.msg} at column {e.colno})", n) from None
        if not isinstance(row, dict):
            raise InputError(str(path), f"expected a JSON object, got {type(row).__name__}", n)
        for rs in row.get("resourceSpans") or []:
            for ss in (rs or {}).get("scopeSpans") or []:
                for sp in (ss or {}).get("spans") or []:
                    try:
                        yield SpanRecord(
                            str(sp["traceId"]),
                            str(sp["spanId"]),
                            str(sp.get("parentSpanId") or ""),
                            str(sp["name"]),
                            int(sp["startTimeUnixNano"]),
                            int(sp["endTimeUnixNano"]),
                            {a["key"]: _decode_value(a.get("value")) for a in sp.get("attributes") or []},
                        )
                    except (KeyError, TypeError, ValueError) as e:
                        raise InputError(
                            str(path),
                            f"span without a valid {e} (expected OTLP/JSON: traceId, "
                            f"spanId, name, startTimeUnixNano, endTimeUnixNano)",
                            n,
                        ) from None
