"""Runs recorded with memtrace's own recorder go out as smartcomment and JSONL and come back."""

from __future__ import annotations

from pathlib import Path

from iohelpers import run_rows
from smartcomment.runtime import ExecNetwork

import memtrace as mt
from memtrace.graph import GraphView, Store
from memtrace.interop import export_smartcomment, import_jsonl, read_smartcomment, write_jsonl


def _record(workspace: Path) -> str:
    with mt.run(workspace, name="recorded", system="toy") as run:
        with mt.op("ingest", category="construction") as op:
            message = op.output("message", "Caroline: I moved to Boston.", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(message)
            run.memory("mem-1").create({"memory": "Caroline lives in Boston"}, by=op)
        with mt.op("delete_memory", category="deletion") as op:
            run.memory("mem-1").delete(by=op)
        with mt.op("answer", category="response") as op:
            op.input("query", "Where does Caroline live?", category="query")
            with mt.op("llm.chat", category="llm") as inner:
                inner.input("prompt", "Answer: where?", category="prompt")
            op.output("prediction", "Boston", category="prediction")
        case = run.case("Where does Caroline live?", gold="Boston")
        case.predict("Boston")
        return run.id


def test_recorded_run_to_smartcomment_and_back(tmp_path):
    run_id = _record(tmp_path / "ws")
    store = Store(tmp_path / "ws")
    try:
        view = GraphView(store, store.run(run_id))
        exported = export_smartcomment(store, run_id)
        loaded = ExecNetwork.import_graph(exported)
        assert {n.full_node_id for n in loaded.get_all_nodes()} == {*view.vars, "COMMENT:NONE@1"}
        assert {o.op_id for o in loaded.get_all_operations()} == set(view.ops)
        values = {n.full_node_id: n.raw_value for n in loaded.get_all_nodes()}
        assert values["mem-1@2"] == "DELETED"
        again = read_smartcomment(exported)
        records = [*view.ops.values(), *view.vars.values()]
        original_order = [x.id for x in sorted(records, key=lambda x: x.seq)]
        new_order = [x.id for x in sorted([*again.ops, *again.variables], key=lambda x: x.seq)]
        assert [i for i in new_order if i != "COMMENT:NONE@1"] == original_order
        assert {op.id: op.parent_op for op in again.ops} == {op.id: op.parent_op for op in view.ops.values()}
    finally:
        store.close()


def test_recorded_run_jsonl_round_trip(tmp_path):
    run_id = _record(tmp_path / "ws")
    source, target = Store(tmp_path / "ws"), Store(tmp_path / "copy")
    try:
        write_jsonl(source, run_id, tmp_path / "run.jsonl")
        import_jsonl(target, tmp_path / "run.jsonl")
        assert run_rows(target, run_id) == run_rows(source, run_id)
        assert [c.question for c in target.cases(run_id)] == ["Where does Caroline live?"]
    finally:
        source.close()
        target.close()
