"""The report's honesty about verification: levels apart, and no "held the information" without its part."""

from __future__ import annotations

import html as html_escaping
import re

from reporthelpers import attributed_workspace, verified_workspace

from memtrace import Workspace
from memtrace.report import build_report, render_html, render_markdown
from memtrace.report.patterns import honest_explanation

_HELD = re.compile(r"held (?:the )?(?:needed )?information")


def test_an_unbacked_held_the_information_claim_is_reworded() -> None:
    text = "The context given to answer (answer#9) held the information (support 0.50), yet it answered 'x'."
    assert honest_explanation(text, "Clara moved to Lisbon [on 27 April 2023]") == text
    reworded = honest_explanation(text, None)
    assert not _HELD.search(reworded) and "no single part of it shown to carry it" in reworded


def test_examples_show_the_carrying_part_whenever_they_say_the_context_held_it() -> None:
    for workspace in (attributed_workspace(), verified_workspace()):
        with Workspace(workspace) as ws:
            report = build_report(ws)
        examples = [e for p in report.patterns for e in p.examples]
        assert examples
        for example in examples:
            if _HELD.search(example.explanation):
                assert example.carrying_part, example
            if example.verified == "by-elimination":
                assert example.carrying_part and any(example.carrying_part in c for c in example.checked)
        md, html = render_markdown(report), render_html(report)
        for example in examples:
            if example.carrying_part:
                shown = html_escaping.escape(" ".join(example.carrying_part.split()), quote=False)
                assert f"**Carrying part of the context:** {shown}" in md
        for paragraph in md.split("\n\n"):
            if _HELD.search(paragraph) and "#### Case" in paragraph:
                assert "**Carrying part of the context:**" in paragraph
        assert "verified share" not in md and "flow-confirmed" in html


def test_the_headline_gives_confirmed_shares_and_elimination_apart() -> None:
    with Workspace(verified_workspace()) as ws:
        report = build_report(ws)
    h = report.headline
    assert h.claims + h.responses + h.undetermined == h.attributed
    assert h.answer_confirmed <= h.claims and h.flow_confirmed <= h.claims
    assert h.by_elimination <= h.responses
    confirmed = [f for f in report.failures if f.flow_confirmed or f.answer_confirmed]
    assert all(f.error_type != "ResponseError" for f in confirmed)
    assert all(f.verification_reason for f in report.failures if f.verified is not None)
