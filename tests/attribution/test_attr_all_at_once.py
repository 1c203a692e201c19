"""The all-at-once baseline over real HTTP: the compact run log, its truncation, and the answer's checks."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memtrace as mt
from memtrace.attribution.methods.all_at_once import AllAtOnceMethod, case_ops, prompt_tokens
from memtrace.attribution.model import PathRole
from memtrace.datasets import sample_conversation
from memtrace.graph import Case, GraphView
from memtrace.systems import run_conversation
from memtrace.systems.mem0 import Mem0System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llmhelpers import ScriptedOpenAIServer, scripted_client


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GraphView, Case, str]]:
    """Mem0 (offline) on sample 0 and its failed 'What breed is Clara's dog?' case, with the search op."""
    workspace = tmp_path_factory.mktemp("all-at-once") / "ws"
    result = run_conversation(Mem0System(), sample_conversation(0), workspace)
    ws = mt.open(workspace)
    graph = ws.view(result.run_id)
    case = next(c for c in ws.cases(result.run_id) if c.failed and c.gold == ["labrador"])
    answer = graph.producers(case.prediction_var)[0]
    retrieved = next(v for v in graph.inputs(answer.id) if v.category == "retrieved")
    yield graph, case, graph.producers(retrieved.id)[0].id
    ws.close()


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


def answer(
    error_type: str, op_id: str | None, reason: str = "the search missed mem-7", confidence: Any = 0.7
) -> str:
    return json.dumps({"error_type": error_type, "op_id": op_id, "reason": reason, "confidence": confidence})


def log_of(server: ScriptedOpenAIServer, index: int = -1) -> str:
    return server.chat_requests[index].messages[1]["content"]


def test_one_call_with_the_whole_log_and_a_validated_answer(
    sample: Any, server: ScriptedOpenAIServer
) -> None:
    graph, case, search = sample
    server.enqueue(answer("RetrievalError", search, confidence=0.7))
    result = AllAtOnceMethod(scripted_client(server)).attribute(graph, case)
    assert (result.op_id, result.error_type, result.confidence) == (search, "RetrievalError", 0.7)
    assert result.method == "all-at-once" and result.cost.llm_calls == 1 and result.cost.input_tokens > 0
    assert [(p.kind, p.id, p.role) for p in result.path] == [
        ("op", search, None),
        ("var", "D1:7@1", PathRole.EVIDENCE),  # the steps a repair reads, found as flow finds them
        ("var", "mem-7@1", PathRole.LIVE_AT_QUESTION),
    ]
    assert result.explanation.startswith("the search missed mem-7 (prompt: all ")

    sent = server.chat_requests[0]
    assert sent.response_format["json_schema"]["name"] == "AllAtOnceAttribution"
    text = log_of(server)
    assert text.startswith("Run log (all ") and "\n[load_session#1 [construction] s1" in text
    assert text.rstrip().endswith("Reply with JSON {error_type, op_id, reason, confidence}.")
    assert (
        "Failed question (sample-0-q1): What breed is Clara's dog?" in text
        and "Evidence messages: D1:7" in text
    )
    assert f"[{search} [retrieval]" in text
    # A value is printed once: mem-6@1, read by several operations, appears with its text once.
    assert text.count("mem-6@1 s58 memory_entry: ") == 1 and text.count("mem-6@1") >= 4


def test_the_log_stops_at_the_case_and_skips_other_questions(sample: Any) -> None:
    graph, case, search = sample
    ops = case_ops(graph, case)
    stage = graph.op(search).parent_op
    assert stage is not None
    questions = [op for op in ops if op.name == "question"]
    assert [op.id for op in questions] == [stage]
    assert max(op.seq for op in ops) < max(op.seq for op in graph.ops.values())
    assert any(op.category == "evaluation" for op in ops)  # its own judge stays


def test_a_small_limit_cuts_the_log_from_the_start(sample: Any, server: ScriptedOpenAIServer) -> None:
    graph, case, search = sample
    server.enqueue(answer("RetrievalError", search))
    method = AllAtOnceMethod(scripted_client(server), max_tokens=2000)
    result = method.attribute(graph, case)
    assert result.op_id == search and "were cut to fit" in result.explanation

    text = log_of(server)
    messages = server.chat_requests[0].messages
    assert prompt_tokens(messages) <= 2000
    first_op = text.split("\n", 2)[1]
    assert first_op.startswith("[") and not first_op.startswith("[load_session#1")
    first_seq = int(first_op.split("] s", 1)[1].split()[0])
    assert first_seq > 100 and f"before s{first_seq}) were cut to fit" in text.split("\n", 1)[0]
    assert f"[{search} [retrieval]" in text and "What breed is Clara's dog?" in text

    wide, _ = AllAtOnceMethod(scripted_client(server)).messages(graph, case)
    assert prompt_tokens(wide) > 4 * prompt_tokens(messages)


def test_unknown_op_ids_and_undetermined_answers_are_undetermined(
    sample: Any, server: ScriptedOpenAIServer
) -> None:
    graph, case, _ = sample
    server.enqueue(
        answer("RetrievalError", "search#424242"),
        answer("RetrievalError", None),
        answer("Undetermined", None, "cannot tell from the log"),
    )
    method = AllAtOnceMethod(scripted_client(server))
    unknown = method.attribute(graph, case)
    assert not unknown.determined and unknown.op_id is None
    assert unknown.explanation.startswith(
        "the model named 'search#424242', which is not an operation of this run"
    )
    assert unknown.cost.llm_calls == 1
    assert "the model named None" in method.attribute(graph, case).explanation
    undecided = method.attribute(graph, case)
    assert not undecided.determined and undecided.explanation.startswith("cannot tell from the log")


def test_bad_json_is_retried_and_a_hopeless_model_is_undetermined(
    sample: Any, server: ScriptedOpenAIServer
) -> None:
    graph, case, search = sample
    server.enqueue("RetrievalError at the search", answer("ResponseError", search, confidence=3))
    result = AllAtOnceMethod(scripted_client(server)).attribute(graph, case)
    assert (result.error_type, result.confidence, result.cost.llm_calls) == ("ResponseError", 1.0, 2)
    assert "not valid JSON" in server.chat_requests[1].messages[-1]["content"]

    server.enqueue(*[json.dumps({"error_type": "Bug", "op_id": search, "reason": "", "confidence": 1})] * 3)
    hopeless = AllAtOnceMethod(scripted_client(server)).attribute(graph, case)
    assert not hopeless.determined and "no usable answer after 3 attempts" in hopeless.explanation
    assert hopeless.cost.llm_calls == 3


def test_works_on_the_sql_graph_and_reports_its_settings(
    workspace: Path, small_run: str, server: ScriptedOpenAIServer
) -> None:
    with mt.open(workspace) as ws:
        graph = ws.graph(small_run)
        (case,) = ws.cases(small_run)
        update = next(op.id for op in graph.ops_by_category("update"))
        server.enqueue(answer("UpdateError", update, "Boston became Paris"))
        method = AllAtOnceMethod(scripted_client(server), max_tokens=50_000)
        result = method.attribute(graph, case)
    assert result.op_id == update and result.error_type == "UpdateError"
    text = log_of(server)
    assert "[ingest#1 [construction] s1]" in text and "mem-1@2" in text
    assert method.name == "all-at-once" and method.settings()["max_tokens"] == 50_000
    assert set(method.settings()) == {"model", "max_tokens", "value_chars", "temperature", "prompt"}
