"""A small OTLP/HTTP receiver that imports the traces it is sent into a workspace as they arrive.

Point any OpenTelemetry exporter at `http://HOST:PORT/v1/traces` (protobuf or OTLP/JSON bodies):
after each request the traces it touched are imported again with every span received so far, so
the workspace always holds each trace's latest whole graph (a run per trace, replaced in place).
Standard library HTTP server plus opentelemetry-proto; loopback by default.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ...graph.model import Run
from ...graph.store import Store
from ._wire import WireSpan, decode_json, decode_protobuf
from .cases import CaseSpec
from .importer import import_spans

TRACES_PATH = "/v1/traces"
#: Largest request body accepted (OTLP exporters send batches of a few hundred spans).
MAX_BODY = 64 * 1024 * 1024


class OtlpReceiver:
    """Receives OTLP/HTTP trace exports and imports them into `store`; `serve_forever` or `start`."""

    def __init__(
        self,
        store: Store,
        host: str = "127.0.0.1",
        port: int = 4318,
        *,
        cases: Sequence[CaseSpec] = (),
        on_import: Callable[[list[Run]], None] | None = None,
    ) -> None:
        self.store = store
        self.cases = list(cases)
        self.on_import = on_import
        self.spans: dict[str, list[WireSpan]] = defaultdict(list)
        self.requests = 0
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, port), _handler(self))
        self.server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}{TRACES_PATH}"

    def receive(self, spans: list[WireSpan]) -> list[Run]:
        """Add received spans and re-import the traces they belong to."""
        with self._lock:
            self.requests += 1
            touched = dict.fromkeys(s.trace_id for s in spans)
            for span in spans:
                self.spans[span.trace_id].append(span)
            runs = []
            for trace_id in touched:
                spans_so_far = self.spans[trace_id]
                runs += import_spans(self.store, spans_so_far, source="otlp-receiver", cases=self.cases)
        if self.on_import is not None and runs:
            self.on_import(runs)
        return runs

    def start(self) -> OtlpReceiver:
        """Serve in a background thread (tests, notebooks); `close()` stops it."""
        self._thread = threading.Thread(target=self.server.serve_forever, name="otlp-receiver", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.server.serve_forever()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def _handler(receiver: OtlpReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if self.path.split("?", 1)[0] != TRACES_PATH:
                self._reply(404, f"only {TRACES_PATH} is served")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                self._reply(400, "a request body of 1 byte to 64 MiB is needed")
                return
            body = self.rfile.read(length)
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                import gzip

                body = gzip.decompress(body)
            is_json = "json" in (self.headers.get("Content-Type") or "")
            try:
                spans = decode_json(json.loads(body)) if is_json else decode_protobuf(body)
            except (ValueError, json.JSONDecodeError) as exc:
                self._reply(400, f"not OTLP trace data: {exc}")
                return
            try:
                receiver.receive(spans)
            except Exception as exc:  # the sender gets the reason; the server keeps serving
                self._reply(500, f"import failed: {exc}")
                return
            self._ok(is_json)

        def _ok(self, is_json: bool) -> None:
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
                ExportTraceServiceResponse,
            )

            payload = b"{}" if is_json else ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/json" if is_json else "application/x-protobuf")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _reply(self, status: int, message: str) -> None:
            payload = message.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return None  # the CLI prints what was imported instead

    return Handler
