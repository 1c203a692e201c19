"""OpenTelemetry export and import speed on a recorded run: spans per second, median of 3.

Records one offline run (mem0 on the first LoCoMo dev conversation when ../shared/data has it, else
the bundled sample), then times: building the SDK spans from the stored run (in memory), sending
them over OTLP/HTTP protobuf and over OTLP/gRPC to a receiver on this machine that only reads the
requests, writing an OTLP protobuf file, and importing that file back as a run. Then the live
sink: microseconds per operation of a synthetic step (create a memory unit, search it) recorded
into a workspace alone and with `otel=` a tracer provider whose exporter drops the spans.

    .venv/bin/python benchmarks/otel_export.py [--dataset locomo:PATH] [--system mem0]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from rich.console import Console
from rich.table import Table

import memtrace as mt
from _common import code_version
from memtrace.graph import Workspace
from memtrace.interop.otlp.export import run_spans, send_spans, span_exporter, write_otlp_file
from memtrace.interop.otlp.importer import import_otlp

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"


class _Drain(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        payload = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return None


class _GrpcDrain(trace_service_pb2_grpc.TraceServiceServicer):
    def Export(self, request: Any, context: Any) -> Any:  # the gRPC method's name
        return trace_service_pb2.ExportTraceServiceResponse()


def _median_seconds(action: Callable[[], object], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


class _DropSpans:
    """A span exporter that keeps nothing: what the live sink costs, without any transport."""

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _live_us_per_op(workspace: Path, steps: int, otel: Any) -> float:
    started = time.perf_counter()
    with mt.run(workspace, name=f"live-{time.perf_counter_ns()}", system="bench", otel=otel) as run:
        for i in range(steps):
            with mt.op("write", category="update") as op:
                run.memory(f"mem-{i}").create({"memory": f"fact number {i}"}, by=op)
            with mt.op("search", category="retrieval") as op:
                op.input("query", f"fact {i}?", category="query")
                op.use(run.memory(f"mem-{i}").latest_id)
    return (time.perf_counter() - started) / (2 * steps) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=f"locomo:{LOCOMO}" if LOCOMO.exists() else "sample")
    parser.add_argument("--system", default="mem0")
    args = parser.parse_args(argv)
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        ws_path = Path(tmp) / "ws"
        memtrace = Path(sys.executable).parent / "memtrace"
        command = [str(memtrace), "run", str(ws_path), "--system", args.system, "--dataset", args.dataset]
        subprocess.run(
            [*command, "--conversations", "1"],
            check=True,
            capture_output=True,
        )
        http = ThreadingHTTPServer(("127.0.0.1", 0), _Drain)
        threading.Thread(target=http.serve_forever, daemon=True).start()
        grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_GrpcDrain(), grpc_server)
        grpc_port = grpc_server.add_insecure_port("127.0.0.1:0")
        grpc_server.start()
        http_url = f"http://127.0.0.1:{http.server_address[1]}"
        with Workspace(ws_path) as ws:
            run = ws.runs()[0]
            ops = ws.store.count("ops", run.id)
            spans = run_spans(ws.store, run.id)
            pb = Path(tmp) / "run.pb"
            rows = [
                ("build SDK spans from the stored run", _median_seconds(lambda: run_spans(ws.store, run.id))),
                (
                    "send over OTLP/HTTP protobuf",
                    _median_seconds(lambda: send_spans(spans, span_exporter(http_url), http_url)),
                ),
                (
                    "send over OTLP/gRPC",
                    _median_seconds(
                        lambda: send_spans(
                            spans, span_exporter(f"127.0.0.1:{grpc_port}", "grpc"), f"grpc:{grpc_port}"
                        )
                    ),
                ),
                ("write an OTLP protobuf file", _median_seconds(lambda: write_otlp_file(spans, pb))),
                ("import that file as a run", _median_seconds(lambda: import_otlp(ws.store, pb))),
            ]
        http.shutdown()
        grpc_server.stop(grace=None)
    table = Table(title=f"{run.name}: {ops} operations, {len(spans)} spans ({code_version()})")
    table.add_column("step")
    table.add_column("seconds", justify="right")
    table.add_column("spans / s", justify="right")
    for step, seconds in rows:
        table.add_row(step, f"{seconds:.3f}", f"{len(spans) / seconds:,.0f}")
    console.print(table)
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_DropSpans()))
    steps = 2000
    with tempfile.TemporaryDirectory() as tmp:
        alone = statistics.median(_live_us_per_op(Path(tmp) / "a", steps, False) for _ in range(3))
        live = statistics.median(_live_us_per_op(Path(tmp) / "b", steps, provider) for _ in range(3))
    live_table = Table(title=f"live: {2 * steps} operations per run, median of 3")
    live_table.add_column("recording")
    live_table.add_column("us / operation", justify="right")
    live_table.add_row("workspace only", f"{alone:.1f}")
    live_table.add_row("workspace + otel= (SimpleSpanProcessor, dropping exporter)", f"{live:.1f}")
    console.print(live_table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
