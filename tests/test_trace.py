"""The recorder: seqs, versions, memory lifecycles, content addressing, failure handling, concurrency."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.graph import MEMORY_ENTRY


def test_ops_and_versions_get_increasing_seqs(workspace: Path, open_ws: OpenWorkspace) -> None:
    with mt.run(workspace, name="r") as run, mt.op("step", category="extraction") as op:
        first = op.output("x", 1)
        second = op.output("x", 2)
    graph = open_ws(workspace).graph(run.id)
    assert (first, second) == ("x@1", "x@2")
    seqs = [graph.op(op.id).seq, graph.var(first).seq, graph.var(second).seq]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3


def test_input_reuses_identical_latest_version_and_versions_changes(workspace: Path) -> None:
    with mt.run(workspace, name="r"):
        with mt.op("a") as op:
            v1 = op.input("prompt", "same text")
        with mt.op("b") as op:
            v2 = op.input("prompt", "same text")
        with mt.op("c") as op:
            v3 = op.input("prompt", "edited text")
    assert v1 == v2 == "prompt@1"
    assert v3 == "prompt@2"


def test_identical_values_share_one_blob(workspace: Path, open_ws: OpenWorkspace) -> None:
    big = {"memory": "x" * 10_000}
    with mt.run(workspace, name="r"), mt.op("a") as op:
        op.output("a", big)
        op.output("b", big)
    store = open_ws(workspace).store
    assert store.conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 1
    graph = open_ws(workspace).graph("r")
    assert graph.value("a@1") == big == graph.value("b@1")


def test_non_json_values_are_stored_as_readable_text(workspace: Path, open_ws: OpenWorkspace) -> None:
    class Fact:
        def __repr__(self) -> str:
            return "Fact(Caroline, Boston)"

    with mt.run(workspace, name="r"), mt.op("a") as op:
        op.output("fact", Fact())
        op.output("mixed", {"fact": Fact()})
    graph = open_ws(workspace).graph("r")
    assert graph.value("fact@1") == "Fact(Caroline, Boston)"
    assert "Fact(Caroline, Boston)" in graph.value("mixed@1")


def test_memory_lifecycle_records_create_update_delete(
    workspace: Path, small_run: str, open_ws: OpenWorkspace
) -> None:
    graph = open_ws(workspace).graph(small_run)
    life = graph.lifecycle("mem-1")
    assert [e.change for e in life] == ["create", "update"]
    assert [e.op.name for e in life] == ["extract_facts", "update_memory"]
    assert life[1].value == {"memory": "Caroline lives in Paris"}
    deleted = graph.lifecycle("mem-2")
    assert [e.change for e in deleted] == ["create", "delete"]
    assert deleted[-1].version.deleted and deleted[-1].version.category == MEMORY_ENTRY


def test_memory_unit_misuse_is_refused(workspace: Path) -> None:
    with mt.run(workspace, name="r") as run, mt.op("a") as op:
        unit = run.memory("m")
        with pytest.raises(ValueError, match="never created"):
            unit.update("x", by=op)
        unit.create("x", by=op)
        with pytest.raises(ValueError, match="already exists"):
            unit.create("y", by=op)
        unit.delete(by=op)
        with pytest.raises(ValueError, match="was deleted"):
            unit.delete(by=op)


def test_in_place_mutation_becomes_a_new_version_linked_to_the_old(
    workspace: Path, open_ws: OpenWorkspace
) -> None:
    buffer: list[str] = []
    with mt.run(workspace, name="r"):
        mt.track(buffer, "buffer")
        with mt.op("append") as op:
            buffer.append("hello")
            first = op.mutated(buffer)
        with mt.op("append") as op:
            buffer.append("world")
            second = op.mutated(buffer)
    graph = open_ws(workspace).graph("r")
    assert graph.value(first) == ["hello"] and graph.value(second) == ["hello", "world"]
    assert first in [v.id for v in graph.inputs(graph.producers(second)[0].id)]


def test_mutation_without_a_name_explains_itself(workspace: Path) -> None:
    with mt.run(workspace, name="r"), mt.op("a") as op, pytest.raises(ValueError, match="needs a name"):
        op.mutated([])


def test_nested_operations_record_their_parent(workspace: Path, open_ws: OpenWorkspace) -> None:
    with (
        mt.run(workspace, name="r"),
        mt.op("extract_facts", category="extraction") as outer,
        mt.op("llm.chat", category="llm") as inner,
    ):
        pass
    graph = open_ws(workspace).graph("r")
    assert graph.op(inner.id).parent_op == outer.id
    assert [o.id for o in graph.children(outer.id)] == [inner.id]


def test_traced_decorator_records_arguments_and_links_earlier_results(
    workspace: Path, open_ws: OpenWorkspace
) -> None:
    @mt.traced(category="extraction")
    def extract(text: str) -> list[str]:
        return [text.upper()]

    @mt.traced(category="update")
    def store_facts(facts: list[str], limit: int = 3) -> int:
        return len(facts[:limit])

    with mt.run(workspace, name="r"):
        facts = extract("caroline moved")
        store_facts(facts, limit=2)
    graph = open_ws(workspace).graph("r")
    (store_op,) = [o for o in graph.ops_by_category("update")]
    inputs = {v.name: graph.value(v.id) for v in graph.inputs(store_op.id)}
    assert inputs == {"extract.return": ["CAROLINE MOVED"], "store_facts.limit": 2}
    assert any(n.id.startswith("extract#") for n in graph.ancestors(store_op.id))


def test_traced_async_function(workspace: Path, open_ws: OpenWorkspace) -> None:
    @mt.traced(category="retrieval")
    async def search(query: str) -> list[str]:
        await asyncio.sleep(0)
        return [query]

    async def main() -> None:
        with mt.run(workspace, name="r"):
            await search("boston")

    asyncio.run(main())
    graph = open_ws(workspace).graph("r")
    (op,) = graph.ops_by_category("retrieval")
    assert [graph.value(v.id) for v in graph.outputs(op.id)] == [["boston"]]


def test_disabled_or_without_run_records_nothing(workspace: Path) -> None:
    @mt.traced
    def f(x: int) -> int:
        return x + 1

    assert f(1) == 2
    with mt.op("outside") as op:
        assert op.output("x", 1) is None
    mt.disable()
    try:
        with mt.run(workspace, name="r") as run:
            assert f(2) == 3
            with mt.op("a") as op:
                op.output("x", 1)
            run.memory("m").create("v", by=op)
            run.case("q?", gold="a").judge(True)
    finally:
        mt.enable()
    assert run.id is None
    assert not workspace.exists()


def test_exception_keeps_recorded_data_and_marks_run_incomplete(
    workspace: Path, open_ws: OpenWorkspace
) -> None:
    with pytest.raises(RuntimeError), mt.run(workspace, name="r") as run:
        with mt.op("good") as op:
            op.output("kept", "value")
        with mt.op("bad"):
            raise RuntimeError("endpoint unreachable")
    ws = open_ws(workspace)
    recorded = ws.run(run.id)
    assert recorded.status == "incomplete"
    assert "RuntimeError: endpoint unreachable" in recorded.error
    graph = ws.graph(run.id)
    assert graph.value("kept@1") == "value"
    assert graph.op("bad#3").status == "error"


def test_keyboard_interrupt_marks_run_interrupted(workspace: Path, open_ws: OpenWorkspace) -> None:
    with pytest.raises(KeyboardInterrupt), mt.run(workspace, name="r") as run, mt.op("a") as op:
        op.output("x", 1)
        raise KeyboardInterrupt
    recorded = open_ws(workspace).run(run.id)
    assert recorded.status == "incomplete" and "interrupted" in recorded.error
    assert open_ws(workspace).graph(run.id).value("x@1") == 1


def test_batches_are_flushed_before_the_run_ends(workspace: Path, open_ws: OpenWorkspace) -> None:
    with mt.run(workspace, name="r") as run:
        run.flush_every = 10
        for i in range(20):
            with mt.op("a") as op:
                op.output("x", i)
        assert open_ws(workspace).store.count("vars", run.id) >= 10


def test_threads_record_concurrently_with_unique_ordered_seqs(
    workspace: Path, open_ws: OpenWorkspace
) -> None:
    def work(i: int) -> None:
        for j in range(50):
            with mt.op(f"worker{i}") as op:
                op.input(f"in{i}", j)
                op.output(f"out{i}", j * 2)

    with mt.run(workspace, name="r") as run, ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(work, range(8)))
    graph = open_ws(workspace).view(run.id)
    seqs = [o.seq for o in graph.ops.values()] + [v.seq for v in graph.vars.values()]
    assert len(seqs) == len(set(seqs)) == 8 * 50 * 3
    for i in range(8):
        versions = graph.versions(f"out{i}")
        assert [v.version for v in versions] == list(range(1, 51))
        assert [v.seq for v in versions] == sorted(v.seq for v in versions)
        for op in (o for o in graph.ops.values() if o.name == f"worker{i}"):
            (out,) = graph.outputs(op.id)
            assert out.seq > op.seq


def test_asyncio_tasks_keep_their_own_current_operation(workspace: Path, open_ws: OpenWorkspace) -> None:
    async def case(i: int) -> None:
        with mt.op(f"case{i}", category="response") as outer:
            await asyncio.sleep(0.001 * (3 - i % 3))
            with mt.op("llm.chat", category="llm") as inner:
                await asyncio.sleep(0)
                inner.output(f"resp{i}", i)
            assert mt.current_op() is outer

    async def main() -> str:
        with mt.run(workspace, name="r") as run:
            await asyncio.gather(*(case(i) for i in range(10)))
            return run.id

    run_id = asyncio.run(main())
    graph = open_ws(workspace).view(run_id)
    for op in graph.ops.values():
        if op.name == "llm.chat":
            parent = graph.op(op.parent_op)
            (out,) = graph.outputs(op.id)
            assert out.name == f"resp{parent.name.removeprefix('case')}"


def test_propagate_carries_the_current_operation_into_threads(
    workspace: Path, open_ws: OpenWorkspace
) -> None:
    seen: list[str | None] = []

    def worker() -> None:
        with mt.op("child") as child:
            seen.append(child.id)

    with mt.run(workspace, name="r"), mt.op("parent") as parent:
        thread = threading.Thread(target=mt.propagate(worker))
        thread.start()
        thread.join()
    graph = open_ws(workspace).graph("r")
    assert graph.op(seen[0]).parent_op == parent.id


def test_capture_source_records_file_and_line(workspace: Path, open_ws: OpenWorkspace) -> None:
    with mt.run(workspace, name="r", capture_source=True), mt.op("a") as op:
        pass
    source = open_ws(workspace).graph("r").op(op.id).metadata["source"]
    assert source.startswith(__file__) and source.split(":")[-1].isdigit()


def test_cases_record_prediction_and_verdict(workspace: Path, small_run: str, open_ws: OpenWorkspace) -> None:
    (case,) = open_ws(workspace).cases(small_run)
    assert case.gold == ["Boston"] and case.prediction == "Paris" and case.failed
    assert case.evidence == ["D1:1"] and case.prediction_var == "prediction@1"


def test_a_muted_thread_records_nothing_while_the_run_goes_on(
    workspace: Path, open_ws: OpenWorkspace
) -> None:
    from memtrace.trace import current_run, muted

    seen: list[object] = []

    def aside() -> None:  # a thread of its own: without muting it would fall back to the open run
        with muted():
            seen.append(current_run())
            with mt.op("aside", category="query") as op:
                op.output("ignored", "x")

    with mt.run(workspace, name="r") as run, mt.op("kept", category="query") as op:
        thread = threading.Thread(target=aside)
        thread.start()
        thread.join()
        op.output("seen", "y")
    graph = open_ws(workspace).graph(run.id)
    assert [o.name for o in graph.ops_by_category("query")] == ["kept"] and seen == [None]
