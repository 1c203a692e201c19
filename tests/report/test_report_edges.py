"""Reports of unusual workspaces (no sessions, no gold evidence, no failures) and the value snippets."""

from __future__ import annotations

from pathlib import Path

import memtrace as mt
from memtrace import Workspace
from memtrace.attribution.model import Attribution, PathRole, PathStep
from memtrace.graph import Case, VariableVersion
from memtrace.report import build_report, render_html, render_markdown
from memtrace.report.snippets import LIST_ITEMS, focus_terms, line, snippet


def _version(deleted: bool = False) -> VariableVersion:
    return VariableVersion("r", "ctx@1", "ctx", 1, 5, "retrieved", "h", deleted=deleted)


def test_a_run_without_sessions_or_resolvable_evidence(workspace: Path, small_run: str) -> None:
    """conftest's small pipeline: no session boundaries, and its evidence id names no message."""
    with Workspace(workspace) as ws:
        report = build_report(ws)
    (funnel,) = report.funnel
    assert funnel.without_evidence == 1 and funnel.stages[0].count == 0 and funnel.stages[0].share is None
    assert report.timing.unit == "fraction"
    (record,) = report.failures
    assert (record.error_type, record.op_name) == ("UpdateError", "update_memory")
    assert record.sessions_before_question is None and record.position == 1.0
    assert [b.label for b in report.timing.bins if b.count] == ["80-100%"]
    (example,) = report.patterns[0].examples
    assert "Boston" in example.inputs[0].text and "Paris" in example.outputs[0].text
    assert render_html(report).count("<svg") == 4
    assert "| 1 | 1 | 0 | 0.0% | 1 |" in render_markdown(report)


def test_a_workspace_without_failures(tmp_path: Path) -> None:
    with mt.run(tmp_path / "ws", name="fine", system="toy") as run:
        with mt.op("answer", category="response") as op:
            prediction = op.output("prediction", "Boston", category="prediction")
        case = run.case("Where does Caroline live?", gold="Boston")
        case.predict("Boston", var=prediction)
        case.judge(True, score=1.0)
    with Workspace(tmp_path / "ws") as ws:
        report = build_report(ws)
    h = report.headline
    assert (h.questions, h.failures, h.accuracy, h.flow_confirmed_share, h.by_elimination_share) == (
        1,
        0,
        1.0,
        None,
        None,
    )
    assert report.patterns == [] and report.timing.bins == []
    assert "No failed questions." in render_markdown(report) and "No failed questions." in render_html(report)


def test_line_keeps_the_first_focus_term_in_view() -> None:
    text = "x" * 500 + " the dog is a labrador " + "y" * 500
    short, cut = line(text, 120, ["labrador"])
    assert cut and "labrador" in short and short.startswith("…") and short.endswith("(1023 chars)")
    head, _ = line(text, 120, [])
    assert head.startswith("xxx") and "labrador" not in head
    assert line("short", 120, ["labrador"]) == ("short", False)


def test_long_lists_keep_items_that_mention_the_focus_in_order() -> None:
    items = [f"item {i}" for i in range(20)]
    items[15] = "item 15 mentions D1:7"
    text = snippet(_version(), items, ["D1:7"]).text.splitlines()
    assert text[: LIST_ITEMS - 1] == [f"- item {i}" for i in range(LIST_ITEMS - 1)]
    assert "- item 15 mentions D1:7" in text and text[-1] == "… 4 more item(s)"
    assert snippet(_version(deleted=True), items).text == "(deleted)"
    assert snippet(_version(), None).text == "(no value)"


def test_focus_terms_are_gold_answers_then_evidence_ids() -> None:
    case = Case("r", "q", "Where?", gold=["Boston"], evidence=["D1:1", "D2:3"])
    path = [PathStep("var", "D1:1@1", 1, "evidence (gold)", True, role=PathRole.EVIDENCE)]
    attribution = Attribution("r", "q", None, "Undetermined", 0.0, "", "flow", path)
    assert focus_terms(case, attribution) == ["Boston", "D1:1", "D2:3"]
    unanswerable = Case("r", "q", "Where?", gold=["Not mentioned in the conversation"])
    assert focus_terms(unanswerable, attribution) == ["D1:1"]
