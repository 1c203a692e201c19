"""The mem0ai adapter on the real mem0 library (1.0.x classic or 2.x additive, whichever is installed)
against a scripted OpenAI-compatible server over real HTTP: operations, memory lifecycles, one
connected subtree per add(), token usage, swallowed errors, and nothing recorded without a run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mem0helpers import Mem0Script, Mem0Server, caroline_script, close_memory, make_memory

mem0 = pytest.importorskip("mem0", reason="mem0ai is not installed (pip install 'memtrace[mem0ai]')")

from llmhelpers import Reply  # noqa: E402

import memtrace as mt  # noqa: E402
from memtrace.adapters.mem0ai import mem0_version, pipeline_for, trace, untrace  # noqa: E402
from memtrace.graph import GraphView  # noqa: E402

PIPELINE = pipeline_for(mem0_version())
CLASSIC = PIPELINE == "classic"
USER = "caroline"


@pytest.fixture
def script() -> Mem0Script:
    return caroline_script()


@pytest.fixture
def server(script: Mem0Script) -> Iterator[Mem0Server]:
    with Mem0Server(script) as running:
        yield running


@pytest.fixture
def memory(server: Mem0Server, tmp_path: Path) -> Iterator[Any]:
    made = make_memory(server, tmp_path / "mem0")
    yield made
    close_memory(made)


def add(memory: Any, *texts: str) -> dict[str, Any]:
    return memory.add([{"role": "user", "content": t} for t in texts], user_id=USER)


def search(memory: Any, query: str) -> dict[str, Any]:
    if CLASSIC:
        return memory.search(query, user_id=USER, limit=5)
    return memory.search(query, filters={"user_id": USER}, top_k=5, threshold=0.0)


def events(result: dict[str, Any]) -> list[str]:
    return [r["event"] for r in result["results"]]


@pytest.fixture
def view(workspace: Path) -> Iterator[Callable[[], GraphView]]:
    """Opens the workspace (kept open until the test ends) and loads the run `mem0`."""
    opened: list[Any] = []

    def load() -> GraphView:
        opened.append(mt.open(workspace))
        return opened[-1].view("mem0")

    yield load
    for ws in opened:
        ws.close()


def under(graph: GraphView, op_id: str) -> set[str]:
    """The operations nested (at any depth) inside `op_id`, itself included."""
    found = {op_id}
    changed = True
    while changed:
        changed = False
        for op in graph.ops.values():
            if op.parent_op in found and op.id not in found:
                found.add(op.id)
                changed = True
    return found


def test_three_adds_record_add_update_delete_lifecycles(
    memory: Any, workspace: Path, view: Callable[[], GraphView]
) -> None:
    tracer = trace(memory)
    assert tracer.pipeline == PIPELINE and PIPELINE in tracer.describe()
    with mt.run(workspace, name="mem0", system="mem0ai"):
        first = add(memory, "Caroline: I moved to Boston last year.", "Caroline: I have a guitar named Blue.")
        second = add(memory, "Caroline: We found a flat in Back Bay.")
        third = add(memory, "Caroline: I gave away my old guitar.")
        if not CLASSIC:  # 2.x changes a memory only through explicit calls
            boston = next(r["id"] for r in first["results"] if "Boston" in r["memory"])
            guitar = next(r["id"] for r in first["results"] if "guitar" in r["memory"])
            memory.update(boston, "Caroline lives in Back Bay, Boston")
            memory.delete(guitar)
    assert events(first) == ["ADD", "ADD"]
    graph = view()
    assert graph.run.metadata["mem0ai"] == {"version": mem0_version(), "pipeline": PIPELINE}
    if CLASSIC:
        assert events(second) == ["UPDATE"] and events(third) == ["DELETE"]
    names = {op.name: op.category for op in graph.ops.values()}
    writes = {"create_memory", "update_memory"} if CLASSIC else {"insert_memories", "update_memory"}
    expected = {"mem0.add": "construction", "extract_facts": "extraction", "search_memories": "retrieval"}
    expected |= {name: "update" for name in writes} | {"delete_memory": "deletion", "embed": "llm"}
    if CLASSIC:
        expected["update_memory_decision"] = "update"
    assert {name: names.get(name) for name in expected} == expected
    lifecycles = {unit: [e.change for e in graph.lifecycle(unit)] for unit in graph.memory_units()}
    changed = sorted(c for c in lifecycles.values() if len(c) > 1)
    assert changed == [["create", "delete"], ["create", "update"]]
    assert len(lifecycles) == (2 if CLASSIC else 4)  # 2.x adds the later facts as new memories
    moved = next(u for u, c in lifecycles.items() if c == ["create", "update"])
    assert graph.lifecycle(moved)[-1].value["memory"] == "Caroline lives in Back Bay, Boston"
    changes = [e for unit in graph.memory_units() for e in graph.lifecycle(unit)]
    if CLASSIC:  # every change is made inside the decision that chose it
        for entry in changes:
            assert graph.op(entry.op.parent_op).name == "update_memory_decision"
        rows = [row for op in graph.ops.values() for row in op.metadata.get("history", [])]
        assert sorted(event for _, event in rows) == ["ADD", "ADD", "DELETE", "UPDATE"]
        assert {unit for unit, _ in rows} == set(graph.memory_units())


def test_each_add_is_one_connected_subtree(
    memory: Any, workspace: Path, view: Callable[[], GraphView]
) -> None:
    """mem0 1.0.x runs add()'s inner step in a thread pool: every step still nests in its add()."""
    trace(memory)
    with mt.run(workspace, name="mem0", system="mem0ai"):
        add(memory, "Caroline: I moved to Boston last year.", "Caroline: I have a guitar named Blue.")
        add(memory, "Caroline: We found a flat in Back Bay.")
    graph = view()
    adds = sorted((op for op in graph.ops.values() if op.name == "mem0.add"), key=lambda o: o.seq)
    assert len(adds) == 2 and all(op.parent_op is None for op in adds)
    subtrees = [under(graph, op.id) for op in adds]
    assert not subtrees[0] & subtrees[1]
    assert set().union(*subtrees) == set(graph.ops)  # nothing recorded outside an add
    for subtree in subtrees:
        assert {graph.op(i).name for i in subtree} >= {"extract_facts", "extract_facts.llm", "embed"}
    # data flows from the messages through the extraction to the memory units the add wrote
    first = subtrees[0]
    messages = [v for v in graph.vars.values() if v.category == "message"]
    assert len(messages) == 3
    units = [v for v in graph.vars.values() if v.category == "memory_entry" and v.seq < adds[1].seq]
    assert len(units) == 2
    for unit in units:
        lineage = {n.id for n in graph.ancestors(unit.id)}
        assert {m.id for m in messages[:2]} <= lineage
        assert {i for i in lineage if i in graph.ops} <= first


