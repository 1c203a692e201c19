"""A memtrace export whose graph attributes were mangled on the way (or forged) still imports as
one run or fails with one FormatError line: never a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

import memtrace as mt
from memtrace.errors import FormatError
from memtrace.graph import Workspace
from memtrace.interop.otlp.export import run_spans, write_otlp_file
from memtrace.interop.otlp.importer import import_otlp

Spans = list[dict[str, Any]]


def record_run(workspace: Path) -> str:
    """A unit created and searched for, an answer and its judged case: every kind of graph attribute."""
    with mt.run(workspace, name="forged", system="toy") as run:
        with mt.op("extract_facts", category="extraction") as op:
            run.memory("mem-1").create({"memory": "Caroline lives in Boston"}, by=op)
        with mt.op("search", category="retrieval") as op:
            op.input("query", "Where does Caroline live?", category="query")
            op.use(run.memory("mem-1").latest_id)
            retrieved = op.output("retrieved", ["Caroline lives in Boston"], category="retrieved")
        with mt.op("answer", category="response") as op:
            op.use(retrieved)
            prediction = op.output("prediction", "Paris", category="prediction")
        case = run.case("Where does Caroline live?", gold="Boston", id="q1")
        case.predict("Paris", var=prediction)
        case.judge(False, score=0.0)
        return run.id


def _set(spans: Spans, key: str, value: dict[str, Any]) -> None:
    for span in spans:
        for attribute in span["attributes"]:
            if attribute["key"] == key:
                attribute["value"] = value


def _duplicate_case_events(spans: Spans) -> None:
    carriers = [s for s in spans if s.get("events")]
    carriers[0]["events"] = carriers[0]["events"] * 3


OUT_OF_RANGE = [{"id": "w@1", "seq": 1, "value": [1]}, {"id": "w@2", "seq": 2, "base": "w@1", "drop": 9}]
MANGLINGS: dict[str, Callable[[Spans], None]] = {
    "vars-not-a-list": lambda s: _set(s, "memtrace.vars", {"stringValue": '{"id": 5}'}),
    "vars-of-odd-records": lambda s: _set(
        s, "memtrace.vars", {"stringValue": '[{"id": 5}, 3, {"id": "x@y", "seq": "no"}, {"id": "@"}]'}
    ),
    "vars-not-json": lambda s: _set(s, "memtrace.vars", {"stringValue": "[[[["}),
    "inputs-a-string": lambda s: _set(s, "memtrace.op.inputs", {"stringValue": "nope"}),
    "outputs-never-described": lambda s: _set(
        s, "memtrace.op.outputs", {"arrayValue": {"values": [{"stringValue": "ghost@1"}]}}
    ),
    "seq-a-string": lambda s: _set(s, "memtrace.op.seq", {"stringValue": "x"}),
    "one-op-id-everywhere": lambda s: _set(s, "memtrace.op.id", {"stringValue": "same#1"}),
    "case-events-repeated": _duplicate_case_events,
    "metadata-not-an-object": lambda s: _set(s, "memtrace.op.metadata", {"stringValue": "[1, 2]"}),
    "a-change-of-nothing": lambda s: _set(
        s,
        "memtrace.vars",
        {"stringValue": '[{"id": "w@2", "seq": 1, "base": "w@1", "drop": 0, "append": [1]}]'},
    ),
    "a-change-out-of-range": lambda s: _set(s, "memtrace.vars", {"stringValue": json.dumps(OUT_OF_RANGE)}),
}


@pytest.mark.parametrize("mangle", MANGLINGS.values(), ids=MANGLINGS.keys())
def test_a_mangled_memtrace_export_imports_or_fails_in_one_line(
    tmp_path: Path, mangle: Callable[[Spans], None]
) -> None:
    run_id = record_run(tmp_path / "ws")
    with Workspace(tmp_path / "ws") as ws:
        write_otlp_file(run_spans(ws.store, run_id, content=True), tmp_path / "run.json")
    document = json.loads((tmp_path / "run.json").read_text())
    mangle(document["resourceSpans"][0]["scopeSpans"][0]["spans"])
    (tmp_path / "mangled.json").write_text(json.dumps(document))
    with Workspace(tmp_path / "back", create=True) as ws:
        try:
            (run,) = import_otlp(ws.store, tmp_path / "mangled.json")
        except FormatError as exc:
            assert "\n" not in str(exc)
        else:
            assert ws.store.ops(run.id)
