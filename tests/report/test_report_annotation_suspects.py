"""A suspected annotation error (the conversation does not support the gold answer) is flagged with its
reason and kept out of the system's error counts (issue 19, cause 7): not in by_error_type, the
patterns, their optimise routes or the funnel, but in a section of its own in report.md, report.html
and report.json, and apart in `memtrace attribute`, `verify` and `report`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import run_cli_in_process
from memtrace import Workspace
from memtrace.report import Report, build_report, render_html, render_markdown
from memtrace.vocabulary import ErrorType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reporthelpers import record_marks_run

REASON = "which no turn of the conversation mentions"


@pytest.fixture(scope="module")
def marked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Report]:
    path = tmp_path_factory.mktemp("suspects") / "ws"
    record_marks_run(path)
    with Workspace(path) as ws:
        return path, build_report(ws)


def test_the_suspect_is_kept_out_of_every_count_and_listed_with_its_reason(
    marked: tuple[Path, Report],
) -> None:
    _, report = marked
    h, (system,) = report.headline, report.systems
    (suspect,) = report.suspected_annotation_errors
    assert suspect.case_id == "q3" and suspect.gold == ["UNO"] and REASON in suspect.reason
    assert ErrorType.ANNOTATION not in h.by_error_type and ErrorType.ANNOTATION not in system.by_error_type
    assert h.by_error_type == {"ResponseError": 1, "RetrievalError": 1}
    assert h.suspected_annotation_errors == system.suspected_annotation_errors == 1
    assert (h.failures, system.failures, h.attributed) == (3, 3, 3)
    assert (h.claims, h.responses) == (1, 1)  # the suspect is no claim a repair can test
    assert all(f.error_type != ErrorType.ANNOTATION for f in report.failures)
    assert all(p.error_type != ErrorType.ANNOTATION for p in report.patterns)
    assert sum(p.count for p in report.patterns) == 2
    assert all(p.share == pytest.approx(p.count / 2) for p in report.patterns)  # of the system's own
    (funnel,) = report.funnel
    assert funnel.suspected_annotation_errors == 1 and funnel.stages[0].count == 2  # q1 and q2 only
    assert any("suspected annotation error" in note for note in report.notes)


def test_the_report_files_show_the_suspects_section(marked: tuple[Path, Report]) -> None:
    _, report = marked
    md, page = render_markdown(report), render_html(report)
    assert "## Suspected annotation errors: 1" in md
    section = md.split("## Suspected annotation errors: 1")[1].split("\n## ")[0]
    assert "| mem0 | q3 | Which card game did Kofi play? | UNO | poker |" in section and REASON in section
    assert '<section id="annotation">' in page and "Suspected annotation errors: 1" in page
    assert REASON in page.split('<section id="annotation">')[1].split("</section>")[0]
    assert "AnnotationError" not in md.split("## Suspected annotation errors")[0]  # no count, no column
    sent = json.loads(report.model_dump_json())
    assert sent["suspected_annotation_errors"][0]["case_id"] == "q3"
    assert sent["headline"]["suspected_annotation_errors"] == 1


def test_the_commands_show_the_suspect_apart(
    marked: tuple[Path, Report], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = marked
    code, out, _ = run_cli_in_process(capsys, "attribute", path)
    flat = " ".join(out.split())
    assert code == 0 and "Suspected annotation errors: 1" in flat and "UNO" in flat
    assert "ResponseError: 1, RetrievalError: 1; suspected annotation errors: 1" in flat
    main_table = flat.split("Suspected annotation errors: 1")[0]
    assert "AnnotationError" not in main_table and "q3" not in main_table
    code, out, _ = run_cli_in_process(capsys, "verify", path)
    flat = " ".join(out.split())
    assert (
        code == 0 and "Claims a repair can test: 1;" in flat and "ResponseErrors (never replayed): 1;" in flat
    )
    assert "Suspected annotation errors (the conversation does not support the gold answer): 1" in flat
    code, out, _ = run_cli_in_process(capsys, "report", path, "--out", tmp_path / "r")
    flat = " ".join(out.split())
    assert code == 0 and "Suspected annotation errors: 1 (kept out of the error counts)" in flat
    assert "suspected annotation errors" in flat.split("Claims a repair can test")[0]  # the system table
