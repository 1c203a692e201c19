"""Graph queries, each answered the same way from SQL (`Graph`) and from memory (`GraphView`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memtrace as mt
from memtrace.graph import GraphQueries, NotFoundError, checkpoints


@pytest.fixture(params=["sql", "memory"])
def graph(request: pytest.FixtureRequest, workspace: Path, small_run: str) -> Iterator[GraphQueries]:
    with mt.open(workspace) as ws:
        yield ws.graph(small_run) if request.param == "sql" else ws.view(small_run)


def op_named(graph: GraphQueries, name: str) -> str:
    (op,) = [o for o in graph.ops_by_category(graph_category(graph, name)) if o.name == name]
    return op.id


def graph_category(graph: GraphQueries, name: str) -> str:
    categories = {"ingest": "construction", "extract_facts": "extraction", "update_memory": "update"}
    return categories[name]


def test_ancestors_follow_data_back_to_the_message(graph: GraphQueries) -> None:
    names = [(n.kind, n.id) for n in graph.ancestors("mem-1@2")]
    assert names[0] == ("op", op_named(graph, "update_memory"))
    assert ("var", "mem-1@1") in names and ("op", op_named(graph, "extract_facts")) in names
    assert names[-2:] == [("var", "message@1"), ("op", op_named(graph, "ingest"))]
    depths = [n.depth for n in graph.ancestors("mem-1@2")]
    assert depths == sorted(depths)


def test_lineage_depth_limit(graph: GraphQueries) -> None:
    update = op_named(graph, "update_memory")
    assert [n.id for n in graph.ancestors("mem-1@2", depth=1)] == [update]
    assert [n.id for n in graph.ancestors("mem-1@2", depth=2)] == [update, "mem-1@1"]


def test_descendants_of_the_message_reach_every_unit_it_fed(graph: GraphQueries) -> None:
    reached = {n.id for n in graph.descendants("message@1")}
    assert {"extract_facts#3", "facts@1", "mem-1@1", "mem-1@2", "mem-2@1", "mem-2@2"} <= reached
    assert "prediction@1" not in reached


def test_operation_subgraph(graph: GraphQueries) -> None:
    sub = graph.subgraph(op_named(graph, "extract_facts"))
    assert [v.id for v in sub.inputs] == ["message@1"]
    assert [v.id for v in sub.outputs] == ["facts@1", "mem-1@1", "mem-2@1"]
    assert sub.op.category == "extraction" and sub.children == []


def test_lifecycle_lists_versions_with_their_operations(graph: GraphQueries) -> None:
    life = graph.lifecycle("mem-2")
    assert [(e.change, e.op.name if e.op else None) for e in life] == [
        ("create", "extract_facts"),
        ("delete", "delete_memory"),
    ]
    with pytest.raises(NotFoundError):
        graph.lifecycle("no-such-unit")


def test_memory_state_at_a_seq(graph: GraphQueries) -> None:
    create_seq = graph.var("mem-2@1").seq
    update_seq = graph.var("mem-1@2").seq
    delete_seq = graph.var("mem-2@2").seq
    assert graph.memory_values_at(create_seq) == {
        "mem-1": {"memory": "Caroline lives in Boston"},
        "mem-2": {"memory": "Caroline likes hiking"},
    }
    assert graph.memory_values_at(update_seq)["mem-1"] == {"memory": "Caroline lives in Paris"}
    assert set(graph.memory_values_at(delete_seq)) == {"mem-1"}
    assert graph.memory_values_at(0) == {}
    assert set(graph.memory_state_at()) == {"mem-1"}


def test_diff_between_two_seqs(graph: GraphQueries) -> None:
    start = graph.var("mem-2@1").seq
    end = graph.var("mem-2@2").seq
    diff = graph.diff(start, end)
    assert diff.created == {}
    assert diff.changed == {
        "mem-1": ({"memory": "Caroline lives in Boston"}, {"memory": "Caroline lives in Paris"})
    }
    assert diff.deleted == {"mem-2": {"memory": "Caroline likes hiking"}}
    everything = graph.diff(0, end)
    assert set(everything.created) == {"mem-1"} and not everything.deleted
    assert not graph.diff(end, end)


def test_operations_by_category(graph: GraphQueries) -> None:
    assert [o.name for o in graph.ops_by_category("retrieval")] == ["search"]
    assert graph.ops_by_category("no-such-category") == []


def test_unknown_nodes_raise_not_found(graph: GraphQueries) -> None:
    with pytest.raises(NotFoundError, match="nope"):
        graph.ancestors("nope")
    with pytest.raises(NotFoundError):
        graph.op("nope#1")


# -- SQL and memory agree on random pipelines -------------------------------------------------

actions = st.lists(
    st.tuples(
        st.sampled_from(["create", "update", "delete", "read", "write"]),
        st.integers(min_value=0, max_value=4),
        st.integers(min_value=0, max_value=3),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=actions, every=st.sampled_from([2, 3, 4096]))
def test_sql_and_memory_views_agree(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, steps: list, every: int
) -> None:
    """Also with memory-state checkpoints every few versions, so the SQL side replays from them."""
    monkeypatch.setattr(checkpoints, "CHECKPOINT_EVERY", every)
    workspace = tmp_path_factory.mktemp("ws")
    with mt.run(workspace, name="random") as run:
        for i, (action, unit, value) in enumerate(steps):
            with mt.op(f"step{i}", category=action) as op:
                handle = run.memory(f"u{unit}")
                if action == "create" and not handle.exists:
                    handle.create({"v": value}, by=op)
                elif action == "update" and handle.exists:
                    handle.update({"v": value + 10}, by=op)
                elif action == "delete" and handle.exists:
                    handle.delete(by=op)
                elif action == "read":
                    op.input(f"x{unit}", value)
                else:
                    op.output(f"x{unit}", value)
    with mt.open(workspace) as ws:
        sql, memory = ws.graph(run.id), ws.view(run.id)
        last = max(v.seq for v in memory.vars.values()) if memory.vars else 0
        for seq in range(0, last + 2):
            assert sql.memory_values_at(seq) == memory.memory_values_at(seq)
            assert sql.diff(0, seq) == memory.diff(0, seq)
            assert sql.diff(seq // 2, seq) == memory.diff(seq // 2, seq)
        for node in [*memory.vars, *memory.ops]:
            for depth in (1, 3, None):
                assert sql.ancestors(node, depth) == memory.ancestors(node, depth)
                assert sql.descendants(node, depth) == memory.descendants(node, depth)
        for name in sql.memory_units():
            assert [e.version.id for e in sql.lifecycle(name)] == [
                e.version.id for e in memory.lifecycle(name)
            ]
