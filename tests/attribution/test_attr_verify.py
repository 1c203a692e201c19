"""Verification by replay: two levels apart, claims never moved downstream, elimination needs a part."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from attrhelpers import attributed_mem0_run

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.attribution.engine import attribute
from memtrace.attribution.evidence.anatomy import case_anatomy
from memtrace.attribution.evidence.support import OverlapScorer
from memtrace.attribution.evidence.target import evidence_target
from memtrace.attribution.model import Attribution, PathRole, PathStep, load_attributions
from memtrace.attribution.verify.counterfactual import (
    Verification,
    build_repair,
    verify,
    verify_all,
)
from memtrace.attribution.verify.ideal_facts import ideal_fact
from memtrace.attribution.verify.items import check_for, stating_turns
from memtrace.attribution.verify.oracle import evidence_texts
from memtrace.datasets import sample_conversation
from memtrace.eval import says_unanswerable
from memtrace.systems import run_conversation
from memtrace.systems.long_context import LongContext, LongContextConfig
from memtrace.systems.registry import system_class


@pytest.fixture(scope="module")
def trimmed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A long-context run whose small window loses evidence, attributed by flow."""
    path = tmp_path_factory.mktemp("oracle")
    run = run_conversation(LongContext(LongContextConfig(max_tokens=600)), sample_conversation(0), path)
    with mt.open(path) as ws:
        attribute(ws, "flow")
    return path, run.run_id


def _verified(path: Path, run_id: str, *, oracle: bool, tmp_path: Path) -> list[Verification]:
    """Verify a fresh copy of the attributed workspace (verification stores its outcome)."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(path, copy)
    return verify_all(copy, method="flow", oracle=oracle)


@pytest.fixture(scope="module")
def retrieving(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A Mem0 run with a small top-k over the sample, attributed by flow: retrieval, deletion and
    response claims."""
    path = tmp_path_factory.mktemp("mem0")
    return path, attributed_mem0_run(path)


