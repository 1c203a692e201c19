"""Memory and context text keeps the id of the message each line came from, whatever the system."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import OpenWorkspace
from memtrace.datasets import Conversation, Question, Session, Turn
from memtrace.systems import run_conversation
from memtrace.systems.evermemos import EverMemOSSystem
from memtrace.systems.long_context import LongContext
from memtrace.systems.mem0 import Mem0System
from memtrace.systems.rag import RAGSystem
from memtrace.text import untag


def multi_line_conversation() -> Conversation:
    """LoCoMo has turns ending in newlines (26 in locomo-dev): their date stamp used to sit alone."""
    turns = [
        Turn("D1:1", "Clara", "I adopted a dog named Pepper last month!\nShe is a labrador.\n\n", 1, None),
        Turn("D1:2", "Diego", "That's lovely, Clara. I work as a chef at a seafood place.\n", 1, None),
    ]
    session = Session(1, "1:56 pm on 8 May, 2023", turns)
    question = Question("q1", "What breed is Clara's dog?", ["labrador"], ["D1:1"], "single-hop")
    return Conversation("multi", ["Clara", "Diego"], [session], [question], "test")


@pytest.mark.parametrize("system", [LongContext, RAGSystem])
def test_every_line_of_a_multi_line_message_keeps_its_tag(
    tmp_path: Path, system: type, open_ws: OpenWorkspace
) -> None:
    result = run_conversation(system(), multi_line_conversation(), tmp_path)
    graph = open_ws(tmp_path).graph(result.run_id)
    memory = [graph.value(graph.versions(u)[-1].id) for u in graph.memory_units()]
    lines = [line for value in memory for item in (value if isinstance(value, list) else [value])
             for line in item.split("\n")]  # fmt: skip
    assert len(lines) == 3  # blank lines dropped
    assert all(untag(line)[0] in ("D1:1", "D1:2") for line in lines), lines
    stamps = [line for line in lines if "[said on 8 May 2023]" in line]
    assert len(stamps) == 2 and all(untag(line)[1].strip() != "[said on 8 May 2023]" for line in stamps)


def test_evermemos_buffers_every_line_with_its_tag(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    result = run_conversation(EverMemOSSystem(), multi_line_conversation(), tmp_path)
    graph = open_ws(tmp_path).graph(result.run_id)
    buffers = [graph.value(v.id) for v in graph.versions("message_buffer")]
    lines = [line for buffer in buffers for entry in buffer for line in entry.split("\n")]
    assert lines and all(untag(line)[0] in ("D1:1", "D1:2") for line in lines)


def test_mem0_answer_context_keeps_each_memorys_sources(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    result = run_conversation(Mem0System(), multi_line_conversation(), tmp_path)
    ws = open_ws(tmp_path)
    graph = ws.graph(result.run_id)
    (case,) = ws.cases(result.run_id)
    answer = graph.producers(case.prediction_var)[-1]
    (context,) = [v for v in graph.inputs(answer.id) if v.category == "retrieved"]
    items = graph.value(context.id)
    assert items
    sources = {tuple(graph.value(v.id)["sources"]) for v in graph.inputs(graph.producers(context.id)[-1].id)
               if v.category == "memory_entry"}  # fmt: skip
    for item in items:
        ids, text = untag(item)
        assert ids is not None and tuple(ids.split(",")) in sources, item
        assert text and not text.startswith("[")


def test_evermemos_answer_context_keeps_each_memorys_sources(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    from memtrace.datasets import sample_conversation

    result = run_conversation(EverMemOSSystem(), sample_conversation(0), tmp_path)
    ws = open_ws(tmp_path)
    graph = ws.graph(result.run_id)
    case = ws.cases(result.run_id)[0]
    answer = graph.producers(case.prediction_var)[-1]
    (context,) = [v for v in graph.inputs(answer.id) if v.category == "retrieved"]
    retrieval = graph.producers(context.id)[-1]
    sources = {",".join(graph.value(v.id)["sources"]) for v in graph.inputs(retrieval.id)
               if v.category == "memory_entry"}  # fmt: skip
    lines = [line for item in graph.value(context.id) for line in item.split("\n")]
    assert lines and all(untag(line)[0] in sources for line in lines), lines
