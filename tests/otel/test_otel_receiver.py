"""The receiver mode of `memtrace import --format otlp`: a real OTLP exporter sends, the workspace fills."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")

from foreign_trace import QUESTION, foreign_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from conftest import CTRL_C_AS_IN_A_TERMINAL, OutputLines, stop_process
from memtrace.graph import Workspace
from memtrace.interop.otlp.export import otlp_json
from memtrace.interop.otlp.receiver import OtlpReceiver


@pytest.fixture
def receiver(tmp_path: Path):
    ws = Workspace(tmp_path / "ws", create=True)
    receiving = OtlpReceiver(ws.store, "127.0.0.1", 0).start()
    yield receiving
    receiving.close()
    ws.close()


def test_batches_from_the_sdk_exporter_build_up_one_run(receiver: OtlpReceiver) -> None:
    spans = sorted(foreign_spans(), key=lambda s: s.start_time)
    exporter = OTLPSpanExporter(endpoint=receiver.endpoint, timeout=5)
    assert exporter.export(spans[:4]) is SpanExportResult.SUCCESS
    (first,) = receiver.store.runs()
    assert len(receiver.store.ops(first.id)) == 4
    assert exporter.export(spans[4:]) is SpanExportResult.SUCCESS
    exporter.shutdown()
    (run,) = receiver.store.runs()
    assert run.id == first.id  # the same trace: its run is replaced with every span so far
    assert len(receiver.store.ops(run.id)) == len(spans)
    (case,) = receiver.store.cases(run.id)
    assert (case.question, case.verdict) == (QUESTION, "wrong")
    assert receiver.requests == 2


def test_otlp_json_bodies_are_accepted_and_garbage_is_refused(receiver: OtlpReceiver) -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    body = json.dumps(otlp_json(encode_spans(foreign_spans()))).encode()
    request = urllib.request.Request(
        receiver.endpoint, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200
    assert len(receiver.store.runs()) == 1
    garbage = urllib.request.Request(
        receiver.endpoint, data=b"\xff\x00nonsense", headers={"Content-Type": "application/x-protobuf"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(garbage, timeout=5)
    refused.value.close()  # the error is the refused response: it holds the connection open
    assert refused.value.code == 400
    assert len(receiver.store.runs()) == 1


def test_the_cli_receiver_imports_until_interrupted(tmp_path: Path) -> None:
    # Port 0: the receiver binds a free port itself and prints it (a port probed here could be taken
    # by another process before the child binds it). Every wait is for a line, with a deadline.
    # A runner started in the background (a CI job, `cmd &`) ignores SIGINT, and so would the child:
    # it gets Python's own Ctrl-C handler back, as when started from a terminal.
    command = [sys.executable, "-c", f"{CTRL_C_AS_IN_A_TERMINAL}; from memtrace.cli.app import main; main()"]
    args = ["import", str(tmp_path / "ws"), "--format", "otlp", "--listen", "127.0.0.1:0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    with subprocess.Popen(
        [*command, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    ) as server:
        assert server.stdout is not None
        output = OutputLines(server.stdout)
        try:
            ready = output.wait_for("receiving OTLP/HTTP traces at")
            endpoint = re.search(r"http://127\.0\.0\.1:\d+/v1/traces", ready)
            assert endpoint, ready
            exporter = OTLPSpanExporter(endpoint=endpoint.group(0), timeout=60)
            assert exporter.export(foreign_spans()) is SpanExportResult.SUCCESS
            exporter.shutdown()
            output.wait_for("imported otel-")  # printed before the reply: the import is stored
            server.send_signal(signal.SIGINT)
        finally:
            stop_process(server)
        rest = output.rest()
    assert server.returncode == 0, rest
    assert "stopped after 1 request(s)" in rest
    with Workspace(tmp_path / "ws") as ws:
        (run,) = ws.runs()
        assert ws.cases(run.id)[0].question == QUESTION