def test_verification_never_moves_a_claim_and_records_the_answer_step_beside_it(
    trimmed: tuple[Path, str], tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    path, run_id = trimmed
    before = {a.case_id: (a.op_id, a.error_type) for a in load_attributions(open_ws(path).store, run_id)}
    outcomes = _verified(path, run_id, oracle=True, tmp_path=tmp_path)
    assert {
        o.attribution.case_id: (o.attribution.op_id, o.attribution.error_type) for o in outcomes
    } == before
    ws = open_ws(tmp_path / "copy")
    seconds = [o for o in outcomes if o.second_faults]
    assert seconds, "the offline answer step misses some answers even with the evidence in its context"
    for outcome in seconds:
        case = ws.case(run_id, outcome.attribution.case_id)
        (fault,) = outcome.second_faults
        assert fault["error_type"] == "ResponseError" and outcome.attribution.error_type != "ResponseError"
        assert fault["op_id"] == case_anatomy(ws.view(run_id), case).answer_op.id
        assert ws.case(fault["replay_run"], case.id).verdict == "wrong"  # the probe really answered wrong
    stored = {a.case_id: a for a in load_attributions(ws.store, run_id, "flow")}
    assert all(
        stored[o.attribution.case_id].verification["second_faults"] == o.second_faults for o in outcomes
    )
    assert not any(a.revised_from for a in stored.values())


def test_a_trim_loss_that_recurs_is_confirmed_only_with_later_trims_keeping_the_line(
    trimmed: tuple[Path, str], tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    path, run_id = trimmed
    outcomes = _verified(path, run_id, oracle=False, tmp_path=tmp_path)
    trims = [o for o in outcomes if o.attribution.error_type == "UpdateError"]
    kept = [o for o in trims if o.why == "kept-by-later-trims"]
    assert len(kept) * 2 > len(trims)
    for outcome in [o for o in trims if o not in kept]:
        assert (outcome.verdict, outcome.why, outcome.flow_confirmed) == (
            "not-verifiable",
            "loss-recurs",
            False,
        )
    ws = open_ws(tmp_path / "copy")
    for outcome in kept:
        assert outcome.flow_confirmed is True and outcome.verdict in ("flow-confirmed", "answer-confirmed")
        plain, kept = outcome.checked[0], outcome.checked[4]
        assert (
            "keep the previous version" in plain and "no part of the replayed context" in outcome.checked[1]
        )
        assert "no unit carries the evidence" in outcome.checked[3]  # the plain repair's replay lost it again
        assert "later trims of the unit keeping" in kept
        replayed = ws.run(outcome.replay_run)
        restored = {s.id.rsplit("@", 1)[0] for s in outcome.attribution.path if s.role == PathRole.EVIDENCE}
        keep = replayed.metadata["replay"]["patches"][outcome.attribution.op_id]["keep"]
        case = ws.case(run_id, outcome.attribution.case_id)
        stating = stating_turns(check_for(ws.view(run_id), case))  # every item's turn is kept too
        kept_ids = {line.split("]")[0][1:] for lines in keep.values() for line in lines}
        assert kept_ids and kept_ids <= restored | stating
        assert outcome.answer_confirmed is (
            ws.case(outcome.replay_run, outcome.attribution.case_id).verdict == "correct"
        )


def test_a_retrieval_repair_is_checked_at_both_levels(
    retrieving: tuple[Path, str], tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    path, run_id = retrieving
    outcomes = [o for o in _verified(path, run_id, oracle=True, tmp_path=tmp_path)]
    repaired = [o for o in outcomes if o.attribution.error_type == "RetrievalError"]
    assert repaired, "a top-k of 2 should miss some evidence"
    ws = open_ws(tmp_path / "copy")
    for outcome in repaired:
        a = ws.case(outcome.replay_run, outcome.attribution.case_id)
        assert outcome.answer_confirmed is (a.verdict == "correct")
        if outcome.flow_confirmed and not outcome.answer_confirmed:
            assert outcome.verdict == "flow-confirmed"
            assert [f["error_type"] for f in outcome.second_faults] == ["ResponseError"]
        if outcome.answer_confirmed:
            assert outcome.verdict == "answer-confirmed"
    stored = {a.case_id: a for a in load_attributions(ws.store, run_id, "flow")}
    for outcome in repaired:
        item = stored[outcome.attribution.case_id]
        assert (item.flow_confirmed, item.answer_confirmed) == (
            outcome.flow_confirmed,
            outcome.answer_confirmed,
        )


def test_a_response_error_is_by_elimination_only_with_its_carrying_part_named(
    retrieving: tuple[Path, str], tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    path, run_id = retrieving
    ws = open_ws(path)
    graph = ws.view(run_id)
    stored = load_attributions(ws.store, run_id, "flow")
    scorer = OverlapScorer()
    for item in [a for a in stored if a.error_type == "ResponseError"]:
        outcome = verify(ws, item)
        if outcome.verdict == "by-elimination":  # an inferred answer: flow's rule is all there is
            (named,) = [s for s in outcome.attribution.path if s.part]
            target = evidence_target(graph, ws.case(run_id, item.case_id), item)
            assert scorer.score(target, named.part) >= scorer.threshold
            assert any(named.part in line for line in outcome.checked)
            assert any("inferred" in line for line in outcome.checked)
        elif outcome.verdict == "flow-confirmed":  # both rules find every item in the context
            assert outcome.why == "context-holds-every-item"
            assert any("items by the judge's rule and flow's: held" in line for line in outcome.checked)
            assert not any("missing" in line or "disputed" in line for line in outcome.checked)
        elif outcome.verdict == "refuted":  # verification says no: an item is missing from the context
            assert outcome.why == "context-lacks-item" and "holds" in outcome.reason
        elif outcome.why == "items-disputed":  # the two rules disagree: nothing is concluded
            assert outcome.verdict == "not-verifiable" and "disagree" in outcome.reason
        else:
            assert (outcome.verdict, outcome.why) == ("not-verifiable", "unanswerable")
            assert all(says_unanswerable(g) for g in ws.case(run_id, item.case_id).gold)
    # a claim that the context held the evidence when no part of it does is not by elimination
    missed = next(a for a in stored if a.error_type == "RetrievalError")
    case = ws.case(run_id, missed.case_id)
    answer = case_anatomy(graph, case).answer_op
    relabelled = replace(missed, error_type="ResponseError", op_id=answer.id, path=list(missed.path))
    outcome = verify(ws, relabelled)
    assert (outcome.verdict, outcome.why) in (
        ("refuted", "context-lacks-item"),
        ("not-verifiable", "no-carrying-part"),
    )
    assert outcome.replay_run is None and not any(s.part for s in outcome.attribution.path)


def test_a_claim_without_a_repair_says_its_replay_never_ran(
    retrieving: tuple[Path, str], open_ws: OpenWorkspace
) -> None:
    path, run_id = retrieving
    ws = open_ws(path)
    item = next(a for a in load_attributions(ws.store, run_id, "flow") if a.error_type == "RetrievalError")
    broken = replace(item, path=[s for s in item.path if s.role != PathRole.LIVE_AT_QUESTION])
    outcome = verify(ws, broken)
    assert (outcome.verdict, outcome.why, outcome.replay_run) == ("not-verifiable", "no-repair", None)
    assert "no replay was run" in outcome.reason


def test_evidence_texts_prefer_the_memory_and_add_uncovered_messages_with_their_date(
    workspace: Path, open_ws: OpenWorkspace
) -> None:
    with mt.run(workspace, name="t") as run, mt.op("load_session", category="construction") as op:
        op.output("session_1.date", "1:56 pm on 8 May, 2023", category="session_date")
        first = op.output("D1:1", "Clara: I play keyboard.", category="message")
        second = op.output("D1:2", "Clara: I quit the band.", category="message")
    with mt.run(workspace, name="m") as other, mt.op("add", category="update") as op:
        memory = op.output(
            "mem-1", {"memory": "Clara plays keyboard", "timestamp": "8 May 2023", "sources": ["D1:1"]}
        )
    graph = open_ws(workspace).view(run.id)
    path = [
        PathStep("var", first, 1, "evidence (gold)", True, role=PathRole.EVIDENCE),
        PathStep("var", second, 2, "evidence (gold)", True, role=PathRole.EVIDENCE),
    ]
    claim = Attribution(run.id, "q", None, "ExtractionError", 0.8, "", "flow", path)
    assert evidence_texts(graph, claim) == [
        "[D1:1] Clara: I play keyboard. [said on 8 May 2023]",
        "[D1:2] Clara: I quit the band. [said on 8 May 2023]",
    ]
    # a memory carrying one of them (by its sources) stands in for that message only
    mixed = open_ws(workspace).view(other.id)
    carried = Attribution(other.id, "q", None, "RetrievalError", 0.8, "", "flow", [
        PathStep("var", "D1:1@1", 1, "evidence (gold)", True, role=PathRole.EVIDENCE),
        PathStep("var", memory, 1, "in memory at question time", True, role=PathRole.LIVE_AT_QUESTION),
    ])  # fmt: skip
    assert evidence_texts(mixed, carried) == ["Clara plays keyboard [said on 8 May 2023]"]


def test_attributing_a_workspace_leaves_replays_out_unless_asked_for(
    trimmed: tuple[Path, str], tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    path, run_id = trimmed
    outcomes = _verified(path, run_id, oracle=True, tmp_path=tmp_path)
    ws = open_ws(tmp_path / "copy")
    replays = [r.id for r in ws.runs() if r.parent_run]
    assert replays and {o.replay_run for o in outcomes if o.replay_run} <= set(replays)
    everything = attribute(ws, "flow")
    assert {a.run_id for a in everything} == {run_id}
    failed_replay = next(r for r in replays if any(c.failed for c in ws.cases(r)))
    assert {a.run_id for a in attribute(ws, "flow", run=failed_replay)} == {failed_replay}


def test_a_first_round_repair_undone_by_a_fusing_second_round_is_replayed_with_that_round_ideal(
    tmp_path: Path,
    open_ws: OpenWorkspace,
) -> None:
    evermemos = system_class("evermemos")
    run = run_conversation(evermemos(evermemos.Config(top_k=2)), sample_conversation(0), tmp_path)
    attribute(open_ws(tmp_path), "flow")
    outcomes = [
        o for o in verify_all(tmp_path, method="flow") if o.attribution.error_type == "RetrievalError"
    ]
    rounds = [o for o in outcomes if o.why == "kept-by-later-rounds"]
    assert rounds, "the sample's EverMemOS with top-k 2 fuses the repaired first round away"
    ws = open_ws(tmp_path)
    for outcome in rounds:
        assert outcome.flow_confirmed is True and "no part of the replayed context" in outcome.checked[1]
        patches = ws.run(outcome.replay_run).metadata["replay"]["patches"]
        final = case_anatomy(
            ws.view(run.run_id), ws.case(run.run_id, outcome.attribution.case_id)
        ).retrieval_op
        assert set(patches) == {outcome.attribution.op_id, final.id} and final.id != outcome.attribution.op_id


def test_an_extraction_repair_writes_the_fact_as_a_correct_extraction_would(
    workspace: Path, open_ws: OpenWorkspace
) -> None:
    with mt.run(workspace, name="t") as run, mt.op("load_session", category="construction") as op:
        op.output("session_1.date", "1:56 pm on 8 May, 2023", category="session_date")
        mine = op.output("D1:1", "Clara: I adopted a dog two days ago.", category="message")
        greeting = op.output("D1:2", "Diego: Hey Clara! The store is doing great.", category="message")
    graph = open_ws(workspace).view(run.id)
    # third person, the relative date resolved against the day it was said
    assert ideal_fact(graph, graph.var(mine)) == "Clara adopted a dog two days ago. [on 6 May 2023]"
    # no first person to rewrite: the fact still says whose it is, and when it was said
    assert ideal_fact(graph, graph.var(greeting)) == (
        "Diego said: Hey Clara! The store is doing great. [said on 8 May 2023]"
    )


def test_an_extraction_repair_says_which_question_a_reply_answers(workspace: Path) -> None:
    """ "Pepperoni of course!" is no fact a question about pizza can find; with its question it is."""
    with mt.run(workspace, name="t") as run, mt.op("load_session", category="construction") as op:
        op.output("session_9.date", "1:56 pm on 4 May, 2022", category="session_date")
        asked = op.output("D9:17", "John: Pizza? Which one do you love the most?", category="message")
        reply = op.output("D9:18", "James: Pepperoni of course!", category="message")
        aside = op.output("D9:19", "James: I also like cheese.", category="message")
    with mt.open(workspace) as ws:
        graph = ws.view(run.id)
        read = {asked, reply}
        assert ideal_fact(graph, graph.var(reply), read) == (
            "James said: Pepperoni of course! (answering John: Pizza? Which one do you love the most?) "
            "[said on 4 May 2022]"
        )
        # the question was not read by the repaired operation: the fact cannot say what it answers
        assert "answering" not in ideal_fact(graph, graph.var(reply), {reply})
        # the turn before is the same speaker's: nothing was asked of him
        assert "answering" not in ideal_fact(graph, graph.var(aside), {reply, aside})


def test_a_run_memtrace_cannot_reexecute_says_no_replay_was_run(workspace: Path) -> None:
    """A graph recorded without the runner (or imported) has no snapshots: not "the replay failed"."""
    with mt.run(workspace, name="hand-made") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output("D1:1", "Clara: I adopted a dog named Pepper!", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(evidence)
            op.output("extracted_facts", ["Clara likes parks"])
            run.memory("m").create({"memory": "Clara likes parks"}, by=op)
        case = run.case("What is the name of Clara's dog?", gold="Pepper", evidence=["D1:1"])
        with mt.op("answer", category="response") as op:
            prediction = op.output("prediction", "Rex", category="prediction")
        case.predict("Rex", var=prediction)
        case.judge(False)
    with mt.open(workspace) as ws:
        (claim,) = attribute(ws, "flow")
        assert claim.error_type == "ExtractionError", claim.explanation
    (outcome,) = verify_all(workspace, method="flow")
    assert (outcome.verdict, outcome.why) == ("not-verifiable", "not-replayable")
    assert outcome.reason.startswith("no replay was run:") and "no snapshots" in outcome.reason


@pytest.mark.parametrize(
    ("asked_id", "reply_id"), [("s1:0", "s1:1"), ("turn_009", "turn_010"), ("D9:9", "D9:10")]
)
def test_a_reply_finds_its_question_whatever_the_turn_numbering(
    workspace: Path, asked_id: str, reply_id: str
) -> None:
    """LongMemEval numbers turns from 0; padded ids keep their padding, unpadded ones do not gain it."""
    with mt.run(workspace, name="t") as run, mt.op("load_session", category="construction") as op:
        asked = op.output(asked_id, "assistant: Which pizza do you love the most?", category="message")
        reply = op.output(reply_id, "user: Pepperoni of course!", category="message")
    with mt.open(workspace) as ws:
        graph = ws.view(run.id)
        assert "(answering assistant: Which pizza do you love the most?)" in ideal_fact(
            graph, graph.var(reply), {asked, reply}
        )


def test_a_question_read_inside_a_buffer_line_with_several_ids_is_found(workspace: Path) -> None:
    with mt.run(workspace, name="t") as run, mt.op("load_session", category="construction") as op:
        op.output("D9:17", "John: Which pizza do you love the most?", category="message")
        reply = op.output("D9:18", "James: Pepperoni of course!", category="message")
        buffer = op.output("buffer", ["[D9:16,D9:17] John: Which pizza do you love the most?"])
    with mt.open(workspace) as ws:
        graph = ws.view(run.id)
        assert "(answering John: Which pizza" in ideal_fact(graph, graph.var(reply), {reply, buffer})


def test_an_extraction_repair_restates_the_fact_in_a_summary_made_of_the_facts(workspace: Path) -> None:
    """EverMemOS writes an episode that restates its facts line by line: the ideal extraction's
    episode holds the restored fact too. A text holding one fact is that fact's memory: untouched."""
    with mt.run(workspace, name="memcell") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output("D1:1", "Clara: I adopted a dog named Pepper!", category="message")
        with mt.op("extract_memcell", category="extraction") as op:
            op.use(evidence)
            facts = ["Clara likes parks.", "Clara runs on Sundays."]
            op.output("facts", facts, category="facts")
            op.output("episode", "\n".join(facts), category="episode")
            op.output("fact-1", facts[0])
            run.memory("episode-1").create({"memory": "\n".join(facts)}, by=op)
        case = run.case("What is the name of Clara's dog?", gold="Pepper", evidence=["D1:1"])
        with mt.op("answer", category="response") as op:
            prediction = op.output("prediction", "Rex", category="prediction")
        case.predict("Rex", var=prediction)
        case.judge(False)
    with mt.open(workspace) as ws:
        (claim,) = attribute(ws, "flow")
        assert claim.error_type == "ExtractionError", claim.explanation
        patch, repair = build_repair(ws, claim)
    assert patch is not None and "facts, episode" in repair
    outputs = patch[claim.op_id]["outputs"]
    assert set(outputs) == {"facts", "episode"}  # fact-1 holds one fact: no summary
    restored = outputs["facts"][-1]
    assert "Pepper" in restored and outputs["episode"].split("\n") == [*facts, restored]


def test_a_late_repair_replays_from_its_snapshot_far_fewer_operations_with_the_same_verdict(
    retrieving: tuple[Path, str], tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    """A retrieval at question time resumes from the construction snapshot: its replay re-runs a
    few operations, not the conversation, and reaches the verdict a replay from the first message does."""
    import shutil

    from memtrace.attribution.verify.counterfactual import verification_summary
    from memtrace.systems.snapshots import SNAPSHOT_DIR

    path, run_id = retrieving
    near = _verified(path, run_id, oracle=False, tmp_path=tmp_path)
    whole = tmp_path / "whole"
    shutil.copytree(path, whole)
    for snapshot in (whole / SNAPSHOT_DIR / run_id).glob("*.pkl"):
        snapshot.write_bytes(b"unsigned")  # refused: replays start at the first message
    far = {o.attribution.case_id: o for o in verify_all(whole, method="flow", oracle=False)}
    run_ops = open_ws(tmp_path / "copy").store.count("ops", run_id)
    late = [o for o in near if o.attribution.error_type == "RetrievalError" and o.replayed_ops is not None]
    assert late
    for outcome in late:
        assert outcome.replayed_ops * 10 < run_ops  # a question's operations, not the run's
        again = far[outcome.attribution.case_id]
        assert again.replayed_ops is not None and again.replayed_ops > 3 * outcome.replayed_ops
        assert (outcome.verdict, outcome.answer, outcome.flow_confirmed) == (
            again.verdict,
            again.answer,
            again.flow_confirmed,
        )
    with mt.open(tmp_path / "copy") as ws:
        summary = verification_summary(load_attributions(ws.store, run_id, "flow"))
    counted = {item["case"]: item["ops"] for item in summary["replayed_ops"]["per_claim"]}
    assert all(counted[o.attribution.case_id] == o.replayed_ops for o in late)


def test_a_retrieval_repair_keeps_the_answer_items_the_real_retrieval_found(tmp_path: Path) -> None:
    """The search found Whiskers (last of three) and missed Pepper. An ideal retrieval returns Pepper
    and keeps Whiskers: the item dropped to make room is one holding nothing of the answer, not the
    last one (a hand-recorded run replays nothing, so the repair itself is checked)."""
    from attrhelpers import PEPPER, WHISKERS, mem0_case

    from memtrace.graph.values import value_text

    turns = {
        "D1:3": PEPPER,
        "D2:5": WHISKERS,
        "D3:1": "Diego: I love hiking on weekends.",
        "D3:2": "Diego: My sister lives in Lisbon.",
    }
    facts = {
        "mem-1": ("Diego adopted a dog named Pepper last spring", "D1:3"),
        "mem-2": ("Diego adopted a cat named Whiskers last month", "D2:5"),
        "mem-3": ("Diego loves hiking on weekends", "D3:1"),
        "mem-4": ("Diego's sister lives in Lisbon", "D3:2"),
    }
    retrieved = [facts["mem-3"][0], facts["mem-4"][0], facts["mem-2"][0]]
    case = (
        "What pets does Diego have?",
        "a dog named Pepper and a cat named Whiskers",
        ["D1:3", "D2:5"],
        "a cat",
    )
    run_id = mem0_case(tmp_path, turns, facts, retrieved, case)
    with mt.open(tmp_path) as ws:
        (claim,) = attribute(ws, "flow")
        assert claim.error_type == "RetrievalError", claim.explanation
        patch, repair = build_repair(ws, claim)
        assert patch is not None, repair
        (repaired,) = patch[claim.op_id]["outputs"].values()
        texts = [value_text(item) for item in repaired]
        assert len(texts) == 3 and any("Pepper" in t for t in texts) and any("Whiskers" in t for t in texts)
        assert not any("Lisbon" in t for t in texts)  # the last item holding nothing made room
    assert run_id
