"""Failure patterns say what to change next, show different questions, and mark the evidence line."""

from __future__ import annotations

import io
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from markupsafe import escape
from rich.console import Console

from memtrace import Workspace
from memtrace.cli.report_cmd import patterns_table
from memtrace.graph import VariableVersion
from memtrace.report import Report, build_report, render_html, render_markdown
from memtrace.report.model import FailureRecord
from memtrace.report.patterns import EXAMPLES_PER_PATTERN, pick_examples, question_key
from memtrace.report.snippets import snippet
from memtrace.systems.registry import system_class, system_names
from memtrace.systems.tunable_routes import routes_for

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reporthelpers import verified_workspace


@pytest.fixture(scope="module")
def report() -> Report:
    with Workspace(verified_workspace()) as ws:
        return build_report(ws)


def version(category: str = "retrieved") -> VariableVersion:
    return VariableVersion(
        run_id="r", id=f"{category}@1", name=category, version=1, seq=1, category=category, blob=None
    )


def record(
    case_id: str, question: str, verified: str | None = None, confidence: float = 0.5
) -> FailureRecord:
    return FailureRecord(
        run_id="r", system="s", case_id=case_id, anchor=case_id, question=question, category=None,
        error_type="RetrievalError", method="flow", op_id="search#1", op_name="search",
        op_category="retrieval", op_seq=1, question_seq=2, confidence=confidence, verified=verified,
    )  # fmt: skip


def test_examples_prefer_questions_no_earlier_pattern_showed() -> None:
    members = [record("a", "Where?", "answer-confirmed", 0.9), record("b", "When?"), record("c", "Who?")]
    assert [r.case_id for r in pick_examples(members, 2)] == ["a", "b"]  # confirmed first
    assert [r.case_id for r in pick_examples(members, 2, avoid={"where?"})] == ["b", "c"]
    assert [r.case_id for r in pick_examples(members, 3, avoid={"where?"})] == ["b", "c", "a"]


def test_a_question_repeats_across_patterns_only_when_a_pattern_ran_out(report: Report) -> None:
    members: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for failure in report.failures:
        members[failure.system, failure.op_name or "-", failure.error_type].add(
            question_key(failure.question)
        )
    shown: set[str] = set()
    for pattern in report.patterns:
        questions = [question_key(e.question) for e in pattern.examples]
        fresh = members[pattern.system, pattern.op_name, pattern.error_type] - shown
        assert len(set(questions) - shown) == min(len(fresh), EXAMPLES_PER_PATTERN)
        shown |= set(questions)
    assert len(report.patterns) >= 4 and len(shown) > EXAMPLES_PER_PATTERN  # several systems, many questions


def test_every_pattern_of_a_known_system_names_its_tunables(report: Report) -> None:
    for pattern in report.patterns:
        assert pattern.system in system_names()
        op_category = next(
            f.op_category
            for f in report.failures
            if (f.system, f.op_name) == (pattern.system, pattern.op_name)
        )
        declared = system_class(pattern.system).routes
        routes = routes_for(declared, pattern.op_name, op_category, pattern.error_type)
        expected = list(dict.fromkeys(r.tunable for r in routes))
        assert [t.name for t in pattern.tunables] == expected
        fields = system_class(pattern.system).Config.model_fields
        assert all(t.name in fields for t in pattern.tunables)
    assert any(p.tunables for p in report.patterns)


def test_the_rendered_report_says_what_to_change_and_highlights_the_evidence(report: Report) -> None:
    markdown, html = render_markdown(report), render_html(report)
    pattern = next(p for p in report.patterns if p.tunables)
    assert f"`{pattern.tunables[0].name}`" in markdown and "What to change next" in markdown
    assert f"memtrace optimize {report.workspace} --system {pattern.system}" in markdown
    marked = [(v, i) for p in report.patterns for e in p.examples for v in e.inputs for i in v.marked]
    assert marked, "no example marks its evidence line"
    snippet_, line = marked[0]
    assert f"▶ {snippet_.text.splitlines()[line]}" in markdown
    assert f"<mark>{escape(snippet_.text.splitlines()[line])}</mark>" in html
    shown = [re.sub(r"</?mark>", "", block) for block in re.findall(r"<pre>(.*?)</pre>", html, flags=re.S)]
    assert str(escape(snippet_.text)) in shown  # one line per item, as in the markdown


def test_a_long_context_keeps_and_marks_the_item_restating_the_evidence() -> None:
    items = [f"Diego talked about topic number {n} at length" for n in range(12)]
    items[9] = "Clara adopted a dog named Pepper last month [on 17 March 2023]"
    evidence = ["Clara: I adopted a dog named Pepper last month! Pepper is a labrador."]
    cut = snippet(version(), items, focus=["labrador"], evidence=evidence)
    lines = cut.text.splitlines()
    assert [lines[i] for i in cut.marked] == [f"- {items[9]}"]
    assert cut.truncated and "more item(s)" in lines[-1]


def test_the_gold_answer_marks_its_line_but_never_the_question_or_the_prediction() -> None:
    assert snippet(version(), ["Clara lives in Lisbon", "Diego rows"], focus=["Lisbon"]).marked == [0]
    assert snippet(version("context"), "Clara lives in Lisbon now", focus=["Lisbon"]).marked == [0]
    assert snippet(version("prediction"), "Lisbon", focus=["Lisbon"], evidence=["Lisbon"]).marked == []
    assert snippet(version("query"), "Does Clara live in Lisbon?", focus=["Lisbon"]).marked == []


def test_the_terminal_table_names_the_tunables_of_each_pattern(report: Report) -> None:
    console = Console(width=300, record=True, file=io.StringIO())
    console.print(patterns_table(report))
    rows = [line for line in console.export_text().splitlines() if line.startswith("│")]
    assert rows and any(p.tunables for p in report.patterns[: len(rows)])
    for pattern, row in zip(report.patterns, rows, strict=False):
        assert ", ".join(t.name for t in pattern.tunables) in row
