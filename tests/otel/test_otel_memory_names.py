"""The GenAI memory operation name each memory write gets, exported after the fact and live (issue 20).

Two mappings no test pinned before: a unit revived after its deletion is a `create_memory` (a new
record in the store, not an update of a deleted one), and an operation that creates some units and
updates others is an `upsert_memory` (the conventions' name for both at once), not `update_memory`.
Each test here fails if spans.memory_change or spans.memory_operation is mutated that way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import memtrace as mt
from memtrace.graph import Workspace
from memtrace.interop.otlp.export import run_spans, write_otlp_file
from memtrace.interop.otlp.importer import import_otlp
from memtrace.interop.otlp.sink import OtelSink
from memtrace.interop.otlp.spans import CREATE, DELETE, UPDATE, UPSERT, memory_operation


def record_lifecycles(workspace: Path, sinks: list[Any] | None = None) -> str:
    """m1 created, deleted, revived; then one operation creates m2 and updates m1 (an upsert)."""
    with mt.run(workspace, name="lifecycles", system="toy", sinks=sinks or []) as run:
        with mt.op("store", category="update") as op:
            run.memory("m1").create({"memory": "Caroline lives in Boston"}, by=op)
        with mt.op("forget", category="deletion") as op:
            run.memory("m1").delete(by=op)
        with mt.op("revive", category="update") as op:
            run.memory("m1").create({"memory": "Caroline lives in Boston again"}, by=op)
        with mt.op("merge", category="update") as op:
            run.memory("m2").create({"memory": "Caroline likes hiking"}, by=op)
            run.memory("m1").update({"memory": "Caroline lives in Paris"}, by=op)
        return run.id


def names(spans: list[Any]) -> dict[str, tuple[str, dict[str, str]]]:
    """Per operation name: the span's gen_ai.operation.name and each record's change (content on)."""
    out = {}
    for span in spans:
        op_id = str(span.attributes.get("memtrace.op.id", "root"))
        records = json.loads(span.attributes.get("gen_ai.memory.records", "[]"))
        changes = {r["id"]: r["metadata"]["change"] for r in records}
        out[op_id.split("#")[0]] = (span.attributes.get("gen_ai.operation.name"), changes)
    return out


EXPECTED = {
    "store": (CREATE, {"m1": CREATE}),
    "forget": (DELETE, {"m1": DELETE}),
    "revive": (CREATE, {"m1": CREATE}),
    "merge": (UPSERT, {"m2": CREATE, "m1": UPDATE}),
}


def test_an_exported_revival_is_a_create_and_a_create_with_an_update_is_an_upsert(tmp_path: Path) -> None:
    """After the fact: `memtrace export --format otlp --content`."""
    run_id = record_lifecycles(tmp_path / "ws")
    with Workspace(tmp_path / "ws") as ws:
        spans = names(run_spans(ws.store, run_id, content=True))
    assert {op: spans[op] for op in EXPECTED} == EXPECTED


def test_live_spans_name_a_revival_and_an_upsert_the_same_way(tmp_path: Path) -> None:
    """Live, through OtelSink, which decides the change as each version is written."""
    collected = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collected))
    record_lifecycles(tmp_path / "ws", sinks=[OtelSink(provider, content=True)])
    spans = names(list(collected.get_finished_spans()))
    assert {op: spans[op] for op in EXPECTED} == EXPECTED


def test_the_names_survive_an_export_and_import_round_trip(tmp_path: Path) -> None:
    """Imported back, the spans keep their names and the units their lifecycles (revival included)."""
    run_id = record_lifecycles(tmp_path / "ws")
    with Workspace(tmp_path / "ws") as ws:
        original = ws.view(run_id)
        expected = {u: [e.change for e in original.lifecycle(u)] for u in original.memory_units()}
        write_otlp_file(run_spans(ws.store, run_id, content=True), tmp_path / "run.json")
    with Workspace(tmp_path / "back", create=True) as ws:
        (run,) = import_otlp(ws.store, tmp_path / "run.json")
        graph = ws.view(run.id)
        lifecycles = {u: [e.change for e in graph.lifecycle(u)] for u in graph.memory_units()}
        again = {s.attributes.get("memtrace.op.name"): s.name for s in run_spans(ws.store, run.id)}
    assert again["revive"] == CREATE
    assert again["merge"] == UPSERT
    assert lifecycles == expected and len(expected["m1"]) == 4


@pytest.mark.parametrize(
    ("changes", "name"),
    [
        ([CREATE, CREATE], CREATE),
        ([UPDATE], UPDATE),
        ([CREATE, UPDATE], UPSERT),
        ([UPDATE, CREATE, UPDATE], UPSERT),
        ([DELETE], DELETE),
        ([], None),
    ],
)
def test_memory_operation_names_the_mix_of_changes(changes: list[str], name: str | None) -> None:
    """The mapping itself, case by case (a mix with deletions is covered by the records' own changes)."""
    assert memory_operation(changes) == name
