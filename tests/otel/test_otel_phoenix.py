"""The slow tier: a real Arize Phoenix server receives the spans, and its client reads them back.

Phoenix is heavy, so it lives in its own virtual environment (`make phoenix-venv`) and this tier
runs only when MEMTRACE_PHOENIX_PYTHON names that environment's python (`make test-phoenix`).
The server keeps its SQLite database in a temporary folder, with telemetry and external resources
off, on free loopback ports.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.grpc", reason="the otel extra is not installed")

from otel_pipeline import record_memory_pipeline

from memtrace.graph import Workspace
from memtrace.interop.otlp.export import export_otlp
from memtrace.interop.otlp.spans import trace_id_of

PHOENIX_PYTHON = os.environ.get("MEMTRACE_PHOENIX_PYTHON")
pytestmark = [
    pytest.mark.phoenix,
    pytest.mark.skipif(
        not PHOENIX_PYTHON,
        reason="MEMTRACE_PHOENIX_PYTHON is unset (a venv's python with arize-phoenix; make test-phoenix)",
    ),
]
READ_SPANS = """
import json, sys
from phoenix.client import Client
spans = Client(base_url=sys.argv[1]).spans.get_spans(project_identifier="default", limit=10000)
print(json.dumps(spans, default=str))
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def phoenix(tmp_path: Path):
    http_port, grpc_port = _free_port(), _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(tmp_path / "phoenix"),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(http_port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    log = (tmp_path / "phoenix.log").open("w")
    server = subprocess.Popen(
        [str(PHOENIX_PYTHON), "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{http_port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            if server.poll() is not None:
                pytest.fail(
                    f"Phoenix exited ({server.returncode}): {(tmp_path / 'phoenix.log').read_text()[-2000:]}"
                )
            try:
                with urllib.request.urlopen(f"{url}/readyz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("Phoenix did not answer /readyz within 240 s")
            time.sleep(1)
        yield url, f"127.0.0.1:{grpc_port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _spans_in_phoenix(url: str, expected: int) -> list[dict]:
    deadline = time.monotonic() + 60
    while True:
        out = subprocess.run(
            [str(PHOENIX_PYTHON), "-c", READ_SPANS, url], capture_output=True, text=True, check=True
        ).stdout
        spans = json.loads(out)
        if len(spans) >= expected or time.monotonic() > deadline:
            return spans
        time.sleep(1)


def test_phoenix_receives_the_genai_spans_over_http_and_grpc(phoenix, tmp_path: Path) -> None:
    url, grpc_address = phoenix
    workspace = tmp_path / "ws"
    by_http, by_grpc = (
        record_memory_pipeline(workspace, "over-http"),
        record_memory_pipeline(workspace, "over-grpc"),
    )
    with Workspace(workspace) as ws:
        sent = export_otlp(ws.store, by_http, url)
        sent += export_otlp(ws.store, by_grpc, grpc_address, protocol="grpc")
    spans = _spans_in_phoenix(url, sent)
    assert len(spans) == sent
    for run_id in (by_http, by_grpc):
        trace = [s for s in spans if s["context"]["trace_id"] == f"{trace_id_of(run_id):032x}"]
        operations = {s["attributes"].get("gen_ai.operation.name") for s in trace}
        assert {
            "invoke_workflow",
            "create_memory",
            "update_memory",
            "delete_memory",
            "search_memory",
            "chat",
        } <= (operations)
        search = next(s for s in trace if s["name"] == "search_memory")
        assert search["attributes"]["gen_ai.memory.record.id"] == "mem-1"
        assert search["attributes"]["gen_ai.memory.store.id"].startswith("memtrace:")
        answer = next(s for s in trace if s["name"] == "answer")
        (event,) = answer["events"]
        assert event["name"] == "gen_ai.evaluation.result"
        assert event["attributes"]["gen_ai.evaluation.score.label"] == "fail"
