"""Importing graphs recorded by the real smartcomment in MemBase's conventions (REFERENCE.md)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from membase_graphs import DELETED, IDK, Recorded, membase_graphs, stable
from smartcomment import comment_graph, comment_op, comment_session
from smartcomment.runtime import ExecNetwork

from memtrace.graph import GraphView, Store
from memtrace.interop import export_smartcomment, import_smartcomment


@functools.cache
def _recorded() -> dict[str, list[Recorded]]:
    return membase_graphs()


def _copy(split: str, index: int) -> Recorded:
    original = _recorded()[split][index]
    return Recorded(json.loads(json.dumps(original.graph)), dict(original.ops), dict(original.queries))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "ws")
    yield s
    s.close()


def _view(store: Store, tmp_path: Path, recorded: Recorded, name: str = "graph.json") -> GraphView:
    path = tmp_path / name
    path.write_text(json.dumps(recorded.graph))
    return GraphView(store, import_smartcomment(store, path))


def _node(recorded: Recorded, value: str) -> str:
    return next(n["full_node_id"] for n in recorded.graph["data"]["nodes"] if n["value"] == value)


def test_search_links_to_existing_memories_are_reads_not_writes(store, tmp_path):
    recorded = _copy("mem0", 0)
    view = _view(store, tmp_path, recorded)
    search = view.op(recorded.ops["search Where did Caroline move to in March?"])
    query = recorded.queries["Where did Caroline move to in March?"]
    assert {v.id for v in view.inputs(search.id)} == {query, "mem-6@1"}
    assert view.outputs(search.id) == []
    # mem-6@1 was written once, by the update that added it, however often it was found
    assert [op.id for op in view.producers("mem-6@1")] == [recorded.ops["update D2:2"]]
    assert view.op(recorded.ops["update D2:2"]).seq < view.var("mem-6@1").seq < search.seq


def test_a_link_to_the_shared_deleted_node_deletes_the_entry(store, tmp_path):
    recorded = _copy("mem0", 1)
    view = _view(store, tmp_path, recorded)
    marker = _node(recorded, "'DELETED'")
    assert view.value(marker) == "DELETED"  # unquoted
    deleting = {recorded.ops["update D2:1"]: "mem-3", recorded.ops["update D2:3"]: "mem-5"}
    for op_id, unit in deleting.items():
        entries = view.lifecycle(unit)
        assert [e.change for e in entries] == ["create", "delete"]
        assert entries[-1].op is not None and entries[-1].op.id == op_id
        assert view.op(op_id).seq < entries[-1].version.seq
        assert marker in {v.id for v in view.outputs(op_id)}
    live = view.memory_state_at()
    assert "mem-3" not in live and "mem-5" not in live and "mem-4" in live
    assert view.var(marker).name not in view.memory_units()  # the marker is not a memory unit
    assert view.var(marker).category == "deletion_marker" and not view.var(marker).deleted
    # before the deletion the unit was live
    assert "mem-3" in view.memory_state_at(view.op(recorded.ops["update D2:1"]).seq - 1)


def test_an_entry_merely_linked_to_a_value_is_not_deleted(store, tmp_path):
    """Only the DELETED value marks a deletion: an UPDATE links entries to other values and keeps them."""
    recorded = _copy("mem0", 0)
    view = _view(store, tmp_path, recorded)
    assert [e.change for e in view.lifecycle("mem-2")] == ["create", "update"]
    assert "mem-2" in view.memory_state_at()


def test_values_are_decoded_from_repr_and_json_text(store, tmp_path):
    recorded = _copy("rag", 0)
    view = _view(store, tmp_path, recorded)
    question = "What is Jon's dance studio called?"
    assert view.value(recorded.queries[question]) == question
    document = view.value("doc-1@1")
    assert document.split("\n") == [
        "[D1:1] Jon: I opened my dance studio downtown in June.",
        "[D1:2] Gina: That is amazing, what is it called?",
    ]
    buffer = max(view.versions("message_buffer"), key=lambda v: len(view.value(v.id) or []))
    assert isinstance(view.value(buffer.id), list)
    mem0 = _view(store, tmp_path, _copy("mem0", 0), "mem0.json")
    assert mem0.value("mem-1@1") == {
        "id": "mem-1",
        "memory": "Caroline adopted a puppy",
        "timestamp": "2023-05-08",
    }


def test_chained_edges_inside_one_operation_are_outputs_not_inputs(store, tmp_path):
    """message -> raw response -> cleaned -> facts, all in extract_facts: only the message and prompt
    have in-degree 0 there, so only they are its inputs (the rule REFERENCE.md gives)."""
    recorded = _copy("mem0", 0)
    view = _view(store, tmp_path, recorded)
    extract = recorded.ops["extract D1:1"]
    assert {v.id for v in view.inputs(extract)} == {"D1:1@1", "fact-extraction-system-prompt@1"}
    made = {v.name.split(":")[0] for v in view.outputs(extract)}
    assert made == {
        "raw_fact_extraction_response",
        "fact_extraction_response_with_code_block_removing",
        "extracted_facts",
    }
    for v in view.outputs(extract):
        assert view.op(extract).seq < v.seq
        assert extract not in {op.id for op in view.consumers(v.id)}


def test_export_reproduces_the_membase_file(store, tmp_path):
    for split, index in (("mem0", 1), ("rag", 0)):
        recorded = _copy(split, index)
        view = _view(store, tmp_path, recorded, f"{split}.json")
        exported = export_smartcomment(store, view.run.id)
        assert exported == recorded.graph
        loaded = ExecNetwork.import_graph(exported)
        assert loaded.edge_count == len(recorded.graph["data"]["edges"])


def test_every_judged_question_of_an_annotated_graph_is_a_case(store, tmp_path):
    recorded = _copy("mem0", 0)
    view = _view(store, tmp_path, recorded)
    cases = store.cases(view.run.id)
    labels = store.annotations(view.run.id)
    assert len(labels) == len(recorded.graph["data"]["annotations"]) == 6
    assert {c.verdict for c in cases} == {"wrong", "correct"}
    assert len(cases) == len(recorded.queries)
    assert {c.metadata["query_var"] for c in cases} == set(recorded.queries.values())
    shared = [c for c in cases if c.prediction == IDK]
    assert len(shared) == 2 and len({c.prediction_var for c in shared}) == 1  # one shared prediction node


def test_a_unit_version_written_as_deleted_is_that_unit_deleted(store, tmp_path):
    """Not every DELETED node is the shared marker: a unit whose next version is DELETED was deleted
    in place, and stays a memory unit (its versions must not read as live)."""
    with comment_graph(graph_id="in-place") as graph:
        with comment_session(session_name="construction"):
            entry = ("Caroline likes tea", {"id_strategy": stable("mem-9"), "category": "memory_entry"})
            comment_op(op_name="add", category="update", inputs=[], outputs=[entry])
            gone = (DELETED, {"id_strategy": stable("mem-9"), "category": "memory_entry"})
            comment_op(op_name="forget", category="deletion", inputs=[entry], outputs=[gone])
        exported = graph.export_graph()
    view = _view(store, tmp_path, Recorded(exported))
    assert [e.change for e in view.lifecycle("mem-9")] == ["create", "delete"]
    assert view.var("mem-9@2").category == "memory_entry"
    assert "mem-9" not in view.memory_state_at()
    assert export_smartcomment(store, view.run.id) == exported


def test_inspect_shows_entries_deleted_by_the_marker_as_deleted(tmp_path):
    recorded = _copy("mem0", 1)
    path = tmp_path / "conv-h02.json"
    path.write_text(json.dumps(recorded.graph))
    memtrace = Path(sys.executable).with_name("memtrace")
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    for args in (
        ("import", path, "-w", tmp_path / "ws"),
        ("inspect", tmp_path / "ws", "conv-h02", "--json", tmp_path / "i.json"),
    ):
        subprocess.run(
            [str(memtrace), *map(str, args)], check=True, capture_output=True, env=env, timeout=120
        )
    units = {u["unit"]: u for u in json.loads((tmp_path / "i.json").read_text())["memory_units"]}
    assert {name: u["state"] for name, u in units.items()} == {
        "mem-1": "live",
        "mem-2": "live",
        "mem-3": "deleted",
        "mem-4": "live",
        "mem-5": "deleted",
    }
    assert units["mem-3"]["lifecycle"] == ["create", "delete"]


def test_json_spelt_with_indentation_is_decoded_and_exported_as_it_was(store, tmp_path):
    """MemBase writes entries with `json.dumps(indent=4, sort_keys=True)`: no speller reproduces that
    text, so it is decoded for reading and its text kept for the export."""
    pretty = functools.partial(json.dumps, indent=4, sort_keys=True)
    with comment_graph(graph_id="pretty") as graph:
        with comment_session(session_name="construction"):
            entry = {"memory": "Caroline likes tea", "id": "mem-7"}
            options = {"id_strategy": stable("mem-7"), "category": "memory_entry", "encoding_fn": pretty}
            comment_op(op_name="add", category="update", inputs=[], outputs=[(entry, options)])
        exported = graph.export_graph()
    view = _view(store, tmp_path, Recorded(exported))
    assert view.value("mem-7@1") == {"id": "mem-7", "memory": "Caroline likes tea"}
    assert export_smartcomment(store, view.run.id) == exported
