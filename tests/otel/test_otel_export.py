"""A stored run as OpenTelemetry GenAI spans, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

from opentelemetry.trace import SpanKind
from otel_pipeline import QUESTION, record_memory_pipeline

import memtrace as mt
from memtrace.graph import Workspace
from memtrace.interop.otlp.export import run_spans
from memtrace.interop.otlp.spans import EvaluationResult, span_id_of, trace_id_of


@pytest.fixture
def exported(workspace: Path) -> tuple[str, dict[str, object]]:
    run_id = record_memory_pipeline(workspace)
    with Workspace(workspace) as ws:
        spans = run_spans(ws.store, run_id)
    return run_id, {str(s.attributes.get("memtrace.op.id", "root")): s for s in spans}


def test_one_span_per_operation_nested_as_the_operations_nest(exported, workspace: Path) -> None:
    run_id, spans = exported
    with Workspace(workspace) as ws:
        ops = ws.store.ops(run_id)
    assert set(spans) == {op.id for op in ops} | {"root"}
    root = spans["root"]
    assert root.parent is None and root.name == "invoke_workflow otel-toy"
    for op in ops:
        span = spans[op.id]
        parent = spans[op.parent_op] if op.parent_op else root
        assert span.parent is not None and span.parent.span_id == parent.context.span_id, op.id
        assert span.context.trace_id == root.context.trace_id == trace_id_of(run_id)
        assert span.context.span_id == span_id_of(run_id, op.id)
        assert span.start_time == round(op.started_at * 1e9)


def test_memory_operations_follow_the_genai_conventions(exported) -> None:
    _, spans = exported
    extract = next(s for key, s in spans.items() if key.startswith("extract_facts"))
    assert extract.name == "create_memory"
    assert extract.attributes["gen_ai.operation.name"] == "create_memory"
    assert extract.attributes["gen_ai.memory.record.count"] == 2
    assert "gen_ai.memory.record.id" not in extract.attributes  # two records: no single id
    assert list(extract.attributes["memtrace.memory.record.ids"]) == ["mem-1", "mem-2"]
    update = next(s for key, s in spans.items() if key.startswith("update_memory"))
    delete = next(s for key, s in spans.items() if key.startswith("delete_memory"))
    assert (update.name, update.attributes["gen_ai.memory.record.id"]) == ("update_memory", "mem-1")
    assert (delete.name, delete.attributes["gen_ai.memory.record.id"]) == ("delete_memory", "mem-2")
    store = extract.attributes["gen_ai.memory.store.id"]
    assert store and update.attributes["gen_ai.memory.store.id"] == store
    assert extract.attributes["gen_ai.provider.name"] == "toy"
    chat = next(s for key, s in spans.items() if key.startswith("llm.chat"))
    assert chat.name == "chat toy-model"
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "toy-model"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 12
    assert chat.parent.span_id == extract.context.span_id
    assert "gen_ai.provider.name" not in chat.attributes  # the toy model names no provider: none guessed


def test_a_model_call_names_its_provider_only_when_it_recorded_one(workspace: Path) -> None:
    with mt.run(workspace, name="providers", system="toy") as run:
        recorded = ({}, {"backend": "openai"}, {"provider": "ollama"}, {"backend": ""})
        for number, metadata in enumerate(recorded):
            with mt.op(f"llm.chat.{number}", category="llm", model="m", **metadata):
                pass
    with Workspace(workspace) as ws:
        spans = run_spans(ws.store, run.id)
    chats = sorted((s for s in spans if s.name == "chat m"), key=lambda s: s.attributes["memtrace.op.seq"])
    assert [c.attributes.get("gen_ai.provider.name") for c in chats] == [None, "openai", "ollama", None]


def test_span_kinds_follow_the_genai_conventions(exported) -> None:
    """CLIENT for calls to another process (the model, the remote store's search), INTERNAL otherwise."""
    _, spans = exported
    kinds = {key.split("#")[0]: s.kind for key, s in spans.items()}
    assert kinds == {
        "root": SpanKind.INTERNAL,
        "ingest": SpanKind.INTERNAL,
        "extract_facts": SpanKind.INTERNAL,  # creates memory in this process
        "llm.chat": SpanKind.CLIENT,
        "update_memory": SpanKind.INTERNAL,
        "delete_memory": SpanKind.INTERNAL,
        "question": SpanKind.INTERNAL,
        "search": SpanKind.CLIENT,  # marked remote=True
        "answer": SpanKind.INTERNAL,
    }


def test_a_search_links_to_the_span_that_wrote_each_record_it_returned(exported) -> None:
    _, spans = exported
    search = next(s for key, s in spans.items() if key.startswith("search#"))
    update = next(s for key, s in spans.items() if key.startswith("update_memory"))
    assert search.name == "search_memory"
    assert search.attributes["gen_ai.memory.record.id"] == "mem-1"
    assert search.attributes["gen_ai.memory.record.count"] == 1
    (link,) = search.links
    assert link.context.span_id == update.context.span_id  # mem-1@2 was written by the update
    assert link.attributes["gen_ai.memory.record.id"] == "mem-1"


def test_content_only_when_asked(exported, workspace: Path) -> None:
    run_id, spans = exported
    content_keys = {"gen_ai.memory.records", "gen_ai.memory.query.text", "gen_ai.input.messages"}
    assert not any(content_keys & set(s.attributes) for s in spans.values())
    explanations = [str(e.attributes) for s in spans.values() for e in s.events]
    assert explanations and not any("Caroline" in text or "Paris" in text for text in explanations)
    with Workspace(workspace) as ws:
        full = {str(s.attributes.get("memtrace.op.id")): s for s in run_spans(ws.store, run_id, content=True)}
    search = next(s for key, s in full.items() if key.startswith("search#"))
    assert search.attributes["gen_ai.memory.query.text"] == QUESTION
    (record,) = json.loads(search.attributes["gen_ai.memory.records"])
    assert record == {
        "id": "mem-1",
        "content": "Caroline lives in Paris",
        "metadata": {"version": 2},
        "score": 0.75,
    }
    answer = next(s for key, s in full.items() if key.startswith("answer#"))
    assert QUESTION in answer.events[0].attributes["gen_ai.evaluation.explanation"]
    chat = next(s for key, s in full.items() if key.startswith("llm.chat"))
    messages = json.loads(chat.attributes["gen_ai.input.messages"])
    assert messages == [{"role": "user", "parts": [{"type": "text", "content": "Facts of: Boston"}]}]


def test_verdicts_and_attributions_are_evaluation_events_on_the_answer_span(workspace: Path) -> None:
    run_id = record_memory_pipeline(workspace)
    blame = EvaluationResult("q1", "memtrace.attribution.flow", 0.9, "UpdateError", "mem-1 lost Boston")
    with Workspace(workspace) as ws:
        spans = run_spans(ws.store, run_id, evaluations=[blame])
    answer = next(s for s in spans if str(s.attributes.get("memtrace.op.id")).startswith("answer#"))
    events = {e.attributes["gen_ai.evaluation.name"]: e for e in answer.events}
    assert all(e.name == "gen_ai.evaluation.result" for e in answer.events)
    judge = events["memtrace.judge"].attributes
    assert (judge["gen_ai.evaluation.score.label"], judge["gen_ai.evaluation.score.value"]) == ("fail", 0.0)
    flow = events["memtrace.attribution.flow"].attributes
    assert flow["gen_ai.evaluation.score.label"] == "UpdateError"
    assert flow["gen_ai.evaluation.explanation"] == "mem-1 lost Boston"
    assert flow["memtrace.case.id"] == "q1"


def test_importing_memtrace_does_not_import_opentelemetry() -> None:
    code = "import sys, memtrace; print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
