"""Every ResponseError verification backs (by elimination, or confirmed by the judge's item check) shows
its carrying part in the report, not only the three examples of its pattern: report.json's failures and
report.html's All failures table hold it."""

from __future__ import annotations

import sys
from pathlib import Path

from markupsafe import escape

from memtrace import Workspace
from memtrace.attribution.model import PathRole, load_attributions
from memtrace.report import build_report
from memtrace.report.render_html import render_html
from memtrace.vocabulary import Verdict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reporthelpers import verified_workspace


def test_each_elimination_names_its_carrying_part_in_the_json_and_the_html() -> None:
    with Workspace(verified_workspace()) as ws:
        report = build_report(ws)
        stored = {(a.run_id, a.case_id): a for a in load_attributions(ws.store, method="flow")}
    eliminated = [
        f
        for f in report.failures
        if f.error_type == "ResponseError" and f.verified in (Verdict.BY_ELIMINATION, Verdict.FLOW_CONFIRMED)
    ]
    examples = {e.case_id for p in report.patterns for e in p.examples}
    assert len(eliminated) > len({f.case_id for f in eliminated} & examples)  # more than the examples show
    page = render_html(report)
    for failure in eliminated:
        parts = [
            s.part for s in stored[(failure.run_id, failure.case_id)].path if s.role == PathRole.IN_CONTEXT
        ]
        assert failure.carrying_part and failure.carrying_part == parts[0]
        assert str(escape(failure.carrying_part)) in page
