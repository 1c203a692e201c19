"""Reading OTLP trace data (protobuf or OTLP/JSON) into plain span records for the importer.

Both encodings go through opentelemetry-proto's `ExportTraceServiceRequest`, so a file, an HTTP
body and a gRPC message decode the same way. OTLP/JSON spells trace and span ids in hex where
protobuf's JSON mapping expects base64: they are converted before parsing.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import FormatError, MemtraceError


@dataclass(slots=True)
class WireSpan:
    """One received span: ids in hex, times in seconds, attributes decoded to Python values."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: float
    end: float
    attributes: dict[str, Any]
    resource: dict[str, Any]
    events: list[tuple[str, float, dict[str, Any]]] = field(default_factory=list)
    links: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None
    kind: str = "unspecified"  # internal, server, client, producer or consumer: any is accepted


#: OTLP's SpanKind enum values, by number.
SPAN_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")


def _request_class() -> Any:
    try:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise MemtraceError(
            "OpenTelemetry import needs the otel extra: pip install 'memtrace[otel]'"
        ) from None
    return ExportTraceServiceRequest


def read_otlp_file(path: str | Path) -> list[WireSpan]:
    """Every span of an OTLP file: protobuf, one OTLP/JSON document, or JSON lines of them."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FormatError(path, "no such file") from None
    except IsADirectoryError:
        raise FormatError(path, "is a directory, not an OTLP file") from None
    stripped = data.lstrip()
    if stripped[:1] in (b"{", b"["):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(path, f"not UTF-8 text ({exc.reason})") from None
        documents = _json_documents(path, text)
        spans: list[WireSpan] = []
        for number, document in enumerate(documents, start=1):
            try:
                spans.extend(decode_json(document))
            except ValueError as exc:
                raise FormatError(path, f"document {number}: not OTLP/JSON trace data ({exc})") from None
        return spans
    try:
        return decode_protobuf(data)
    except ValueError as exc:
        raise FormatError(path, f"not OTLP protobuf trace data ({exc})") from None


def _json_documents(path: Path, text: str) -> list[Any]:
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    except RecursionError:
        raise FormatError(path, "nested too deeply to read") from None
    if whole is not None:
        return whole if isinstance(whole, list) else [whole]
    documents = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                documents.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise FormatError(path, f"line {number}: not valid JSON ({exc.msg})") from None
    return documents


def decode_protobuf(data: bytes) -> list[WireSpan]:
    """Spans of a binary ExportTraceServiceRequest (an OTLP/HTTP body, a gRPC message, a .pb file)."""
    from google.protobuf.message import DecodeError

    request = _request_class()()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        raise ValueError(str(exc) or "undecodable bytes") from None
    return _spans_of(request)


def decode_json(document: Any) -> list[WireSpan]:
    """Spans of one OTLP/JSON ExportTraceServiceRequest document."""
    from google.protobuf.json_format import ParseDict, ParseError

    if not isinstance(document, dict) or "resourceSpans" not in document:
        raise ValueError("no 'resourceSpans'")
    document = json.loads(json.dumps(document))  # a copy to rewrite ids in
    for resource in document.get("resourceSpans") or []:
        for scope in resource.get("scopeSpans") or []:
            for span in scope.get("spans") or []:
                _hex_ids_to_base64(span)
                for link in span.get("links") or []:
                    _hex_ids_to_base64(link)
    request = _request_class()()
    try:
        ParseDict(document, request, ignore_unknown_fields=True)
    except ParseError as exc:
        raise ValueError(str(exc)) from None
    return _spans_of(request)


def _hex_ids_to_base64(record: dict[str, Any]) -> None:
    for key in ("traceId", "spanId", "parentSpanId"):
        value = record.get(key)
        if isinstance(value, str) and value:
            try:
                record[key] = base64.b64encode(bytes.fromhex(value)).decode()
            except ValueError:
                raise ValueError(f"{key} {value!r} is not hex") from None


def _spans_of(request: Any) -> list[WireSpan]:
    spans = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                if len(span.trace_id) != 16 or len(span.span_id) != 8:
                    raise ValueError(f"span {span.name!r} has no valid trace or span id")
                error = None
                if span.status.code == 2:  # STATUS_CODE_ERROR
                    error = span.status.message or "error"
                spans.append(
                    WireSpan(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex() or None,
                        name=span.name,
                        start=span.start_time_unix_nano / 1e9,
                        end=max(span.end_time_unix_nano, span.start_time_unix_nano) / 1e9,
                        attributes=_attributes(span.attributes),
                        resource=resource,
                        events=[
                            (e.name, e.time_unix_nano / 1e9, _attributes(e.attributes)) for e in span.events
                        ],
                        links=[
                            (link.trace_id.hex(), link.span_id.hex(), _attributes(link.attributes))
                            for link in span.links
                        ],
                        error=error,
                        kind=SPAN_KINDS[span.kind] if 0 <= span.kind < len(SPAN_KINDS) else "unspecified",
                    )
                )
    return spans


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    if kind == "bytes_value":
        return binascii.hexlify(value.bytes_value).decode()
    return getattr(value, kind)
