"""Where a run broke, as any OpenTelemetry UI shows it: the blamed operation's span and the judge span
of a wrong answer end with status ERROR, and importing them back changes no operation's status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import memtrace as mt
from conftest import OpenWorkspace, run_cli_in_process
from memtrace.graph import Workspace
from memtrace.interop.otlp._wire import read_otlp_file
from memtrace.interop.otlp.export import run_spans, write_otlp_file
from memtrace.interop.otlp.importer import import_otlp
from memtrace.interop.otlp.marks import DESCRIPTION_LIMIT, Blame
from memtrace.interop.otlp.sink import OtelSink

QUESTION = "Where does Caroline live?"


def record_judged(workspace: Path, sinks: list[object] | None = None) -> str:
    """A search that misses the unit holding the answer, an answer from nothing, a judge that says wrong."""
    with mt.run(workspace, name="judged", system="toy", sinks=sinks or []) as run:
        with mt.op("ingest", category="construction") as op:
            message = op.output("D1:1", "Caroline: I moved to Boston last May.", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(message)
            run.memory("mem-1").create({"memory": "Caroline moved to Boston last May"}, by=op)
        with mt.op("question", category="query"):
            with mt.op("search", category="retrieval") as op:
                query = op.input("query", QUESTION, category="query")
                retrieved = op.output("retrieved", [], category="retrieved")
            with mt.op("answer", category="response") as op:
                op.use(query)
                op.use(retrieved)
                prediction = op.output("prediction", "I do not know", category="prediction")
            with mt.op("judge", category="evaluation") as op:
                op.use(prediction)
                op.output("verdict", {"correct": False, "score": 0.0}, category="verdict")
        case = run.case(QUESTION, gold="Boston", id="q1", evidence=["D1:1"])
        case.predict("I do not know", var=prediction)
        case.judge(False, score=0.0)
        return run.id


def test_the_blamed_operation_and_the_wrong_judge_are_error_spans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], open_ws: OpenWorkspace
) -> None:
    record_judged(tmp_path / "ws")
    (result,) = mt.attribute(open_ws(tmp_path / "ws"), "flow")
    assert (result.error_type, result.op_id.split("#")[0]) == ("RetrievalError", "search")
    out = tmp_path / "run.json"
    code, _, err = run_cli_in_process(
        capsys, "export", tmp_path / "ws", "judged", "--format", "otlp", "--out", out
    )
    assert code == 0, err
    spans = {s.attributes.get("memtrace.op.name"): s for s in read_otlp_file(out)}
    search, judge = spans["search"], spans["judge"]
    assert search.error is not None and search.error.startswith("RetrievalError for case q1: ")
    assert "flow, confidence" in search.error  # without content: who blamed it, not the run's text
    assert (search.attributes["memtrace.mark"], search.attributes["error.type"]) == (
        "blamed",
        "RetrievalError",
    )
    assert search.attributes["memtrace.blamed.cases"] == ["q1"]
    assert judge.error == "wrong answer for case q1 (score 0.00)"
    assert judge.attributes["memtrace.mark"] == "judged-wrong"
    assert {name for name, s in spans.items() if s.error is not None} == {"search", "judge"}
    with Workspace(tmp_path / "back", create=True) as ws:  # memtrace's marks are no failures of the ops
        (run,) = import_otlp(ws.store, out)
        assert {op.status for op in ws.store.ops(run.id)} == {"ok"}


def test_with_content_the_description_is_the_attributions_explanation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], open_ws: OpenWorkspace
) -> None:
    record_judged(tmp_path / "ws")
    (result,) = mt.attribute(open_ws(tmp_path / "ws"), "flow")
    out = tmp_path / "run.json"
    args = ("export", tmp_path / "ws", "judged", "--format", "otlp", "--out", out, "--content")
    assert run_cli_in_process(capsys, *args)[0] == 0
    (search,) = [s for s in read_otlp_file(out) if s.attributes.get("memtrace.op.name") == "search"]
    assert search.error == f"RetrievalError for case q1: {result.explanation}"[:DESCRIPTION_LIMIT]


def test_a_foreign_reading_of_the_marked_spans_keeps_the_statuses(tmp_path: Path) -> None:
    """Without memtrace's graph (an older export, or a receiver that dropped it) the marks still
    read as memtrace's verdicts, not as failed operations."""
    run_id = record_judged(tmp_path / "ws")
    with Workspace(tmp_path / "ws") as ws:
        blame = Blame(
            next(o.id for o in ws.store.ops(run_id) if o.name == "search"), "q1", "RetrievalError", "x"
        )
        spans = run_spans(ws.store, run_id, blames=[blame])
    write_otlp_file(spans, tmp_path / "run.json")
    document = json.loads((tmp_path / "run.json").read_text())
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["attributes"] = [a for a in span["attributes"] if a["key"] != "memtrace.graph.version"]
    (tmp_path / "foreign.json").write_text(json.dumps(document))
    with Workspace(tmp_path / "back", create=True) as ws:
        (run,) = import_otlp(ws.store, tmp_path / "foreign.json")
        statuses = {op.name: op.status for op in ws.store.ops(run.id)}
        assert statuses["search"] == statuses["judge"] == "ok"
        assert len(statuses) == 7  # the GenAI reading: the root span is an operation too


def test_an_operation_blamed_for_many_cases_names_them_within_the_limit(tmp_path: Path) -> None:
    run_id = record_judged(tmp_path / "ws")
    with Workspace(tmp_path / "ws") as ws:
        search = next(o.id for o in ws.store.ops(run_id) if o.name == "search")
        blames = [Blame(search, f"case-{n}", "RetrievalError", "a long reason " * 40) for n in range(12)]
        (span,) = [s for s in run_spans(ws.store, run_id, blames=blames) if s.name == "search_memory"]
    assert span.status.status_code == StatusCode.ERROR
    description = span.status.description
    assert len(description) <= DESCRIPTION_LIMIT
    assert description.startswith("RetrievalError for case case-0: a long reason")
    assert "; also RetrievalError for case case-1, RetrievalError for case case-2" in description
    assert list(span.attributes["memtrace.blamed.cases"]) == [f"case-{n}" for n in range(12)]


def test_live_spans_mark_the_judge_of_a_wrong_answer(tmp_path: Path) -> None:
    collected = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(collected))
    record_judged(tmp_path / "ws", sinks=[OtelSink(provider)])
    spans = {s.name: s for s in collected.get_finished_spans()}
    judge = spans["judge"]
    assert judge.status.status_code == StatusCode.ERROR
    assert judge.status.description == "wrong answer for case q1 (score 0.00)"
    assert {n for n, s in spans.items() if s.status.status_code == StatusCode.ERROR} == {"judge"}