def test_search_reads_the_units_and_usage_comes_from_the_openai_calls(
    memory: Any, workspace: Path, view: Callable[[], GraphView]
) -> None:
    tracer = trace(memory)
    with mt.run(workspace, name="mem0", system="mem0ai"):
        add(memory, "Caroline: I moved to Boston last year.", "Caroline: I have a guitar named Blue.")
        found = search(memory, "Where does Caroline live?")
        record = tracer.last_search()
    assert record is not None and any("Boston" in m["memory"] for m in found["results"])
    graph = view()
    op = next(op for op in graph.ops.values() if op.name == "search")
    assert op.category == "retrieval"
    read = [v for v in graph.inputs(op.id) if v.category == "memory_entry"]
    assert {v.name for v in read} == {m["id"] for m in found["results"]}
    assert graph.value(record.query_var) == "Where does Caroline live?"
    assert graph.value(record.retrieved_var) == [m["memory"] for m in found["results"]]
    assert any(child.name == "embed" for child in graph.children(op.id))  # its thread kept the op
    assert op.metadata["remote"] is False  # qdrant in a local folder: an INTERNAL span, not CLIENT
    chats = [op for op in graph.ops.values() if op.name.endswith(".llm")]
    assert chats and all(op.metadata["usage"]["input_tokens"] > 0 for op in chats)
    assert all(op.metadata["usage"]["output_tokens"] > 0 for op in chats)


@pytest.mark.skipif(not CLASSIC, reason="mem0 2.x makes no update-decision call")
def test_a_failed_update_decision_mem0_swallows_is_recorded(
    memory: Any, server: Mem0Server, workspace: Path, view: Callable[[], GraphView]
) -> None:
    trace(memory)
    with mt.run(workspace, name="mem0", system="mem0ai"):
        server.enqueue('{"facts": ["Caroline lives in Boston"]}', Reply.error(400, "model overloaded"))
        result = add(memory, "Caroline: I moved to Boston last year.")
    assert result["results"] == []  # mem0 logged the error and went on
    graph = view()
    decision = next(op for op in graph.ops.values() if op.name == "update_memory_decision")
    assert decision.status == "error" and "model overloaded" in decision.metadata["error"]
    add_op = next(op for op in graph.ops.values() if op.name == "mem0.add")
    assert add_op.status == "ok"


def test_an_unreadable_extraction_reply_is_recorded(
    memory: Any, server: Mem0Server, workspace: Path, view: Callable[[], GraphView]
) -> None:
    trace(memory)
    with mt.run(workspace, name="mem0", system="mem0ai"):
        server.enqueue("I cannot do that.")
        result = add(memory, "Caroline: I moved to Boston last year.")
    assert result["results"] == []
    graph = view()
    extraction = next(op for op in graph.ops.values() if op.name == "extract_facts")
    assert (
        extraction.status == "error" and "could not read the extraction reply" in extraction.metadata["error"]
    )


def test_without_a_run_nothing_is_recorded_and_untrace_restores(
    memory: Any, workspace: Path, view: Callable[[], GraphView]
) -> None:
    original = type(memory).add
    tracer = trace(memory)
    assert trace(memory) is tracer  # idempotent
    assert events(add(memory, "Caroline: I moved to Boston last year.")) == ["ADD"]
    assert not (workspace / "memtrace.db").exists()
    untrace(memory)
    assert "add" not in vars(memory) and type(memory).add is original
    with mt.run(workspace, name="mem0", system="mem0ai"):
        add(memory, "Caroline: I have a guitar named Blue.")
    assert not view().ops
