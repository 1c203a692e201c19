"""Live export: `OtelSink` attached to a recording run gives the spans the stored-run exporter gives."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from otel_pipeline import record_memory_pipeline

import memtrace as mt
from memtrace.graph import Workspace
from memtrace.interop.otlp.export import run_spans
from memtrace.interop.otlp.sink import OtelSink


def _shape(spans: list) -> dict[str, tuple]:
    """Per operation: span name and kind, parent operation, gen_ai attributes, linked operations, events."""
    op_of = {s.context.span_id: str(s.attributes.get("memtrace.op.id", "root")) for s in spans}
    return {
        op_of[s.context.span_id]: (
            s.name,
            s.kind,
            op_of.get(s.parent.span_id) if s.parent else None,
            {k: v for k, v in s.attributes.items() if k.startswith("gen_ai.")},
            sorted(op_of[link.context.span_id] for link in s.links),
            [e.attributes.get("gen_ai.evaluation.name") for e in s.events],
        )
        for s in spans
    }


def test_live_spans_match_the_exported_run(workspace: Path) -> None:
    collected = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collected))
    run_id = record_memory_pipeline(workspace, sinks=[OtelSink(provider)])
    live = list(collected.get_finished_spans())
    with Workspace(workspace) as ws:
        exported = run_spans(ws.store, run_id)
    assert _shape(live) == _shape(exported)
    kinds = {s.name: s.kind for s in live}
    assert kinds["chat toy-model"] == kinds["search_memory"] == SpanKind.CLIENT  # model, remote store
    assert kinds["create_memory"] == kinds["update_memory"] == SpanKind.INTERNAL  # in-process memory
    answer = next(s for s in live if str(s.attributes.get("memtrace.op.id")).startswith("answer#"))
    (verdict,) = answer.events
    assert verdict.attributes["gen_ai.evaluation.score.label"] == "fail"
    with Workspace(workspace) as ws:
        op = next(o for o in ws.store.ops(run_id) if o.id.startswith("answer#"))
    assert answer.end_time == round(op.ended_at * 1e9)  # held open for the verdict, ended at its time


def test_run_with_otel_sends_to_the_provider_given(workspace: Path) -> None:
    collected = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collected))
    with (
        mt.run(workspace, name="live", system="toy", otel=provider) as run,
        mt.op("extract_facts", category="extraction") as op,
    ):
        run.memory("mem-1").create({"memory": "Caroline lives in Boston"}, by=op)
    names = [s.name for s in collected.get_finished_spans()]
    assert names == ["create_memory", "invoke_workflow live"]  # in the order they ended


def test_content_is_opt_in_live_too(workspace: Path) -> None:
    collected = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collected))
    record_memory_pipeline(workspace, sinks=[OtelSink(provider, content=True)])
    search = next(s for s in collected.get_finished_spans() if s.name == "search_memory")
    assert search.attributes["gen_ai.memory.query.text"] == "Where does Caroline live?"
    assert "Caroline lives in Paris" in search.attributes["gen_ai.memory.records"]


def test_a_live_span_takes_its_kind_from_what_the_operation_says_when_it_starts(workspace: Path) -> None:
    collected = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collected))
    with mt.run(workspace, name="kinds", system="toy", otel=provider):
        with mt.op("llm.embed", category="embedding"):
            pass
        with mt.op("local.embed", category="embedding", remote=False):  # a model in this process
            pass
        with mt.op("store.get", category="retrieval", remote=True) as op:
            op.set(remote=False)  # too late: a span's kind is fixed when it starts
        with mt.op("rank", category="retrieval"):
            pass
    kinds = {s.attributes.get("memtrace.op.name", "root"): s.kind for s in collected.get_finished_spans()}
    assert kinds == {
        "llm.embed": SpanKind.CLIENT,
        "local.embed": SpanKind.INTERNAL,
        "store.get": SpanKind.CLIENT,
        "rank": SpanKind.INTERNAL,
        "root": SpanKind.INTERNAL,
    }
