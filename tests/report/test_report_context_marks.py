"""A retrieved item is marked as carrying the evidence only when it does (issue 19, cause 10): in the
report's examples an item of a context is marked only when a path step "in context" names it, never for
mentioning the gold answer or an evidence id."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from markupsafe import escape

from memtrace import Workspace
from memtrace.attribution.model import PathRole, load_attributions
from memtrace.graph import VariableVersion
from memtrace.report import Report, build_report, render_html, render_markdown
from memtrace.report.patterns import CONTEXT_CATEGORIES
from memtrace.report.snippets import snippet

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reporthelpers import DOG_MEMORY, record_marks_run, verified_workspace


def _retrieved() -> VariableVersion:
    return VariableVersion(
        run_id="r", id="retrieved@3", name="retrieved", version=3, seq=9, category="retrieved", blob="h"
    )


def test_only_the_part_the_path_names_is_marked_as_carrying() -> None:
    items = ["Pepper is a name Diego likes", DOG_MEMORY, "Kofi played a card game", "Diego rows"]
    cut = snippet(_retrieved(), items, focus=["Pepper", "D1:3"], carrying=[DOG_MEMORY])
    lines = cut.text.splitlines()
    assert [lines[i] for i in cut.carrying] == [f"- {DOG_MEMORY}"] and cut.marked == []
    unnamed = snippet(_retrieved(), items, focus=["Pepper"], carrying=[])
    assert unnamed.carrying == [] and unnamed.marked == []  # mentioning the gold marks nothing
    window = "\n".join(f"[D1:{n}] Diego: line {n}" for n in range(40)) + f"\n[D1:40] {DOG_MEMORY}"
    kept = snippet(_retrieved(), window, focus=["Pepper"], carrying=[f"[D1:40] {DOG_MEMORY}"])
    assert [kept.text.splitlines()[i] for i in kept.carrying] == [f"- [D1:40] {DOG_MEMORY}"]


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> Report:
    path = tmp_path_factory.mktemp("marks") / "ws"
    record_marks_run(path)
    with Workspace(path) as ws:
        return build_report(ws)


def test_a_response_errors_item_is_marked_and_a_retrieval_errors_mention_is_not(marks: Report) -> None:
    examples = {e.case_id: e for p in marks.patterns for e in p.examples}
    (context,) = [v for v in examples["q1"].inputs if v.category == "retrieved"]
    assert [context.text.splitlines()[i] for i in context.carrying] == [f"- {DOG_MEMORY}"]
    assert context.marked == []
    (missed,) = [v for v in examples["q2"].outputs if v.category == "retrieved"]
    assert "Pepper" in missed.text and missed.carrying == [] and missed.marked == []
    md, page = render_markdown(marks), render_html(marks)
    assert f"★ - {DOG_MEMORY}" in md and md.count("★ - ") == 1
    assert f'<mark class="carries">★ - {escape(DOG_MEMORY)}</mark>' in page
    assert page.count('<mark class="carries">★ - ') == 1


def test_in_the_demo_report_every_carrying_mark_is_a_part_the_path_names() -> None:
    with Workspace(verified_workspace()) as ws:
        report = build_report(ws)
        stored = {(a.run_id, a.case_id): a for a in load_attributions(ws.store, method="flow")}
    marked = 0
    for example in (e for p in report.patterns for e in p.examples):
        attribution = stored[example.run_id, example.case_id]
        for value in [*example.inputs, *example.outputs]:
            if value.category not in CONTEXT_CATEGORIES:
                continue
            assert value.marked == [], (example.case_id, value.id)
            named = [s.part for s in attribution.steps(PathRole.IN_CONTEXT) if s.id == value.id]
            for line in (value.text.splitlines()[i] for i in value.carrying):
                marked += 1
                shown = line.removeprefix("- ").split(" (")[0].rstrip("…")
                assert any(" ".join(part.split()).startswith(shown.lstrip("…")[:60]) for part in named), line
    assert marked > 0
