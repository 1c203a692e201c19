"""The context oracle: a refuted repair is followed by a replay with the evidence in the answer's context."""

from __future__ import annotations

from pathlib import Path

import pytest

import memtrace as mt
from memtrace.attribution.anatomy import case_anatomy
from memtrace.attribution.engine import attribute
from memtrace.attribution.model import Attribution, PathStep, load_attributions
from memtrace.attribution.oracle import evidence_texts
from memtrace.attribution.verify import Verification, verify_all
from memtrace.datasets import sample_conversation
from memtrace.systems import run_conversation
from memtrace.systems.long_context import LongContext, LongContextConfig


@pytest.fixture(scope="module")
def trimmed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A long-context run whose small window loses evidence, attributed by flow."""
    path = tmp_path_factory.mktemp("oracle")
    run = run_conversation(LongContext(LongContextConfig(max_tokens=600)), sample_conversation(0), path)
    attribute(mt.open(path), "flow")
    return path, run.run_id


def _verified(path: Path, run_id: str, *, oracle: bool, tmp_path: Path) -> list[Verification]:
    """Verify a fresh copy of the attributed workspace (verification stores its outcome)."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(path, copy)
    return verify_all(copy, method="flow", oracle=oracle)


def test_a_repair_refuted_because_the_answer_step_fails_anyway_is_revised_to_it(
    trimmed: tuple[Path, str], tmp_path: Path
) -> None:
    path, run_id = trimmed
    outcomes = _verified(path, run_id, oracle=True, tmp_path=tmp_path)
    revised = [o for o in outcomes if o.attribution.revised_from is not None]
    assert revised, "the small window should lose evidence the offline answer step then misses anyway"
    ws = mt.open(tmp_path / "copy")
    for outcome in revised:
        a = outcome.attribution
        assert (a.error_type, a.verified) == ("ResponseError", "by-elimination")
        assert a.revised_from["error_type"] == "UpdateError" and a.revised_from["verified"] == "false"
        case = ws.case(run_id, a.case_id)
        assert a.op_id == case_anatomy(ws.view(run_id), case).answer_op.id
        # the oracle replay really had the evidence in the answer's context, and still answered wrong
        oracle = ws.view(a.replay_run)
        replayed = ws.case(a.replay_run, a.case_id)
        assert replayed.verdict == "wrong"
        context = case_anatomy(oracle, replayed).context_vars
        lines = [str(line) for v in context for line in oracle.value(v.id)]
        assert any(line.startswith(tuple(f"[{e}]" for e in case.evidence)) for line in lines)
    stored = {a.case_id: a for a in load_attributions(ws.store, run_id, "flow")}
    assert all(stored[o.attribution.case_id].revised_from == o.attribution.revised_from for o in revised)


def test_a_loss_that_recurs_after_the_repair_stays_refuted_and_says_so(
    trimmed: tuple[Path, str], tmp_path: Path
) -> None:
    path, run_id = trimmed
    refuted = [o for o in _verified(path, run_id, oracle=True, tmp_path=tmp_path) if o.verdict == "false"]
    assert refuted
    assert all("no single operation is decisive" in o.reason for o in refuted)
    assert all(o.attribution.revised_from is None for o in refuted)


def test_without_the_oracle_refuted_claims_are_left_as_they_are(
    trimmed: tuple[Path, str], tmp_path: Path
) -> None:
    path, run_id = trimmed
    outcomes = _verified(path, run_id, oracle=False, tmp_path=tmp_path)
    assert not any(o.attribution.revised_from for o in outcomes)
    assert ("UpdateError", "false") in {(o.attribution.error_type, o.verdict) for o in outcomes}


def test_evidence_texts_prefer_the_memory_and_add_uncovered_messages_with_their_date(workspace: Path) -> None:
    with mt.run(workspace, name="t") as run, mt.op("load_session", category="construction") as op:
        op.output("session_1.date", "1:56 pm on 8 May, 2023", category="session_date")
        first = op.output("D1:1", "Clara: I play keyboard.", category="message")
        second = op.output("D1:2", "Clara: I quit the band.", category="message")
    with mt.run(workspace, name="m") as other, mt.op("add", category="update") as op:
        memory = op.output(
            "mem-1", {"memory": "Clara plays keyboard", "timestamp": "8 May 2023", "sources": ["D1:1"]}
        )
    graph = mt.open(workspace).view(run.id)
    path = [
        PathStep("var", first, 1, "evidence (gold)", True),
        PathStep("var", second, 2, "evidence (gold)", True),
    ]
    claim = Attribution(run.id, "q", None, "ExtractionError", 0.8, "", "flow", path)
    assert evidence_texts(graph, claim) == [
        "[D1:1] Clara: I play keyboard. [said on 8 May 2023]",
        "[D1:2] Clara: I quit the band. [said on 8 May 2023]",
    ]
    # a memory carrying one of them (by its sources) stands in for that message only
    mixed = mt.open(workspace).view(other.id)
    carried = Attribution(other.id, "q", None, "RetrievalError", 0.8, "", "flow", [
        PathStep("var", "D1:1@1", 1, "evidence (gold)", True),
        PathStep("var", memory, 1, "in memory at question time", True),
    ])  # fmt: skip
    assert evidence_texts(mixed, carried) == ["Clara plays keyboard [said on 8 May 2023]"]


def test_attributing_a_workspace_leaves_replays_out_unless_asked_for(
    trimmed: tuple[Path, str], tmp_path: Path
) -> None:
    path, run_id = trimmed
    outcomes = _verified(path, run_id, oracle=True, tmp_path=tmp_path)
    ws = mt.open(tmp_path / "copy")
    replays = [r.id for r in ws.runs() if r.parent_run]
    assert replays and {o.replay_run for o in outcomes if o.replay_run} <= set(replays)
    everything = attribute(ws, "flow")
    assert {a.run_id for a in everything} == {run_id}
    failed_replay = next(r for r in replays if any(c.failed for c in ws.cases(r)))
    assert {a.run_id for a in attribute(ws, "flow", run=failed_replay)} == {failed_replay}
