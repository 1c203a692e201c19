"""Reading OTLP trace data (protobuf or OTLP/JSON) into plain span records for the importer.

Protobuf goes through opentelemetry-proto's `ExportTraceServiceRequest` (an HTTP body, a gRPC message
or a .pb file decode the same way); OTLP/JSON is read field by field in _json.py, which names a
bad field by its path. Either way a span is a `WireSpan`.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import FormatError, MemtraceError
from .._common import NESTED_TOO_DEEPLY, QUOTE_LIMIT, brief
from ._json import FieldError, decode_json
from ._wirespan import SPAN_KINDS, WireSpan


def _request_class() -> Any:
    try:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise MemtraceError(
            "OpenTelemetry import needs the otel extra: pip install 'memtrace[otel]'"
        ) from None
    return ExportTraceServiceRequest


def read_otlp_file(path: str | Path) -> list[WireSpan]:
    """Every span of an OTLP file: protobuf, one OTLP/JSON document, or JSON lines of them.

    JSON documents are read one at a time and dropped once their spans are out, so a large file
    costs its text and its spans, not a tree of JSON objects for every span besides.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FormatError(path, "no such file") from None
    except IsADirectoryError:
        raise FormatError(path, "is a directory, not an OTLP file") from None
    if data.lstrip()[:1] not in (b"{", b"["):
        try:
            return decode_protobuf(data)
        except ValueError as exc:
            raise FormatError(path, f"not OTLP protobuf trace data ({str(exc)[:QUOTE_LIMIT]})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    del data
    documents = _json_documents(path, text)
    del text  # the documents hold it while they need it
    spans: list[WireSpan] = []
    for number, document in enumerate(documents, start=1):
        try:
            spans.extend(decode_json(document))
        except FieldError as exc:
            raise FormatError(path, f"document {number}: not OTLP/JSON trace data ({exc})") from None
    return spans


def _json_documents(path: Path, text: str) -> Iterator[Any]:
    """The documents of a JSON file: the whole text as one (a list: its items), else one per line."""
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    except RecursionError:
        raise FormatError(path, NESTED_TOO_DEEPLY) from None
    if whole is not None:
        del text
        items = whole if isinstance(whole, list) else [whole]
        del whole
        items.reverse()
        while items:  # handed out and forgotten one by one
            yield items.pop()
        return
    start, number = 0, 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line, start, number = text[start:end], end + 1, number + 1
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise FormatError(path, f"line {number}: not valid JSON ({exc.msg})") from None
            except RecursionError:
                raise FormatError(path, f"line {number}: {NESTED_TOO_DEEPLY}") from None


def decode_protobuf(data: bytes) -> list[WireSpan]:
    """Spans of a binary ExportTraceServiceRequest (an OTLP/HTTP body, a gRPC message, a .pb file)."""
    from google.protobuf.message import DecodeError

    request = _request_class()()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        raise ValueError(str(exc) or "undecodable bytes") from None
    return _spans_of(request)


def _spans_of(request: Any) -> list[WireSpan]:
    spans = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                if len(span.trace_id) != 16 or len(span.span_id) != 8:
                    raise ValueError(f"span {brief(span.name)} has no valid trace or span id")
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
