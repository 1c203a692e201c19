"""The span record the OTLP readers (protobuf and OTLP/JSON) hand to the importer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
