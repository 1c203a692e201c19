"""GenAI memory spans from someone else's instrumentation become a graph `attribute` reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

from foreign_trace import QUESTION, foreign_spans
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.trace import SpanKind
from otel_pipeline import record_memory_pipeline

import memtrace as mt
from conftest import OpenWorkspace, run_cli_in_process
from memtrace.graph import FormatError, Workspace
from memtrace.interop.otlp._wire import read_otlp_file
from memtrace.interop.otlp.cases import CaseSpec, read_cases_file
from memtrace.interop.otlp.export import run_spans, write_otlp_file
from memtrace.interop.otlp.importer import import_otlp


def _write_pb(path: Path) -> Path:
    path.write_bytes(encode_spans(foreign_spans()).SerializeToString())
    return path


def test_memory_records_become_units_and_a_search_reads_what_it_returned(tmp_path: Path) -> None:
    source = _write_pb(tmp_path / "their.pb")
    with Workspace(tmp_path / "ws", create=True) as ws:
        (run,) = import_otlp(ws.store, source)
        graph = ws.view(run.id)
        assert sorted(graph.memory_units()) == ["rec-boston", "rec-hiking"]
        (boston,) = graph.lifecycle("rec-boston")
        assert boston.change == "create" and boston.value["memory"] == "Caroline moved to Boston in May"
        assert boston.op.name == "create_memory" and boston.op.category == "update"
        (search,) = graph.ops_by_category("retrieval")
        assert [v.id for v in graph.inputs(search.id) if v.category == "memory_entry"] == ["rec-hiking@1"]
        assert graph.value(next(v.id for v in graph.inputs(search.id) if v.category == "query")) == QUESTION
        # the chats that read the conversation are extraction steps; the answer's is the response
        assert [op.name for op in graph.ops_by_category("extraction")] == ["chat", "chat"]
        assert [op.name for op in graph.ops_by_category("response")] == ["chat"]
        (case,) = ws.cases(run.id)
        assert (case.question, case.verdict, case.gold) == (QUESTION, "wrong", [])
        assert case.prediction == "I don't know where Caroline lives."


@pytest.mark.parametrize(
    ("drop", "error_type", "blamed"),
    [(False, "RetrievalError", "search_memory#"), (True, "ExtractionError", "chat#")],
    ids=["search-missed-it", "extraction-dropped-it"],
)
def test_attribution_blames_the_faulty_span(
    tmp_path: Path, drop: bool, error_type: str, blamed: str, open_ws: OpenWorkspace
) -> None:
    source = tmp_path / "their.pb"
    source.write_bytes(encode_spans(foreign_spans(extraction_drops_boston=drop)).SerializeToString())
    with Workspace(tmp_path / "ws", create=True) as ws:
        # messages are named message-1, message-2, ... in the order the trace first shows them
        case_spec = CaseSpec(QUESTION, ["Boston"], evidence=["message-1"])
        (run,) = import_otlp(ws.store, source, cases=[case_spec])
        (case,) = ws.cases(run.id)
        assert case.gold == ["Boston"] and case.verdict == "wrong"
        units = ws.view(run.id).memory_units()
    assert ("rec-boston" in units) is not drop
    (result,) = mt.attribute(open_ws(tmp_path / "ws"), "flow")
    assert result.error_type == error_type, result.explanation
    assert result.op_id is not None and result.op_id.startswith(blamed)


def test_the_same_trace_as_otlp_json_imports_to_the_same_run(tmp_path: Path) -> None:
    pb, js = _write_pb(tmp_path / "their.pb"), tmp_path / "their.json"
    write_otlp_file(foreign_spans(), js)
    assert json.loads(js.read_text())["resourceSpans"]
    with Workspace(tmp_path / "ws", create=True) as ws:
        (first,) = import_otlp(ws.store, pb)
        ops = [(o.name, o.category) for o in ws.store.ops(first.id)]
        (again,) = import_otlp(ws.store, js)
        assert [(o.name, o.category) for o in ws.store.ops(again.id)] == ops
        assert len(ws.runs()) == 2  # a new trace id (the spans were made again): a second run


def test_the_cli_imports_an_otlp_file_with_a_cases_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _write_pb(tmp_path / "their.pb")
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"question": QUESTION, "gold": ["Boston"], "id": "caroline-home"}]))
    code, out, err = run_cli_in_process(
        capsys, "import", tmp_path / "ws", source, "--format", "otlp", "--cases", cases
    )
    assert code == 0, err
    assert "Imported 1 run(s)" in out
    with Workspace(tmp_path / "ws") as ws:
        (case,) = ws.cases()
        assert case.id == "caroline-home" and case.gold == ["Boston"]


def test_auto_format_knows_an_otlp_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "their.json"
    write_otlp_file(foreign_spans(), source)
    code, _, err = run_cli_in_process(capsys, "import", tmp_path / "ws", source)
    assert code == 0, err
    with Workspace(tmp_path / "ws") as ws:
        (run,) = ws.runs()
        assert run.dataset == "otlp"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"\xff\xfe not protobuf", "not OTLP protobuf trace data"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}', "is not hex"),
        (b'{"something": 1}', "no 'resourceSpans'"),
        (b"", "no spans"),
    ],
)
def test_a_broken_file_is_one_error_and_writes_nothing(tmp_path: Path, content: bytes, problem: str) -> None:
    source = tmp_path / "broken.otlp"
    source.write_bytes(content)
    with Workspace(tmp_path / "ws", create=True) as ws:
        with pytest.raises(FormatError, match=problem) as raised:
            import_otlp(ws.store, source)
        assert str(source) in str(raised.value)
        assert ws.runs() == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"question": "q"}', "a JSON list"),
        ('[{"gold": "x"}]', "case 1: needs a 'question' string"),
        ('[{"question": "q", "verdict": "maybe"}]', "verdict must be 'correct' or 'wrong'"),
        ("[", "not valid JSON"),
    ],
)
def test_a_bad_cases_file_is_one_error_naming_it(tmp_path: Path, text: str, problem: str) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(text)
    with pytest.raises(FormatError, match=problem) as raised:
        read_cases_file(cases)
    assert str(cases) in str(raised.value)


@pytest.mark.parametrize("content", [False, True], ids=["ids-only", "with-content"])
def test_an_exported_run_imports_with_the_same_memory_lifecycles(tmp_path: Path, content: bool) -> None:
    run_id = record_memory_pipeline(tmp_path / "ws")
    with Workspace(tmp_path / "ws") as ws:
        original = ws.view(run_id)
        expected = {u: [e.change for e in original.lifecycle(u)] for u in original.memory_units()}
        values = {u: original.lifecycle(u)[-1].value for u in original.memory_units()}
        write_otlp_file(run_spans(ws.store, run_id, content=content), tmp_path / "run.pb")
        (imported,) = import_otlp(ws.store, tmp_path / "run.pb")
        graph = ws.view(imported.id)
        assert {u: [e.change for e in graph.lifecycle(u)] for u in graph.memory_units()} == expected
        latest = {u: graph.lifecycle(u)[-1].value for u in graph.memory_units()}
    if content:  # the record's text comes back as the unit's value
        assert latest["mem-1"]["memory"] == values["mem-1"]["memory"] == "Caroline lives in Paris"
    else:
        assert latest["mem-1"] == {"id": "mem-1"}


def test_spans_of_every_kind_import_and_export_with_their_kind(tmp_path: Path) -> None:
    """Import takes any span kind; the kind is kept on the operation, so exporting gives it back."""
    source = _write_pb(tmp_path / "their.pb")
    with Workspace(tmp_path / "ws", create=True) as ws:
        (run,) = import_otlp(ws.store, source)
        graph = ws.view(run.id)
        kinds = {
            (op.name, op.metadata.get("remote"), op.metadata.get("span_kind")) for op in graph.ops.values()
        }
        assert kinds == {
            ("invoke_agent", None, "server"),
            ("add_memories", None, "consumer"),
            ("chat", True, None),
            ("create_memory", True, None),
            ("answer_question", False, None),
            ("search_memory", True, None),
        }
        assert len(graph.memory_units()) == 2  # the CLIENT create_memory spans still wrote their records
        exported = {
            (s.attributes["memtrace.op.name"], s.kind) for s in run_spans(ws.store, run.id) if s.parent
        }
    assert exported == {
        ("invoke_agent", SpanKind.SERVER),
        ("add_memories", SpanKind.CONSUMER),
        ("chat", SpanKind.CLIENT),
        ("create_memory", SpanKind.CLIENT),
        ("answer_question", SpanKind.INTERNAL),
        ("search_memory", SpanKind.CLIENT),
    }


def test_an_otlp_file_carries_the_span_kinds(tmp_path: Path) -> None:
    run_id = record_memory_pipeline(tmp_path / "ws")
    with Workspace(tmp_path / "ws") as ws:
        write_otlp_file(run_spans(ws.store, run_id), tmp_path / "run.json")
    kinds = {s.name: s.kind for s in read_otlp_file(tmp_path / "run.json")}
    assert kinds["chat toy-model"] == kinds["search_memory"] == "client"
    assert kinds["create_memory"] == kinds["invoke_workflow otel-toy"] == "internal"
