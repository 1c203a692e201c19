"""Long-context and RAG systems on the sample: the graph they record and the answers they give."""

from __future__ import annotations

from pathlib import Path

import pytest

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.datasets import sample_conversation
from memtrace.systems import run_conversation
from memtrace.systems.long_context import UNIT, LongContext, LongContextConfig
from memtrace.systems.rag import RAGConfig, RAGSystem


@pytest.fixture(scope="module")
def conversation():  # type: ignore[no-untyped-def]
    return sample_conversation(0)


def categories(graph: mt.graph.Graph) -> set[str]:
    return {op.category for op in graph.store.ops(graph.run.id)}


def test_long_context_records_one_growing_unit_and_answers(
    tmp_path: Path, conversation, open_ws: OpenWorkspace
) -> None:  # type: ignore[no-untyped-def]
    result = run_conversation(LongContext(), conversation, tmp_path)
    ws = open_ws(tmp_path)
    graph = ws.graph(result.run_id)
    assert {"construction", "update", "retrieval", "response", "evaluation"} <= categories(graph)
    life = graph.lifecycle(UNIT)
    turns = sum(len(s.turns) for s in conversation.sessions)
    assert len(life) == turns and life[0].change == "create"
    assert len(life[-1].value) == turns  # nothing trimmed at the default budget
    cases = ws.cases(result.run_id)
    assert len(cases) == len(conversation.questions)
    assert all(c.prediction_var and graph.value(c.prediction_var) == c.prediction for c in cases)
    assert 0.3 < result.accuracy < 1.0


def test_long_context_trims_the_oldest_messages_over_budget(
    tmp_path: Path, conversation, open_ws: OpenWorkspace
) -> None:  # type: ignore[no-untyped-def]
    result = run_conversation(LongContext(LongContextConfig(max_tokens=300)), conversation, tmp_path)
    graph = open_ws(tmp_path).graph(result.run_id)
    trims = [op for op in graph.ops_by_category("update") if op.name == "trim_memory"]
    assert trims and all(op.metadata["dropped"] >= 1 for op in trims)
    final = graph.lifecycle(UNIT)[-1].value
    assert "D1:1" not in " ".join(final) and not any("long time no talk" in e for e in final)


def test_rag_builds_documents_and_retrieves_top_k(
    tmp_path: Path, conversation, open_ws: OpenWorkspace
) -> None:  # type: ignore[no-untyped-def]
    result = run_conversation(RAGSystem(RAGConfig(top_k=3)), conversation, tmp_path)
    graph = open_ws(tmp_path).graph(result.run_id)
    units = graph.memory_units()
    assert len(units) >= len(conversation.sessions)  # sessions are never mixed in one document
    first = graph.lifecycle(units[0])[0]
    assert first.op.name == "add_document"
    message_inputs = [v for v in graph.inputs(first.op.id) if v.category == "message"]
    assert message_inputs and all(graph.value(v.id) in first.value for v in message_inputs)
    for op in graph.ops_by_category("retrieval"):
        assert len(op.metadata["ranking"]) <= 3
        used = [v for v in graph.inputs(op.id) if v.category == "memory_entry"]
        assert sorted(v.name for v in used) == sorted(name for name, _ in op.metadata["ranking"])


def test_offline_runs_are_deterministic(tmp_path: Path, conversation, open_ws: OpenWorkspace) -> None:  # type: ignore[no-untyped-def]
    first = run_conversation(RAGSystem(), conversation, tmp_path / "a")
    second = run_conversation(RAGSystem(), conversation, tmp_path / "b")
    assert [c.prediction for c in first.cases] == [c.prediction for c in second.cases]
    state_a = open_ws(tmp_path / "a").graph(first.run_id).memory_values_at()
    state_b = open_ws(tmp_path / "b").graph(second.run_id).memory_values_at()
    assert state_a == state_b


def test_systems_run_with_recording_disabled(conversation) -> None:  # type: ignore[no-untyped-def]
    mt.disable()
    try:
        result = run_conversation(RAGSystem(), conversation, "unused-workspace")
    finally:
        mt.enable()
    assert result.run_id is None and len(result.cases) == len(conversation.questions)
    assert not Path("unused-workspace").exists()
