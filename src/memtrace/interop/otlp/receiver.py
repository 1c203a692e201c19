"""A small OTLP/HTTP receiver that imports the traces it is sent into a workspace as they arrive.

Point any OpenTelemetry exporter at `http://HOST:PORT/v1/traces` (protobuf or OTLP/JSON bodies,
plain or gzip): after each request the traces it changed are imported again with every span
received so far, so the workspace always holds each trace's latest whole graph (a run per trace,
replaced in place). Standard library HTTP server plus opentelemetry-proto. It has no
authentication, so it listens on loopback unless told to expose itself (`expose=True`, the CLI's
`--expose`). A hostile request gets a 4xx and one line, never a traceback: bodies are capped at
64 MiB before and after gzip, and a span sent again is stored once.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ...errors import MemtraceError
from ...graph.model import Run
from ...graph.store import Store
from .._common import QUOTE_LIMIT, brief
from ._wire import WireSpan, decode_json, decode_protobuf
from .cases import CaseSpec
from .importer import import_spans

TRACES_PATH = "/v1/traces"
#: Largest request body accepted, before and after gzip (OTLP exporters send a few hundred spans).
MAX_BODY = 64 * 1024 * 1024


def is_loopback(host: str) -> bool:
    """True for an address only this machine reaches (127.0.0.0/8, ::1, localhost); a host name
    other than localhost may resolve to anything, so it is not."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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
        expose: bool = False,
    ) -> None:
        host = host.strip("[]")
        if not expose and not is_loopback(host):
            raise MemtraceError(
                f"{brief(host)} is not a loopback address: anyone who can reach it could write runs into"
                " this workspace, with no authentication; expose the receiver explicitly (--expose)"
            )
        if not 0 <= port <= 65535:
            raise MemtraceError(f"port {port} is out of range: give 0 to 65535 (0: any free port)")
        self.store = store
        self.cases = list(cases)
        self.on_import = on_import
        self.spans: dict[str, dict[str, WireSpan]] = defaultdict(dict)  # trace id -> span id -> span
        self.requests = 0
        self.repeated = 0  # spans received again unchanged: skipped
        self._lock = threading.Lock()
        server = _Server6 if ":" in host else _Server
        try:
            self.server = server((host, port), _handler(self))
        except OSError as exc:  # taken, not this machine's address, or an unknown host name
            raise MemtraceError(
                f"cannot listen at {host[:QUOTE_LIMIT]}:{port}: {exc.strerror or exc}"
            ) from None
        self._thread: threading.Thread | None = None
        self._serving = False

    @property
    def endpoint(self) -> str:
        host, port = self.server.server_address[:2]
        host = f"[{host}]" if ":" in str(host) else host
        return f"http://{host}:{port}{TRACES_PATH}"

    def receive(self, spans: list[WireSpan]) -> list[Run]:
        """Add received spans and re-import the traces they changed.

        A span id the trace already holds is the same span sent again (a retry, a second export):
        an unchanged copy is skipped, a changed one (a re-export with new evaluations) replaces it.
        """
        with self._lock:
            self.requests += 1
            touched: dict[str, None] = {}
            for span in spans:
                held = self.spans[span.trace_id]
                if held.get(span.span_id) == span:
                    self.repeated += 1
                    continue
                held[span.span_id] = span
                touched[span.trace_id] = None
            runs = []
            for trace_id in touched:
                spans_so_far = list(self.spans[trace_id].values())
                runs += import_spans(self.store, spans_so_far, source="otlp-receiver", cases=self.cases)
        if self.on_import is not None and runs:
            self.on_import(runs)
        return runs

    def start(self) -> OtlpReceiver:
        """Serve in a background thread (tests, notebooks); `close()` stops it."""
        self._serving = True
        self._thread = threading.Thread(target=self.server.serve_forever, name="otlp-receiver", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._serving = True
        self.server.serve_forever()

    def close(self) -> None:
        if self._serving:  # shutdown() waits for a serving loop: one never started would never answer
            self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # a client that hung up mid-request: nothing for the console (requests answer themselves)


class _Server6(_Server):
    address_family = socket.AF_INET6


class _Refused(Exception):
    """A request answered with a 4xx: the status and the one line the sender gets."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def gunzip(body: bytes, limit: int = MAX_BODY) -> bytes:
    """A gzip body decompressed, stopping at `limit` bytes: a few megabytes can ask for gigabytes."""
    out = bytearray()
    data = body
    while True:  # one gzip member after another, as gzip.decompress reads them
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += inflater.decompress(data, limit + 1 - len(out))
        except zlib.error as exc:
            raise _Refused(400, f"the body is not valid gzip ({exc})") from None
        if len(out) > limit or inflater.unconsumed_tail:
            raise _Refused(413, f"the body unzips to more than the {limit // 2**20} MiB limit")
        if not inflater.eof:
            raise _Refused(400, "the body is not valid gzip (it ends early)")
        data = inflater.unused_data
        if not data:
            return bytes(out)


def _handler(receiver: OtlpReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            try:
                self._post()
            except _Refused as refused:
                self._reply(refused.status, refused.reason)
            except Exception as exc:  # the sender gets the reason; the server keeps serving, quietly
                self._reply(500, f"the request failed: {type(exc).__name__}: {str(exc)[:QUOTE_LIMIT]}")

        def _post(self) -> None:
            if self.path.split("?", 1)[0] != TRACES_PATH:
                raise _Refused(404, f"only {TRACES_PATH} is served")
            encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
            if encoding not in ("gzip", "identity"):
                raise _Refused(415, f"Content-Encoding {brief(encoding)} is not supported: gzip or none")
            body = gunzip(self._body()) if encoding == "gzip" else self._body()
            is_json = "json" in (self.headers.get("Content-Type") or "")
            try:
                spans = decode_json(json.loads(body)) if is_json else decode_protobuf(body)
            except (ValueError, RecursionError) as exc:
                raise _Refused(400, f"not OTLP trace data: {str(exc)[:QUOTE_LIMIT]}") from None
            try:
                receiver.receive(spans)
            except Exception as exc:  # the sender gets the reason; the server keeps serving
                self._reply(500, f"import failed: {str(exc)[:QUOTE_LIMIT]}")
                return
            self._ok(is_json)

        def _body(self) -> bytes:
            declared = self.headers.get("Content-Length")
            if declared is None:
                raise _Refused(411, "a Content-Length header is needed")
            if not (declared.isascii() and declared.strip().isdigit()):
                raise _Refused(400, f"Content-Length {brief(declared)} is not a number of bytes")
            length = int(declared)
            if length == 0:
                raise _Refused(400, "the request body is empty")
            if length > MAX_BODY:
                raise _Refused(413, f"a body of {length:,} bytes is over the {MAX_BODY // 2**20} MiB limit")
            body = self.rfile.read(length)
            if len(body) < length:
                raise _Refused(400, f"the body ended after {len(body):,} of {length:,} bytes")
            return body

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
            try:
                self.send_response(status)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                return  # the sender is gone

        def log_message(self, format: str, *args: Any) -> None:
            return None  # the CLI prints what was imported instead

    return Handler
