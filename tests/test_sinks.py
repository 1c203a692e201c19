"""Sinks: a run's events reach every attached sink live; a new sink is one class and nothing else.

`EventLog` below is a sink defined only here, attached to runs next to the workspace journal: it
shows the goal of issue 13 that a new sink needs one new module and no edit elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import memtrace as mt
from memtrace.graph import Case, Edge, Operation, Run, VariableVersion
from memtrace.graph.rows import edge_row, op_row, var_row
from memtrace.trace import InMemorySink, Patch, PatchPolicy, Recorder, RowSink, Sink
from memtrace.trace.patch import CANCEL, DELETE, MemoryAction, MemoryChange


class EventLog:
    """A test-only sink: writes one line per event, as an exporter would send them."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def run_started(self, run: Run) -> None:
        self.lines.append(f"run {run.name} {run.status}")

    def op_started(self, op: Operation) -> None:
        self.lines.append(f"start {op.id} {op.status}")

    def blob_added(self, digest: str, encoding: str, data: bytes) -> None:
        self.lines.append(f"blob {encoding}")

    def version_written(self, version: VariableVersion, value: Any) -> None:
        self.lines.append(f"version {version.id}={value!r}")

    def edge_added(self, edge: Edge) -> None:
        self.lines.append(f"edge {edge.op_id} {edge.role} {edge.var_id}")

    def op_ended(self, op: Operation, inputs: Sequence[str], outputs: Sequence[str]) -> None:
        self.lines.append(f"end {op.id} {op.status} in={list(inputs)} out={list(outputs)}")

    def case_updated(self, case: Case) -> None:
        self.lines.append(f"case {case.id} {case.prediction} {case.verdict}")

    def flush(self) -> None:
        self.lines.append("flush")

    def run_ended(self, run: Run) -> None:
        self.lines.append(f"run ended {run.status} {run.error}")


def test_a_sink_defined_in_a_test_gets_every_event_live_beside_the_workspace(workspace: Path) -> None:
    log = EventLog()
    assert isinstance(log, Sink)
    with mt.run(workspace, name="live", sinks=[log]) as run:
        with mt.op("extract", category="extraction") as op:
            op.input("message", "Clara moved to Lisbon")
            # Live: the operation's start reached the sink while it is still open.
            assert log.lines[-1].startswith("edge extract#1 in message@1")
            assert "start extract#1 running" in log.lines
            op.output("facts", ["Clara lives in Lisbon"])
        assert log.lines[-1] == "end extract#1 ok in=['message@1'] out=['facts@1']"
        with mt.op("store", category="memory_update") as op:
            run.memory("mem-1").create("Clara lives in Lisbon", by=op)
        case = run.case("Where does Clara live?", gold="Lisbon", id="q1")
        case.predict("Lisbon")
        case.judge(True)
        assert log.lines[-1] == "case q1 Lisbon correct"
    assert log.lines[0] == "run live running"
    assert log.lines[-1] == "run ended complete None"
    assert "version mem-1@1='Clara lives in Lisbon'" in log.lines
    assert "end store#4 ok in=[] out=['mem-1@1']" in log.lines
    # The journal sink got the same run: the workspace reads it back.
    with mt.open(workspace) as ws:
        graph = ws.view("live")
        assert graph.value("facts@1") == ["Clara lives in Lisbon"]
        assert [c.verdict for c in ws.cases("live")] == ["correct"]


def test_several_sinks_on_one_run_see_the_same_events_and_no_workspace_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first, second = InMemorySink(), InMemorySink()
    with mt.run(None, name="embedded", system="mine", sinks=[first, second]) as run:
        facts = ["Clara likes kayaks"]
        with mt.op("extract") as op:
            op.output("facts", facts)
            facts.append("changed after recording")  # the sink keeps the value as recorded
        with mt.op("store", category="memory_update") as op:
            unit = run.memory("mem-1")
            unit.create("kayaks", by=op)
            unit.update("red kayaks", by=op)
        with mt.op("forget", category="memory_update") as op:
            run.memory("mem-2").create("temporary", by=op)
            run.memory("mem-2").delete(by=op)
    assert os.listdir(tmp_path) == []  # nothing written anywhere
    assert first.event_names() == second.event_names()
    assert first.event_names()[0] == "run_started" and first.event_names()[-1] == "run_ended"
    assert first.value("facts@1") == ["Clara likes kayaks"]
    assert first.memory() == {"mem-1": "red kayaks"}
    assert first.op_io["store#3"] == (["mem-1@1"], ["mem-1@1", "mem-1@2"])
    [ended] = first.runs.values()
    assert ended.status == "complete" and ended.system == "mine"


