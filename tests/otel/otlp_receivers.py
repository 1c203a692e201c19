"""Test doubles: minimal OTLP receivers that keep every request they get, to check what went over the wire.

The HTTP one is the standard library plus opentelemetry-proto; the gRPC one is grpcio plus
opentelemetry-proto's service stubs. Neither is memtrace code: they check memtrace's exporter
from the outside, as a real collector would receive it.
"""

from __future__ import annotations

import threading
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


@dataclass
class Received:
    """One request as it arrived: headers (HTTP), the raw body and the decoded request."""

    content_type: str
    body: bytes
    request: trace_service_pb2.ExportTraceServiceRequest
    path: str = ""
    headers: dict[str, str] = field(default_factory=dict)


class HttpTestReceiver:
    """An OTLP/HTTP receiver on a free loopback port that accepts protobuf and keeps each request."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                content_type = self.headers.get("Content-Type", "")
                request = trace_service_pb2.ExportTraceServiceRequest()
                if content_type != "application/x-protobuf":
                    self.send_response(415)  # a protobuf-only receiver, like some collectors
                    self.end_headers()
                    return
                request.ParseFromString(body)
                receiver.received.append(
                    Received(content_type, body, request, self.path, dict(self.headers.items()))
                )
                payload = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> HttpTestReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class GrpcTestReceiver(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP/gRPC trace service on a free loopback port that keeps each request."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(self, self.server)
        self.port = self.server.add_insecure_port("127.0.0.1:0")

    def Export(self, request: Any, context: Any) -> Any:
        self.received.append(Received("application/grpc", request.SerializeToString(), request))
        return trace_service_pb2.ExportTraceServiceResponse()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> GrpcTestReceiver:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop(grace=None)


def spans_of(received: list[Received]) -> list[Any]:
    """Every span of the received requests, in arrival order."""
    return [
        span
        for item in received
        for resource_spans in item.request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]


def attributes_of(span: Any) -> dict[str, Any]:
    """A wire span's attributes as Python values (strings, ints, floats, bools, lists)."""
    out = {}
    for pair in span.attributes:
        kind = pair.value.WhichOneof("value")
        if kind == "array_value":
            out[pair.key] = [getattr(v, v.WhichOneof("value")) for v in pair.value.array_value.values]
        else:
            out[pair.key] = getattr(pair.value, kind)
    return out
