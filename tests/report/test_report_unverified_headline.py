"""The headline's confirmed shares count never-verified claims in their denominators, so it says how
many there are: a 0% flow-confirmed before `memtrace verify` means "not checked yet", not "refuted"."""

from __future__ import annotations

import sys
from pathlib import Path

from memtrace import Workspace
from memtrace.attribution.model import load_attributions
from memtrace.cli.verify_cmd import headline
from memtrace.report import build_report
from memtrace.report.render_md import render_markdown

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reporthelpers import attributed_workspace, verified_workspace


def test_an_unverified_workspace_says_how_many_claims_were_never_checked() -> None:
    with Workspace(attributed_workspace()) as ws:
        report = build_report(ws)
        stored = load_attributions(ws.store, method="flow")
    h = report.headline
    assert h.claims > 0 and h.claims_not_verified == h.claims and h.flow_confirmed == 0
    assert h.responses_not_verified == h.responses > 0
    assert f"| {h.claims} ({h.claims} not verified yet) | 0.0% (0) |" in render_markdown(report)
    line = headline(stored)
    assert f"Claims a repair can test: {h.claims}, {h.claims} not verified yet;" in line
    assert f"ResponseErrors (never replayed): {h.responses}, {h.responses} not verified yet;" in line


def test_a_verified_workspace_has_nothing_pending_in_its_headline() -> None:
    with Workspace(verified_workspace()) as ws:
        report = build_report(ws)
        stored = load_attributions(ws.store, method="flow")
    assert report.headline.claims_not_verified == 0 and report.headline.responses_not_verified == 0
    assert "not verified yet" not in render_markdown(report).split("## Notes")[0]
    assert "not verified yet" not in headline(stored)