def test_an_operation_that_fails_and_a_run_that_fails_reach_the_sinks(tmp_path: Path) -> None:
    sink = InMemorySink()
    with pytest.raises(RuntimeError), mt.run(None, name="failing", sinks=[sink]), mt.op("explode"):
        raise RuntimeError("boom")
    assert sink.ops["explode#1"].status == "error"
    assert "boom" in sink.ops["explode#1"].metadata["error"]
    [run] = sink.runs.values()
    assert run.status == "incomplete" and "boom" in (run.error or "")


def test_a_run_needs_a_workspace_or_a_sink() -> None:
    with pytest.raises(ValueError, match="workspace or into sinks"):
        Recorder(None, name="nowhere")


def test_a_disabled_run_sends_nothing_to_its_sinks() -> None:
    sink = InMemorySink()
    mt.disable()
    try:
        with mt.run(None, name="off", sinks=[sink]), mt.op("step") as op:
            op.output("x", 1)
    finally:
        mt.enable()
    assert sink.events == []


def test_a_patch_policy_applies_typed_patches_and_says_which_ran() -> None:
    sink = InMemorySink()
    policy = PatchPolicy(
        {
            "decide#1": Patch().replace_output("events", ["ADD"]).cancel("mem-1").replace("mem-2", "new"),
            "decide#5": {"memory": {"mem-3": DELETE}},  # the older dict form still works
        }
    )
    with Recorder(None, name="patched", sinks=[sink], patch_policy=policy) as run:
        with mt.op("decide") as op:
            events, _ = op.produce("events", ["NONE"])
            run.memory("mem-1").create("dropped", by=op)
            run.memory("mem-2").create("old", by=op)
            run.memory("mem-3").create("kept", by=op)
        with mt.op("decide") as op:
            run.memory("mem-3").update("updated", by=op)
    assert events == ["ADD"]
    assert run.patched == ["decide#1", "decide#5"]
    assert sink.memory() == {"mem-2": "new"}
    assert sink.runs[run.id].metadata["replay"]["patches"]["decide#1"]["memory"] == {
        "mem-1": {"action": "cancel"},
        "mem-2": {"action": "replace", "value": "new"},
    }


def test_patches_round_trip_through_json_and_read_the_older_markers() -> None:
    patch = (
        Patch().replace_output("facts", []).cancel("a").delete("b").replace("c", {"x": 1}).keeping("u", [1])
    )
    assert Patch.from_json(patch.to_json()) == patch
    legacy = Patch.from_json({"memory": {"a": CANCEL, "b": DELETE, "c": {"x": 1}}})
    assert legacy.memory == {
        "a": MemoryChange(MemoryAction.CANCEL),
        "b": MemoryChange(MemoryAction.DELETE),
        "c": MemoryChange(MemoryAction.REPLACE, {"x": 1}),
    }
    with pytest.raises(ValueError, match="unknown action 'erase'"):
        Patch.from_json({"memory": {"a": {"action": "erase"}}})
    with pytest.raises(ValueError, match="unknown key"):
        Patch.from_json({"output": {}})


class RowLog:
    """A test-only `RowSink`: takes the frequent events as row tuples, the rest as for any sink."""

    def __init__(self) -> None:
        self.rows: dict[str, list[tuple]] = {"op": [], "var": [], "edge": [], "blob": []}
        self.model_events: list[str] = []

    def add_op_row(self, row: tuple) -> None:
        self.rows["op"].append(row)

    def add_var_row(self, row: tuple) -> None:
        self.rows["var"].append(row)

    def add_edge_row(self, row: tuple) -> None:
        self.rows["edge"].append(row)

    def add_blob_row(self, row: tuple[str, str, bytes]) -> None:
        self.rows["blob"].append(row)

    def run_started(self, run: Run) -> None:
        self.model_events.append("run_started")

    def op_started(self, op: Operation) -> None:
        self.model_events.append("op_started")

    def blob_added(self, digest: str, encoding: str, data: bytes) -> None:
        self.model_events.append("blob_added")

    def version_written(self, version: VariableVersion, value: Any) -> None:
        self.model_events.append("version_written")

    def edge_added(self, edge: Edge) -> None:
        self.model_events.append("edge_added")

    def op_ended(self, op: Operation, inputs: Sequence[str], outputs: Sequence[str]) -> None:
        self.model_events.append("op_ended")

    def case_updated(self, case: Case) -> None:
        self.model_events.append("case_updated")

    def flush(self) -> None:
        self.model_events.append("flush")

    def run_ended(self, run: Run) -> None:
        self.model_events.append("run_ended")


