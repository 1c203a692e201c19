"""What arrives over the wire: OTLP/HTTP with protobuf bodies and OTLP/gRPC, at receivers started here."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")

from otel_pipeline import record_memory_pipeline
from otlp_receivers import GrpcTestReceiver, HttpTestReceiver, attributes_of, spans_of

from conftest import run_cli_in_process
from memtrace.attribution.model import load_attributions
from memtrace.graph import MemtraceError, Workspace
from memtrace.interop.otlp.export import export_otlp
from memtrace.interop.otlp.spans import trace_id_of


def _check_received(spans: list, workspace: Path, run_id: str) -> None:
    with Workspace(workspace) as ws:
        op_ids = {op.id for op in ws.store.ops(run_id)}
    by_op = {attributes_of(s).get("memtrace.op.id", "root"): s for s in spans}
    assert set(by_op) == op_ids | {"root"}
    assert {s.trace_id for s in spans} == {trace_id_of(run_id).to_bytes(16, "big")}
    search = next(s for key, s in by_op.items() if key.startswith("search#"))
    update = next(s for key, s in by_op.items() if key.startswith("update_memory"))
    assert attributes_of(search)["gen_ai.operation.name"] == "search_memory"
    assert [link.span_id for link in search.links] == [update.span_id]
    answer = next(s for key, s in by_op.items() if key.startswith("answer#"))
    assert [e.name for e in answer.events] == ["gen_ai.evaluation.result"]


def test_http_protobuf_reaches_a_receiver(workspace: Path) -> None:
    run_id = record_memory_pipeline(workspace)
    with HttpTestReceiver() as receiver, Workspace(workspace) as ws:
        sent = export_otlp(ws.store, run_id, receiver.url)
    assert receiver.received and all(r.path == "/v1/traces" for r in receiver.received)
    assert {r.content_type for r in receiver.received} == {"application/x-protobuf"}
    spans = spans_of(receiver.received)
    assert len(spans) == sent
    _check_received(spans, workspace, run_id)


def test_grpc_reaches_a_receiver(workspace: Path) -> None:
    run_id = record_memory_pipeline(workspace)
    with GrpcTestReceiver() as receiver, Workspace(workspace) as ws:
        sent = export_otlp(ws.store, run_id, receiver.address, protocol="grpc")
    spans = spans_of(receiver.received)
    assert len(spans) == sent
    _check_received(spans, workspace, run_id)


def test_the_cli_sends_a_run_with_its_stored_attributions(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = record_memory_pipeline(workspace)
    code, _, err = run_cli_in_process(capsys, "attribute", workspace)
    assert code == 0, err
    with Workspace(workspace) as ws:
        (stored,) = load_attributions(ws.store, run_id)
    with HttpTestReceiver() as receiver:
        code, out, err = run_cli_in_process(
            capsys, "export", workspace, "otel-toy", "--format", "otlp", "--endpoint", receiver.url
        )
    assert code == 0, err
    assert f"exported run {run_id}" in out
    received = spans_of(receiver.received)
    answer = next(s for s in received if attributes_of(s).get("memtrace.op.id", "").startswith("answer#"))
    labels = {
        attributes_of(e)["gen_ai.evaluation.name"]: attributes_of(e)["gen_ai.evaluation.score.label"]
        for e in answer.events
    }
    assert labels == {"memtrace.judge": "fail", "memtrace.attribution.flow": stored.error_type}


def test_an_unreachable_receiver_is_one_clear_error(workspace: Path) -> None:
    run_id = record_memory_pipeline(workspace)
    with HttpTestReceiver() as receiver:
        closed = receiver.url  # nothing listens there once the receiver has stopped
    with Workspace(workspace) as ws, pytest.raises(MemtraceError, match="did not accept the spans"):
        export_otlp(ws.store, run_id, closed, timeout=1)


def test_the_cli_wants_a_destination_and_a_known_protocol(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record_memory_pipeline(workspace)
    code, _, err = run_cli_in_process(capsys, "export", workspace, "otel-toy", "--format", "otlp")
    assert code == 1 and "needs --endpoint URL" in err
    code, _, err = run_cli_in_process(
        capsys, "export", workspace, "otel-toy", "-f", "otlp", "--endpoint", "x:1", "--protocol", "json"
    )
    assert code == 1 and "unknown OTLP protocol 'json'" in err
