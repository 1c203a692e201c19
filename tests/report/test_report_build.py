"""The structured report: its numbers agree with what the store says about runs, cases and attributions."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from memtrace import NotFoundError, Workspace
from memtrace.attribution.evidence.locate import locator_for
from memtrace.attribution.model import load_attributions
from memtrace.eval import says_unanswerable
from memtrace.graph import MemtraceError
from memtrace.report import Report, build_report
from memtrace.report.funnel import STAGE_KEYS, flow_error_type
from memtrace.report.patterns import MAX_INPUTS
from memtrace.report.snippets import SNIPPET_CHARS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reporthelpers import attributed_workspace, record_sample, verified_workspace


@pytest.fixture(scope="module")
def built() -> tuple[Path, Report]:
    """The report of the attributed (not verified) sample workspace."""
    workspace = attributed_workspace()
    with Workspace(workspace) as ws:
        return workspace, build_report(ws)


@pytest.fixture(scope="module")
def verified() -> tuple[Path, Report]:
    """The report of the sample workspace after `memtrace verify` (replay runs, outcomes, revisions)."""
    workspace = verified_workspace()
    with Workspace(workspace) as ws:
        return workspace, build_report(ws)


def test_headline_counts_match_the_store(verified: tuple[Path, Report]) -> None:
    workspace, report = verified
    with Workspace(workspace) as ws:
        runs = [r for r in ws.runs() if r.parent_run is None]
        replays = [r for r in ws.runs() if r.parent_run is not None]
        cases = [c for r in runs for c in ws.cases(r.id)]
        flow = [a for a in load_attributions(ws.store, method="flow") if a.run_id in {r.id for r in runs}]
        systems = {r.id: r.system for r in runs}
    assert replays, "verify should have left replay runs, which the report leaves out"
    assert [r.id for r in report.runs] == [r.id for r in runs]
    h = report.headline
    failed = [c for c in cases if c.verdict == "wrong"]
    assert (h.runs, h.questions, h.judged) == (4, len(cases), len(cases))
    assert h.correct == sum(c.verdict == "correct" for c in cases)
    assert h.failures == len(failed) == h.attributed == len(flow)
    assert h.accuracy == pytest.approx(h.correct / h.judged)
    assert h.by_error_type == dict(Counter(a.error_type for a in flow))
    assert h.by_system == dict(Counter(systems[c.run_id] for c in failed))
    outcomes = Counter(a.verified or "not verified" for a in flow)
    assert h.verification == dict(outcomes)
    claims = [a for a in flow if a.determined and a.error_type != "ResponseError"]
    responses = [a for a in flow if a.error_type == "ResponseError"]
    assert (h.claims, h.responses) == (len(claims), len(responses))
    assert h.flow_confirmed == sum(bool(a.flow_confirmed) for a in claims)
    assert h.answer_confirmed == sum(bool(a.answer_confirmed) for a in claims)
    assert h.by_elimination == sum(a.verified == "by-elimination" for a in responses)
    assert h.flow_confirmed_share == (pytest.approx(h.flow_confirmed / h.claims) if claims else None)
    assert h.by_elimination_share == pytest.approx(h.by_elimination / h.responses)
    assert sum(s.failures for s in report.systems) == h.failures
    assert [s.system for s in report.systems] == ["long_context", "rag", "mem0", "evermemos"]
    assert not any("not verified yet" in note for note in report.notes)
    assert any("replay run(s)" in note for note in report.notes)
    assert "not verified" not in h.verification


@pytest.mark.parametrize("which", ["built", "verified"])
def test_funnel_stages_follow_the_flow_attributions(which: str, request: pytest.FixtureRequest) -> None:
    workspace, report = request.getfixturevalue(which)
    with Workspace(workspace) as ws:
        flow = {(a.run_id, a.case_id): a for a in load_attributions(ws.store, method="flow")}
        for funnel in report.funnel:
            (run,) = [r for r in report.runs if r.system == funnel.system]
            locator = locator_for(ws.view(run.id))
            with_evidence = [
                c
                for c in ws.cases(run.id)
                if locator.resolve(c.evidence)[0] and not all(says_unanswerable(g) for g in c.gold)
            ]
            kinds = Counter(flow_error_type(flow[run.id, c.id]) for c in with_evidence if c.failed)
            counts = {s.key: s.count for s in funnel.stages}
            assert [s.key for s in funnel.stages] == STAGE_KEYS
            assert counts["evidence"] == len(with_evidence)
            assert counts["evidence"] - counts["extracted"] == kinds["ExtractionError"]
            assert counts["extracted"] - counts["survived"] == kinds["UpdateError"] + kinds["DeletionError"]
            assert counts["survived"] - counts["retrieved"] == kinds["RetrievalError"]
            assert counts["retrieved"] - counts["answered"] == kinds["ResponseError"]
            assert counts["answered"] == sum(c.verdict == "correct" for c in with_evidence)
            assert funnel.unanswerable == 5 and funnel.undetermined == 0
    mem0 = next(f for f in report.funnel if f.system == "mem0")
    assert mem0.stages[1].count > mem0.stages[2].count  # the sample's deletions lose information


def test_revised_attributions_keep_their_original_claim(verified: tuple[Path, Report]) -> None:
    workspace, report = verified
    with Workspace(workspace) as ws:
        revised = {
            (a.run_id, a.case_id): a.revised_from
            for a in load_attributions(ws.store, method="flow")
            if getattr(a, "revised_from", None)
        }
    records = {(f.run_id, f.case_id): f for f in report.failures}
    for key, claim in revised.items():
        assert records[key].revised_from == f"{claim['error_type']} at {claim['op_id']}"
    assert sum(f.revised_from is not None for f in report.failures) == len(revised)
    assert any("revised by verification" in note for note in report.notes) == bool(revised)


def test_timing_places_every_decisive_operation(built: tuple[Path, Report]) -> None:
    _, report = built
    timing = report.timing
    assert timing.unit == "sessions"
    assert sum(b.count for b in timing.bins) + timing.unknown == report.headline.failures
    question_time = timing.bins[-1]
    assert question_time.label == "question time"
    for record in report.failures:
        if record.error_type in ("ResponseError", "RetrievalError"):
            assert record.at_question_time and record.position == 1.0
        if record.error_type == "DeletionError":
            assert not record.at_question_time and record.sessions_before_question is not None
            assert 0 < record.position < 1  # type: ignore[operator]
    deletions = sum(b.by_error_type.get("DeletionError", 0) for b in timing.bins[:-1])
    assert deletions == report.headline.by_error_type.get("DeletionError", 0) > 0


def test_patterns_group_every_failure_with_examples(built: tuple[Path, Report]) -> None:
    workspace, report = built
    assert sum(p.count for p in report.patterns) == report.headline.failures
    assert [p.count for p in report.patterns] == sorted((p.count for p in report.patterns), reverse=True)
    groups = Counter((f.system, f.op_name, f.error_type) for f in report.failures)
    assert {(p.system, p.op_name, p.error_type): p.count for p in report.patterns} == dict(groups)
    anchors = [e.anchor for p in report.patterns for e in p.examples]
    assert len(anchors) == len(set(anchors))
    with Workspace(workspace) as ws:
        flow = {(a.run_id, a.case_id): a for a in load_attributions(ws.store, method="flow")}
        cases = {(c.run_id, c.id): c for c in ws.cases()}
    for pattern in report.patterns:
        assert 1 <= len(pattern.examples) <= min(3, pattern.count)
        assert pattern.description and str(pattern.count) in pattern.description
        for example in pattern.examples:
            key = (example.run_id, example.case_id)
            assert example.op_id == flow[key].op_id
            assert example.question == cases[key].question and example.prediction == cases[key].prediction
            assert example.outputs and len(example.inputs) <= MAX_INPUTS
            assert all(len(v.text.splitlines()[0]) <= SNIPPET_CHARS + 20 for v in example.inputs)
    deletion = next(p for p in report.patterns if p.error_type == "DeletionError")
    assert deletion.op_name == "delete_memory" and deletion.verification == {"not verified": deletion.count}
    assert any(v.text == "(deleted)" for e in deletion.examples for v in e.outputs)


def test_json_round_trips(built: tuple[Path, Report]) -> None:
    _, report = built
    assert Report.model_validate_json(report.model_dump_json()) == report


def test_missing_attributions_are_computed_with_flow_and_said(tmp_path: Path) -> None:
    (run_id,) = record_sample(tmp_path / "ws", ["mem0"])
    with Workspace(tmp_path / "ws") as ws:
        assert load_attributions(ws.store) == []
        report = build_report(ws)
        stored = load_attributions(ws.store, method="flow")
        failed = [c for c in ws.cases(run_id) if c.failed]
    assert len(stored) == len(failed) == report.headline.attributed > 0
    assert any("attributed them now with the flow method" in note for note in report.notes)
    assert any("not verified yet" in note for note in report.notes)
    assert report.headline.verification == {"not verified": len(failed)}
    assert report.headline.flow_confirmed == report.headline.by_elimination == 0


def test_another_method_without_attributions_falls_back_to_flow(built: tuple[Path, Report]) -> None:
    workspace, _ = built
    with Workspace(workspace) as ws:
        report = build_report(ws, method="agent")
    assert report.method == "agent"
    assert {f.method for f in report.failures} == {"flow"}
    assert any("no stored agent attribution" in note for note in report.notes)


def test_runs_filter_by_prefix_name_and_comma_list(built: tuple[Path, Report]) -> None:
    workspace, full = built
    mem0, rag = (next(r for r in full.runs if r.system == s) for s in ("mem0", "rag"))
    with Workspace(workspace) as ws:
        only = build_report(ws, runs=[mem0.id[:6]])
        two = build_report(ws, runs=[f"{mem0.name},{rag.id}"])
        with pytest.raises(NotFoundError, match="no run matches 'nope'"):
            build_report(ws, runs=["nope"])
    assert [r.id for r in only.runs] == [mem0.id]
    assert only.headline.failures == full.headline.by_system["mem0"]
    assert {r.id for r in two.runs} == {mem0.id, rag.id}


def test_a_workspace_without_runs_is_an_error(tmp_path: Path) -> None:
    with Workspace(tmp_path / "empty", create=True) as ws, pytest.raises(MemtraceError, match="no runs"):
        build_report(ws)


def test_a_verified_claim_carries_its_confidence_after_verification(
    verified: tuple[Path, Report], built: tuple[Path, Report]
) -> None:
    """The figure flow's measured table gives the claim's verdict; an unverified claim has none."""
    from memtrace.report.render_md import render_markdown

    _, report = verified
    records = [f for f in report.failures if f.verified is not None and f.method == "flow"]
    moved = [f for f in records if f.confidence_after_verify is not None]
    assert moved and all(0.0 < f.confidence_after_verify < 1.0 for f in moved)
    # A verdict the labels agreed with less often than the type's claims lowers it, and the reverse.
    lower = [f for f in moved if f.verified == "not-verifiable"]
    assert all(f.confidence_after_verify < f.confidence for f in lower)
    assert all(f.confidence_after_verify is None for f in built[1].failures)
    shown = render_markdown(report)
    assert f"{moved[0].confidence:.2f} ({moved[0].confidence_after_verify:.2f} after verification)" in shown
