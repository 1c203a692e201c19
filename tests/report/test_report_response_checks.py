"""ResponseError verification stated honestly (issue 19): confirmed by the item check, refuted, by
elimination (inferred answers) and not verified, each counted apart from the claims a repair can test,
in report.md, report.html, report.json and both consoles; refuted claims counted and listed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import run_cli_in_process
from memtrace import Workspace
from memtrace.attribution.model import VERIFIER_VERSION, load_attributions, save_attribution
from memtrace.cli.verify_cmd import headline
from memtrace.report import build_report, render_html, render_markdown
from memtrace.report.verification import verification_figures
from memtrace.vocabulary import ErrorType, Verdict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reporthelpers import copy_workspace, verified_workspace


def _item(kind: ErrorType, verdict: Verdict | None, flow: bool = False) -> SimpleNamespace:
    return SimpleNamespace(error_type=kind, verified=verdict, flow_confirmed=flow, answer_confirmed=False)


def test_each_population_is_counted_apart_and_annotation_suspects_are_no_claim() -> None:
    figures = verification_figures(
        [
            _item(ErrorType.RETRIEVAL, Verdict.FLOW_CONFIRMED, flow=True),
            _item(ErrorType.DELETION, Verdict.REFUTED),
            _item(ErrorType.EXTRACTION, None),
            _item(ErrorType.RESPONSE, Verdict.FLOW_CONFIRMED),
            _item(ErrorType.RESPONSE, Verdict.FLOW_CONFIRMED),
            _item(ErrorType.RESPONSE, Verdict.REFUTED),
            _item(ErrorType.RESPONSE, Verdict.BY_ELIMINATION),
            _item(ErrorType.RESPONSE, Verdict.NOT_VERIFIABLE),
            _item(ErrorType.RESPONSE, None),
            _item(ErrorType.ANNOTATION, Verdict.NOT_VERIFIABLE),
            _item(ErrorType.UNDETERMINED, Verdict.NOT_VERIFIABLE),
        ]
    )
    assert (figures.claims, figures.flow_confirmed, figures.claims_refuted, figures.claims_not_verified) == (
        3,
        1,
        1,
        1,
    )
    assert figures.flow_confirmed_share == pytest.approx(1 / 3)
    assert (
        figures.responses,
        figures.responses_confirmed,
        figures.responses_refuted,
        figures.by_elimination,
        figures.responses_not_verifiable,
        figures.responses_not_verified,
    ) == (6, 2, 1, 1, 1, 1)
    assert figures.suspected_annotation_errors == 1


@pytest.fixture(scope="module")
def refuted_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo workspace with one DeletionError and one more ResponseError stored as refuted."""
    path = copy_workspace(verified_workspace(), tmp_path_factory.mktemp("refuted") / "ws")
    with Workspace(path) as ws:
        stored = load_attributions(ws.store, method="flow")
        picks = [
            next(a for a in stored if a.error_type == kind and a.verified != Verdict.REFUTED)
            for kind in (ErrorType.DELETION, ErrorType.RESPONSE)
        ]
        for item in picks:
            item.verified, item.flow_confirmed = Verdict.REFUTED, None
            item.verification = {
                "reason": f"planted refutation of {item.case_id}",
                "why": "planted",
                "verifier": VERIFIER_VERSION,  # as this verifier would store it: not renewed by `verify`
            }
            save_attribution(ws.store, item, item.settings_key or "")
    return path


def test_the_report_counts_response_verdicts_apart_and_lists_refuted_claims(refuted_ws: Path) -> None:
    with Workspace(refuted_ws) as ws:
        report = build_report(ws)
    h = report.headline
    responses = [f for f in report.failures if f.error_type == ErrorType.RESPONSE]
    said = [f.verified for f in responses]
    assert h.responses_confirmed == said.count(Verdict.FLOW_CONFIRMED) > 0
    assert h.responses_refuted == said.count(Verdict.REFUTED) >= 1 and h.claims_refuted == 1
    parts = h.responses_confirmed + h.responses_refuted + h.by_elimination + h.responses_not_verifiable
    assert parts + h.responses_not_verified == h.responses == len(responses)
    assert h.flow_confirmed == sum(bool(f.flow_confirmed) for f in report.failures)  # claims only
    planted = [f for f in report.refuted if f.verification_reason.startswith("planted")]
    assert len(planted) == 2 and len(report.refuted) == h.claims_refuted + h.responses_refuted

    md, page = render_markdown(report), render_html(report)
    assert f"| {h.responses} | {h.responses_confirmed_share:.1%} ({h.responses_confirmed}) | " in md
    assert f"### Refuted by verification: {len(report.refuted)}" in md
    assert f'<h3 id="refuted">Refuted by verification: {len(report.refuted)}</h3>' in page
    assert f"confirmed by the item check ({h.responses_confirmed} of {h.responses})" in page
    for failure in planted:
        row = f"| {failure.system} | {failure.case_id} | {failure.error_type} | {failure.op_id} |"
        assert row in md and failure.verification_reason in page
    assert "verified share" not in md and "verified:" not in md.split("## Failure patterns")[0]
    sent = json.loads(report.model_dump_json())["headline"]
    assert sent["responses_refuted"] == h.responses_refuted and sent["claims_refuted"] == 1
    assert sent["verification_by_type"]["ResponseError"]["refuted"] == h.responses_refuted


def test_both_consoles_say_the_same_and_name_the_refuted_cases(
    refuted_ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Workspace(refuted_ws) as ws:
        report = build_report(ws)
        stored = load_attributions(ws.store, method="flow")
    h = report.headline
    sentence = f"confirmed by the item check (every item in the context) {h.responses_confirmed_share:.1%}"
    assert sentence in headline(stored)
    code, out, _ = run_cli_in_process(capsys, "report", refuted_ws, "--out", tmp_path / "r")
    flat = " ".join(out.split())
    assert code == 0 and " ".join(sentence.split()) in flat
    assert f"Refuted by verification: {len(report.refuted)}" in flat and "planted refutation" in flat
    code, out, _ = run_cli_in_process(capsys, "verify", refuted_ws, "--json", tmp_path / "v.json")
    flat = " ".join(out.split())
    assert code == 0 and " ".join(sentence.split()) in flat and f"Refuted: {len(report.refuted)}" in flat
    sent = json.loads((tmp_path / "v.json").read_text())
    assert sent["responses_refuted"] == h.responses_refuted and sent["claims_refuted"] == 1
    assert {(c["case_id"], c["error_type"]) for c in sent["refuted_cases"]} == {
        (f.case_id, f.error_type) for f in report.refuted
    }