def _record_every_kind_of_event(run: Recorder) -> None:
    """Inputs (one reused), outputs with metadata, a mutation, memory create/update/delete, a failure."""
    with mt.op("extract", category="extraction", model="rules") as op:
        op.input("message", "Clara moved to Lisbon", category="message")
        op.input("prompt", "extract facts")
        op.output("facts", ["Clara lives in Lisbon"], confidence=0.9)
    with mt.op("extract", category="extraction") as op:
        op.input("prompt", "extract facts")  # the same content: the version is reused, one more edge
        notes = ["a"]
        op.mutated(notes, name="notes")
        notes.append("b")
        op.mutated(notes)
    with mt.op("store", category="memory_update") as op:
        unit = run.memory("mem-1")
        unit.create("Clara lives in Lisbon", by=op, source="extract#1")
        unit.update("Clara lives in Porto", by=op)
        run.memory("mem-2").create("temporary", by=op)
        run.memory("mem-2").delete(by=op)
    with pytest.raises(ValueError), mt.op("explode"):
        raise ValueError("boom")


def test_the_journal_rows_and_a_plain_sinks_objects_describe_the_same_run(workspace: Path) -> None:
    """The journal takes rows built inline and a plain sink model objects: the two must agree."""
    sink = InMemorySink()
    with mt.run(workspace, name="both", sinks=[sink]) as run:
        _record_every_kind_of_event(run)
    with mt.open(workspace) as ws:
        run_id = ws.run("both").id
        stored_ops = ws.store.ops(run_id)
        stored_vars = ws.store.variables(run_id)
        stored_edges = ws.store.edges(run_id)
    assert stored_ops == sorted(sink.ops.values(), key=lambda op: op.seq)
    assert stored_vars == sorted(sink.versions.values(), key=lambda v: v.seq)
    assert stored_edges == sink.edges
    assert [op.status for op in stored_ops] == ["ok", "ok", "ok", "error"]
    assert stored_ops[0].metadata == {"model": "rules"}
    assert [v.metadata for v in stored_vars if v.metadata] == [
        {"confidence": 0.9},
        {"mutation": True},
        {"mutation": True},
        {"source": "extract#1"},
    ]
    assert [v.id for v in stored_vars if v.deleted] == ["mem-2@2"]
    assert sink.op_io["extract#5"] == (["prompt@1", "notes@1"], ["notes@1", "notes@2"])


def test_a_row_sink_gets_rows_and_no_model_objects_for_the_frequent_events(tmp_path: Path) -> None:
    rows = RowLog()
    plain = InMemorySink()
    assert isinstance(rows, RowSink) and not isinstance(plain, RowSink)
    with mt.run(None, name="rows", sinks=[rows, plain]) as run:
        _record_every_kind_of_event(run)
        run.case("Where does Clara live?", gold="Porto", id="q1").predict("Porto")
    # Only the rare events arrive as for a plain sink; each operation's row arrives once, at its end.
    assert set(rows.model_events) == {"run_started", "case_updated", "run_ended"}
    assert [row[1] for row in rows.rows["op"]] == [op.id for op in plain.ops.values()]
    assert rows.rows["op"] == [op_row(op) for op in plain.ops.values()]
    assert rows.rows["var"] == [var_row(v) for v in plain.versions.values()]
    assert rows.rows["edge"] == [edge_row(e) for e in plain.edges]
    assert {digest for digest, _, _ in rows.rows["blob"]} == {
        v.blob for v in plain.versions.values() if v.blob
    }
