"""smartcomment import/export against graphs recorded and re-loaded by the real package."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from iohelpers import NATIVE_RUN_ID, fresh_graph, write_native_run
from smartcomment.runtime import ExecNetwork

from memtrace.graph import Case, FormatError, GraphView, Store
from memtrace.graph.rows import case_row
from memtrace.interop import export_smartcomment, import_smartcomment, read_smartcomment, write_smartcomment
from memtrace.interop.smartcomment._order import priority_order
from memtrace.interop.smartcomment._values import respell


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    s = Store(tmp_path / "ws")
    yield s
    s.close()


@pytest.fixture
def sc_graph() -> dict:
    """A fresh copy of a graph recorded with the real smartcomment package."""
    return fresh_graph()


def _full_id(node: dict) -> str:
    name = node["name"] if node.get("class_name") is None else f"{node['class_name']}:{node['name']}"
    return f"{name}@{node.get('version', 1)}"


def _import(store: Store, graph: dict, tmp_path, name: str = "graph.json"):
    path = tmp_path / name
    path.write_text(json.dumps(graph))
    return import_smartcomment(store, path)


def test_import_keeps_every_node_operation_and_edge(store, sc_graph, tmp_path):
    run = _import(store, sc_graph, tmp_path)
    view = GraphView(store, run)
    data = sc_graph["data"]
    assert set(view.vars) == {_full_id(n) for n in data["nodes"]}
    assert set(view.ops) == {o["op_id"] for o in data["operations"]}
    out_edges = [e for e in view.edges if e.role == "out"]
    assert [e.metadata["edge_id"] for e in out_edges] == [e["edge_id"] for e in data["edges"]]
    assert [(e.source, e.var_id, e.op_id) for e in out_edges] == [
        (e["source_full_node_id"], e["target_full_node_id"], e["op_id"]) for e in data["edges"]
    ]
    # values are decoded from their repr/JSON spelling, which spells them back to the file's strings
    values = view.values(view.vars.values())
    assert values["D1:1@1"] == "Caroline moved to Boston" and values["mem-1@2"] == [
        "Caroline lives in Boston"
    ]
    spelt = {
        v.id: v.metadata.get("text") or respell(values[v.id], v.metadata["spelling"])
        if "spelling" in v.metadata
        else values[v.id]
        for v in view.vars.values()
    }
    assert {_full_id(n): n["value"] for n in data["nodes"]} == spelt
    assert run.name == "graph" and run.metadata["smartcomment"]["graph_id"] == "graph-test"
    assert len(run.metadata["smartcomment"]["sessions"]) == len(data["sessions"])


def test_inputs_are_the_in_degree_zero_nodes_of_each_operation(store, sc_graph, tmp_path):
    run = _import(store, sc_graph, tmp_path)
    view = GraphView(store, run)
    by_name = {op.name: op for op in view.ops.values()}
    mutation = by_name["memory.update"]
    assert {v.id for v in view.inputs(mutation.id)} == {"mem-1@1", "tokens@1"}
    assert [v.id for v in view.outputs(mutation.id)] == ["mem-1@2"]
    # the COMMENT:NONE placeholder is never an input: it would tie unrelated operations together
    assert view.inputs(by_name["seed"].id) == []
    assert [v.id for v in view.outputs(by_name["seed"].id)] == ["seed@1"]
    assert [v.id for v in view.inputs("__none_op__")] == ["score@3"]
    assert {v.id for v in view.outputs(by_name["fanout"].id)} == {"summary@1"}
    assert view.var("mem-1@2").category == "memory_entry"
    assert [e.version.id for e in view.lifecycle("mem-1")] == ["mem-1@1", "mem-1@2"]


def test_seq_is_a_total_order_that_respects_dependencies(store, sc_graph, tmp_path):
    run = _import(store, sc_graph, tmp_path)
    view = GraphView(store, run)
    seqs = [op.seq for op in view.ops.values()] + [v.seq for v in view.vars.values()]
    assert sorted(seqs) == list(range(1, len(seqs) + 1))
    for edge in view.edges:
        if edge.role == "in":
            assert view.vars[edge.var_id].seq < view.ops[edge.op_id].seq, edge
    chain = ["score@1", "score@2", "score@3", "report@1"]
    assert [view.vars[v].seq for v in chain] == sorted(view.vars[v].seq for v in chain)
    rescore = next(op for op in view.ops.values() if op.name == "rescore")
    assert view.vars["score@1"].seq < rescore.seq < view.vars["score@2"].seq
    assert rescore.started_at > 1e9 and view.vars["score@2"].created_at > 1e9


def test_export_of_an_imported_graph_reproduces_the_file(store, sc_graph, tmp_path):
    run = _import(store, sc_graph, tmp_path)
    exported = export_smartcomment(store, run.id)
    assert exported == sc_graph
    loaded = ExecNetwork.import_graph(exported)
    assert (loaded.node_count, loaded.edge_count, loaded.op_count, loaded.session_count) == tuple(
        len(sc_graph["data"][k]) for k in ("nodes", "edges", "operations", "sessions")
    )
    assert {e.edge_id for e in loaded.get_all_edges()} == {e["edge_id"] for e in sc_graph["data"]["edges"]}
    counts = write_smartcomment(store, run.id, tmp_path / "out.json.gz")
    assert counts["nodes"] == len(sc_graph["data"]["nodes"])
    assert read_smartcomment(tmp_path / "out.json.gz").run.id == run.id  # gzip reads back too


def test_reimport_replaces_the_run_atomically(store, sc_graph, tmp_path):
    first = _import(store, sc_graph, tmp_path)
    second = _import(store, sc_graph, tmp_path, name="copy.json")
    assert first.id == second.id
    assert [r.id for r in store.runs()] == [first.id]
    assert store.count("vars", first.id) == len(sc_graph["data"]["nodes"])
    assert store.count("cases", first.id) == 2


def test_op_without_name_and_invented_none_op(store, sc_graph, tmp_path):
    ops = sc_graph["data"]["operations"]
    ops[0]["op_name"] = None
    sc_graph["data"]["operations"] = [o for o in ops if o["op_id"] != "__none_op__"]
    run = _import(store, sc_graph, tmp_path)
    sentinel = GraphView(store, run).ops["__none_op__"]
    assert sentinel.metadata["sentinel"] is True and sentinel.category == "sentinel"
    exported = export_smartcomment(store, run.id)
    assert exported["data"]["operations"][0]["op_name"] is None
    loaded = ExecNetwork.import_graph(exported)  # the edges need the sentinel op to exist
    assert loaded.edge_count == len(sc_graph["data"]["edges"])


def test_judge_operations_give_cases_when_there_are_no_annotations(store, sc_graph, tmp_path):
    run = _import(store, sc_graph, tmp_path)
    cases = store.cases(run.id)
    assert [c.verdict for c in cases] == ["wrong", "correct"]
    wrong = cases[0]
    assert wrong.question == "Where did Caroline move?"
    assert wrong.gold == ["Boston"] and wrong.prediction == "NYC" and wrong.score == 0.0
    assert wrong.evidence == ["D1:1@1"] and wrong.category == "1"
    assert wrong.id.startswith("query:str:") and wrong.prediction_var.startswith("prediction:")
    assert store.annotations(run.id) == []


def test_memtracebench_annotations_become_cases_and_labels(store, sc_graph, tmp_path):
    query = next(n for n in sc_graph["data"]["nodes"] if n["class_name"] == "query")
    annotation = {
        "query_id": _full_id(query),
        "query": query["value"],
        "golden_answers": ["Boston"],
        "golden_answers_id": "golden_answers:x@1",
        "prediction": "'NYC'",
        "prediction_id": "prediction:y@1",
        "source_evidence_ids": ["D1:1@1"],
        "final_error_type": "UpdateError",
        "final_op_id": sc_graph["data"]["operations"][3]["op_id"],
    }
    sc_graph["data"]["annotations"] = [annotation, dict(annotation, final_error_type="JudgeError")]
    run = _import(store, sc_graph, tmp_path)
    cases = store.cases(run.id)
    right = next(n for n in sc_graph["data"]["nodes"] if n["value"] == "'What does she like?'")
    # the annotated failures first, then the question the judge found right
    assert [c.id for c in cases] == [annotation["query_id"], annotation["query_id"] + "#2", _full_id(right)]
    assert [c.verdict for c in cases] == ["wrong", "wrong", "correct"]
    assert cases[0].question == "Where did Caroline move?" and cases[0].prediction == "NYC"
    assert cases[0].verdict == "wrong" and cases[0].evidence == ["D1:1@1"]
    assert cases[0].metadata["golden_answers_id"] == "golden_answers:x@1"
    labels = store.annotations(run.id)
    assert [(a.error_type, a.author) for a in labels] == [
        ("UpdateError", "memtracebench"),
        ("JudgeError", "memtracebench"),
    ]
    assert labels[0].op_id == annotation["final_op_id"]
    assert export_smartcomment(store, run.id) == sc_graph


def test_native_run_exports_to_a_graph_smartcomment_loads(store, tmp_path):
    write_native_run(store)
    exported = export_smartcomment(store, NATIVE_RUN_ID)
    loaded = ExecNetwork.import_graph(json.loads(json.dumps(exported)))
    node_ids = {n.full_node_id for n in loaded.get_all_nodes()}
    view = GraphView(store, store.run(NATIVE_RUN_ID))
    assert node_ids == set(view.vars) | {"COMMENT:NONE@1"}
    assert {o.op_id for o in loaded.get_all_operations()} == set(view.ops)
    pairs = {(e.op_id, e.source_full_node_id, e.target_full_node_id) for e in loaded.get_all_edges()}
    assert ("op-answer", "question@1", "prediction@1") in pairs and (
        "op-answer",
        "mem-1@1",
        "prediction@1",
    ) in pairs
    assert ("op-ingest", "COMMENT:NONE@1", "message@1") in pairs
    assert ("op-llm", "prediction@1", "COMMENT:NONE@1") in pairs
    assert loaded.edge_count == 8 and loaded.session_count == 3  # run, "question", __none__
    values = {n.full_node_id: n.raw_value for n in loaded.get_all_nodes()}
    assert values["mem-1@2"] == "DELETED" and values["message@1"] == "Caroline moved to Boston"
    assert json.loads(values["mem-1@1"]) == {"id": "mem-1", "memory": "Caroline lives in Boston"}
    assert values["counter@1"] == "7"


def test_native_export_reimports_in_the_same_order(store, tmp_path):
    write_native_run(store)
    exported = export_smartcomment(store, NATIVE_RUN_ID)
    imported = read_smartcomment(exported)
    original = GraphView(store, store.run(NATIVE_RUN_ID))
    order = [x.id for x in sorted([*original.ops.values(), *original.vars.values()], key=lambda x: x.seq)]
    again = sorted([*imported.ops, *imported.variables], key=lambda x: x.seq)
    assert [x.id for x in again if x.id != "COMMENT:NONE@1"] == order
    parents = {op.id: op.parent_op for op in imported.ops}
    assert parents["op-llm"] == "op-answer"
    assert next(v for v in imported.variables if v.id == "mem-1@2").deleted
    assert imported.run.name == "conv-native"


def test_priority_order_breaks_cycles_instead_of_failing():
    priority = [(0.0, 2), (0.0, 1), (1.0, 0), (0.5, 3)]
    assert priority_order(priority, [(0, 1)]) == [0, 1, 3, 2]
    # 0 -> 1 -> 2 -> 0 is a cycle: once nothing else is ready the earliest blocked record (1) is released
    assert priority_order(priority, [(0, 1), (1, 2), (2, 0)]) == [3, 1, 2, 0]


def test_native_export_then_import_keeps_system_and_cases(store, tmp_path):
    write_native_run(store)
    case = Case(
        NATIVE_RUN_ID,
        "q-1",
        "Where did Caroline move?",
        gold=["Boston"],
        prediction="Boston",
        prediction_var="prediction@1",
        verdict="correct",
        score=1.0,
        evidence=["D1:1"],
        category="1",
        metadata={"note": "kept"},
    )
    store.write_batch(cases=[case_row(case)])
    path = tmp_path / "native.json"
    write_smartcomment(store, NATIVE_RUN_ID, path)
    other = Store(tmp_path / "other")
    run = import_smartcomment(other, path)
    assert (run.name, run.system, run.dataset) == ("conv-native", "mem0", "locomo")
    (again,) = other.cases(run.id)
    assert again == Case(**{**{f: getattr(case, f) for f in case.__slots__}, "run_id": run.id})
    other.close()


def test_an_error_type_outside_the_taxonomy_is_refused_naming_the_file(store, sc_graph, tmp_path):
    query = next(n for n in sc_graph["data"]["nodes"] if n["class_name"] == "query")
    annotation = {"query_id": _full_id(query), "query": query["value"], "final_error_type": "MemoryError"}
    sc_graph["data"]["annotations"] = [annotation]
    with pytest.raises(
        FormatError, match=r"graph\.json: data\.annotations\[0\]: 'final_error_type' 'MemoryError'"
    ):
        _import(store, sc_graph, tmp_path)
    assert store.runs() == []
