"""Imported OTLP files that are malformed, huge or repetitive (issue 20): a wrong field is a FormatError
naming the file and the field, quoted briefly; repeated spans count once; cases are found without
scanning the trace once per case."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from otlp_traces import document, trace_spans

from conftest import run_cli_in_process
from memtrace.errors import FormatError
from memtrace.graph import Workspace
from memtrace.interop.otlp import importer
from memtrace.interop.otlp.cases import read_cases_file
from memtrace.interop.otlp.importer import import_otlp

FIVE_MB = 5_000_000


def import_error(tmp_path: Path, content: Any) -> str:
    """The one-line error importing `content` (JSON-encoded unless bytes) gives; nothing is written."""
    source = tmp_path / "their.json"
    source.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    with Workspace(tmp_path / "ws", create=True) as ws:
        with pytest.raises(FormatError) as raised:
            import_otlp(ws.store, source)
        assert ws.runs() == []
    message = str(raised.value)
    assert message.startswith(f"{source}: ") and "\n" not in message
    return message


def with_span(change: dict[str, Any]) -> dict[str, Any]:
    """A one-span document whose span has these fields changed."""
    (span,) = trace_spans(0, 0)
    return document([{**span, **change}])


def test_resource_spans_that_is_not_a_list_names_the_field(tmp_path: Path) -> None:
    """Before: AttributeError from the JSON decoder, a traceback."""
    message = import_error(tmp_path, {"resourceSpans": "x"})
    assert "resourceSpans: expected a list, not a string 'x'" in message


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ({"resourceSpans": ["x"]}, "resourceSpans[0]: expected an object"),
        ({"resourceSpans": [{"scopeSpans": {"spans": []}}]}, "resourceSpans[0].scopeSpans: expected a list"),
        ({"resourceSpans": [{"scopeSpans": [{"spans": 3}]}]}, "scopeSpans[0].spans: expected a list"),
        ({"resourceSpans": [{"resource": [1]}]}, "resourceSpans[0].resource: expected an object"),
        (with_span({"attributes": {"a": 1}}), "spans[0].attributes: expected a list"),
        (with_span({"links": [None, 4]}), "spans[0].links[0]: expected an object"),
        (with_span({"events": [{"attributes": [{"key": 5}]}]}), "spans[0].events[0].attributes[0].key"),
    ],
    ids=[
        "resource-not-object",
        "scopes-not-list",
        "spans-not-list",
        "resource",
        "attributes",
        "links",
        "event-key",
    ],
)
def test_a_field_of_the_wrong_shape_is_named_by_its_path(tmp_path: Path, content: Any, field: str) -> None:
    """Before: some were AttributeError tracebacks, the others protobuf's parser's wording, which
    names the message type and not where the field is in the file."""
    assert field in import_error(tmp_path, content)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"traceId": "z" * FIVE_MB}, "traceId: 'zzz"),
        ({"spanId": "", "name": "z" * FIVE_MB}, "has no valid trace or span id"),
        ({"startTimeUnixNano": "z" * FIVE_MB}, "startTimeUnixNano: expected a time"),
        ({"attributes": [{"key": "k", "value": {"intValue": "z" * FIVE_MB}}]}, "value.intValue"),
        ({"kind": "z" * FIVE_MB, "status": {"code": 2, "message": ["z" * FIVE_MB]}}, "status.message"),
    ],
    ids=["trace-id", "name", "start-time", "attribute", "status-message"],
)
def test_a_5_mb_bad_field_is_quoted_in_at_most_200_characters(
    tmp_path: Path, change: dict[str, Any], says: str
) -> None:
    """Before: the whole field was echoed into the error (a 5 MB line on the terminal)."""
    message = import_error(tmp_path, with_span(change))
    assert says in message
    assert max(len(run) for run in re.findall("z+", message)) <= 200
    assert len(message) < len(str(tmp_path)) + 400


def test_a_5_mb_bad_verdict_in_a_cases_file_is_quoted_briefly(tmp_path: Path) -> None:
    """The cases file given with --cases is an imported file too."""
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"question": "q", "verdict": "z" * FIVE_MB}]))
    with pytest.raises(FormatError, match="verdict must be") as raised:
        read_cases_file(cases)
    assert len(str(raised.value)) < len(str(cases)) + 300


def test_the_cli_reports_a_malformed_file_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`memtrace import` of `{"resourceSpans": "x"}`: exit 1 and one line, not a traceback."""
    source = tmp_path / "their.json"
    source.write_text('{"resourceSpans": "x"}')
    code, _, err = run_cli_in_process(capsys, "import", tmp_path / "ws", source, "--format", "otlp")
    assert code == 1 and err.count("\n") == 1
    assert str(source) in err and "resourceSpans" in err


def test_a_file_of_repeated_exports_imports_each_span_once(tmp_path: Path) -> None:
    """Three copies of one export as JSON lines: before, three times the operations and cases."""
    spans = trace_spans(4, 5)
    source = tmp_path / "repeated.json"
    source.write_text("".join(json.dumps(document(spans)) + "\n" for _ in range(3)))
    with Workspace(tmp_path / "ws", create=True) as ws:
        (run,) = import_otlp(ws.store, source)
        assert len(ws.store.ops(run.id)) == len(spans)
        assert [c.id for c in ws.store.cases(run.id)] == ["q1", "q2", "q3", "q4", "q5"]


class _CountedPasses(list):
    """A trace's ordered spans that count how often the importer walks the whole of them."""

    passes = 0

    def __iter__(self) -> Any:
        _CountedPasses.passes += 1
        return super().__iter__()

    def __reversed__(self) -> Any:
        _CountedPasses.passes += 1
        return super().__reversed__()


@pytest.mark.parametrize("questions", [10, 100])
def test_cases_are_found_without_a_pass_over_the_trace_per_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, questions: int
) -> None:
    """Before: each case's question and query were looked up by scanning every span of its trace,
    so 100k spans took over 500 s; now the passes over a trace do not grow with its cases."""
    ordered = importer.read.ordered
    monkeypatch.setattr(importer.read, "ordered", lambda spans: _CountedPasses(ordered(spans)))
    source = tmp_path / "trace.json"
    source.write_text(json.dumps(document(trace_spans(questions, questions))))
    _CountedPasses.passes = 0
    with Workspace(tmp_path / "ws", create=True) as ws:
        (run,) = import_otlp(ws.store, source)
        cases = ws.store.cases(run.id)
    assert len(cases) == questions
    assert cases[-1].question == f"Where does Caroline live now (question {questions})?"
    assert _CountedPasses.passes <= 10
