"""Verifying a claim that names only an operation and a type (a baseline's, an imported one): the
verifier places the operation against the case and finds the repair's steps in the graph itself."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from attrhelpers import answer_wrongly, attributed_mem0_run

import memtrace as mt
from memtrace.attribution.evidence.anatomy import case_anatomy
from memtrace.attribution.evidence.support import content_stems
from memtrace.attribution.model import Attribution, load_attributions
from memtrace.attribution.verify.counterfactual import verify
from memtrace.vocabulary import ErrorType, Verdict

REPLAY_CONFIRMED = (Verdict.FLOW_CONFIRMED, Verdict.ANSWER_CONFIRMED)


@pytest.fixture(scope="module")
def mem0_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("pathless")
    return path, attributed_mem0_run(path)


@pytest.fixture
def ws(mem0_run: tuple[Path, str], tmp_path: Path) -> mt.Workspace:
    """A copy of the attributed run (verification records replays into it)."""
    shutil.copytree(mem0_run[0], tmp_path / "ws")
    workspace = mt.open(tmp_path / "ws")
    yield workspace
    workspace.close()


def _claims(ws: mt.Workspace, run_id: str) -> list[Attribution]:
    return load_attributions(ws.store, run_id, "flow")


def _bare(claim: Attribution, op_id: str | None = None, kind: ErrorType | None = None) -> Attribution:
    """The claim as a tool without paths would make it: an operation and a type only."""
    return replace(
        claim, path=[], op_id=op_id or claim.op_id, error_type=kind or claim.error_type, method="bare"
    )


def test_an_answer_step_of_another_case_is_refuted_without_a_replay(
    ws: mt.Workspace, mem0_run: tuple[Path, str]
) -> None:
    run_id = mem0_run[1]
    first, second = _claims(ws, run_id)[:2]
    other_answer = case_anatomy(ws.view(run_id), ws.case(run_id, second.case_id)).answer_op
    outcome = verify(ws, _bare(first, other_answer.id, ErrorType.RESPONSE))
    assert outcome.verdict == Verdict.REFUTED and outcome.why == "not-the-answer-step"
    assert outcome.replay_run is None


def test_a_retrieval_for_another_question_is_refuted(ws: mt.Workspace, mem0_run: tuple[Path, str]) -> None:
    run_id = mem0_run[1]
    claims = _claims(ws, run_id)
    graph = ws.view(run_id)
    mine = claims[0]
    mine_anatomy = case_anatomy(graph, ws.case(run_id, mine.case_id))
    other = next(
        a
        for c in claims[1:]
        if (a := case_anatomy(graph, ws.case(run_id, c.case_id))).retrieval_op is not None
        and a.retrieval_op.id != mine_anatomy.retrieval_op.id
    )
    outcome = verify(ws, _bare(mine, other.retrieval_op.id, ErrorType.RETRIEVAL))
    assert outcome.verdict == Verdict.REFUTED and outcome.why == "not-this-question"


def test_an_update_that_changed_no_unit_holding_the_answer_is_refuted(
    ws: mt.Workspace, mem0_run: tuple[Path, str]
) -> None:
    """Chosen by words alone: an update whose replaced unit versions share no word with the gold."""
    run_id = mem0_run[1]
    graph = ws.view(run_id)
    refuted = 0
    for claim in _claims(ws, run_id)[:6]:
        case = ws.case(run_id, claim.case_id)
        gold = set().union(*(content_stems(g) for g in case.gold))
        question_seq = case_anatomy(graph, case).question_seq
        for op in graph.ops_by_category("update"):
            if op.seq >= question_seq:
                continue
            replaced = [
                graph.value(v.id)
                for out in graph.outputs(op.id)
                if out.category == "memory_entry"
                for v in graph.versions(out.name)
                if v.version < out.version
            ]
            if replaced and not any(gold & content_stems(str(value)) for value in replaced):
                outcome = verify(ws, _bare(claim, op.id, ErrorType.UPDATE))
                assert outcome.verdict == Verdict.REFUTED, (op.id, outcome.reason)
                assert outcome.why in ("changed-no-holder", "context-had-it"), outcome.why
                refuted += 1
                break
    assert refuted, "the sample run should have updates of units unrelated to some question"


def test_a_right_claim_without_its_path_is_confirmed_and_stays_pathless(
    ws: mt.Workspace, mem0_run: tuple[Path, str]
) -> None:
    """Flow's confirmed retrieval and response claims, stripped of their path, are confirmed from the
    graph alone; what verification returns is the claim as given (no path added to it)."""
    run_id = mem0_run[1]
    checked = 0
    for claim in _claims(ws, run_id):
        if claim.error_type not in (ErrorType.RETRIEVAL, ErrorType.RESPONSE):
            continue
        with_path = verify(ws, claim)
        if with_path.verdict not in REPLAY_CONFIRMED:
            continue
        bare = _bare(claim)
        outcome = verify(ws, bare)
        assert outcome.verdict in REPLAY_CONFIRMED, (claim.case_id, outcome.reason)
        assert outcome.attribution is bare and bare.path == []
        assert outcome.checked[0].startswith("the claim names no path")
        checked += 1
    assert checked >= 2


def test_an_update_that_kept_every_item_it_held_is_refuted_and_a_trim_that_cut_one_is_not(
    tmp_path: Path,
) -> None:
    """A long-context window: appending a line keeps every line held before (it lost nothing), a trim
    that cut the evidence line lost it. Only the first is refuted, whatever the claim's path."""
    from memtrace.attribution.engine import attribute
    from memtrace.datasets import sample_conversation
    from memtrace.systems import run_conversation
    from memtrace.systems.long_context import LongContext, LongContextConfig

    run = run_conversation(LongContext(LongContextConfig(max_tokens=600)), sample_conversation(0), tmp_path)
    with mt.open(tmp_path) as ws:
        attribute(ws, "flow")
        graph = ws.view(run.run_id)
        losses = [
            a
            for a in _claims(ws, run.run_id)
            if a.error_type in (ErrorType.UPDATE, ErrorType.DELETION) and a.op_id.startswith("trim_memory")
        ]
        assert losses, "a 600-token window should lose evidence to its trims"
        claim = losses[0]
        outcome = verify(ws, claim, oracle=False)
        assert outcome.why != "lost-nothing", outcome.reason
        case = ws.case(run.run_id, claim.case_id)
        question_seq = case_anatomy(graph, case).question_seq
        trim = graph.op(claim.op_id)
        appends = [
            op for op in graph.ops_by_category("update") if op.name == "memory_update" and op.seq < trim.seq
        ]
        outcome = verify(ws, _bare(claim, appends[-1].id, ErrorType.UPDATE), oracle=False)
        assert (outcome.verdict, outcome.why) == (Verdict.REFUTED, "lost-nothing"), outcome.reason
        assert appends[-1].seq < question_seq and outcome.replay_run is None


def test_a_replay_s_own_patches_must_be_applied_again_by_its_repair_replay(
    ws: mt.Workspace, mem0_run: tuple[Path, str]
) -> None:
    """A faulted replay (its answer step patched) verified by a repair replay that misses that patch would
    flip the answer by undoing the fault: such a replay is named, and tells nothing of the claim."""
    from memtrace.attribution.verify.inherited import inherited_patches_lost
    from memtrace.systems.replay import replay

    run_id = mem0_run[1]
    claim = _claims(ws, run_id)[0]
    answer = case_anatomy(ws.view(run_id), ws.case(run_id, claim.case_id)).answer_op
    faulted = replay(
        ws, run_id, {answer.id: {"outputs": {"prediction": "a wrong answer"}}}, cases=[claim.case_id]
    )
    assert faulted.patched == [answer.id]
    on_faulted = replace(claim, run_id=faulted.run_id)
    assert inherited_patches_lost(ws, on_faulted, patched=[]) == [answer.id]
    assert inherited_patches_lost(ws, on_faulted, patched=[answer.id]) == []
    assert inherited_patches_lost(ws, claim, patched=[]) == []  # a recorded run has no patches of its own


def test_an_update_of_a_unit_paraphrasing_an_inferred_answer_s_turn_is_not_refuted(tmp_path: Path) -> None:
    """An inferred answer's items are whole turns, and a memory splits a turn into facts: that no unit
    held the turn whole proves nothing of what the update lost."""
    turn = "Jolene: Had a great night out last night, dinner and drinks with my friends, so fun!"
    with mt.run(tmp_path, name="night", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            said = op.output("D6:1", turn, category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(said)
            run.memory("mem-1").create({"memory": "Had a great night out with Jolene's friends"}, by=op)
        with mt.op("update_memory_decision", category="update") as op:
            op.input("fact", "Jolene let her hair down", category="fact")
            run.memory("mem-1").update({"memory": "(details forgotten)"}, by=op)
            update_id = op.id
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", ["(details forgotten)"], category="retrieved")
        answer_wrongly(
            run, found, "Did Jolene enjoy her night out with friends?", "Likely yes", ["D6:1"], "no"
        )
    with mt.open(tmp_path) as ws:
        claim = Attribution(run.id, ws.cases(run.id)[0].id, update_id, ErrorType.UPDATE, 0.0, "", "bare")
        outcome = verify(ws, claim)
        assert outcome.why not in ("changed-no-holder", "lost-nothing"), outcome.reason


def _wrapped_run(workspace: Path) -> tuple[str, str, str]:
    """One outer operation wraps the whole conversation (an imported trace's root span): an extraction,
    the question's search and answer, then an extraction after it. Returns (run, early, late) ids."""
    with mt.run(workspace, name="wrapped", system="mem0") as run, mt.op("conversation", category="agent"):
        with mt.op("load", category="construction") as op:
            said = op.output("D1:1", "Caroline: I adopted a dog named Pepper last week!", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(said)
            run.memory("mem-1").create({"memory": "Caroline adopted a dog named Pepper"}, by=op)
            early = op.id
        with mt.op("search", category="retrieval") as op:
            op.input("query", "What is the name of Caroline's dog?", category="query")
            found = op.output("retrieved", ["Caroline likes long walks"], category="retrieved")
        answer_wrongly(run, found, "What is the name of Caroline's dog?", "Pepper", ["D1:1"], "unknown")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(said)
            late = op.id
    return run.id, early, late


def test_memory_work_is_placed_against_the_retrieval_that_fed_the_answer(tmp_path: Path) -> None:
    """An outer operation makes the question stage look like it began at the start of the run: an
    extraction before the search is still before the question, one after the answer is not."""
    run_id, early, late = _wrapped_run(tmp_path)
    with mt.open(tmp_path) as ws:
        case_id = ws.cases(run_id)[0].id
        for op_id in (early, late):
            claim = Attribution(run_id, case_id, op_id, ErrorType.EXTRACTION, 0.0, "", "bare")
            outcome = verify(ws, claim)
            assert (outcome.why == "after-the-question") is (op_id == late), (op_id, outcome.reason)
        search = next(op.id for op in ws.store.ops(run_id) if op.name == "search")
        retrieval = Attribution(run_id, case_id, search, ErrorType.RETRIEVAL, 0.0, "", "bare")
        assert verify(ws, retrieval).why != "memory-lacked-it"  # memory held the dog when it was read


def test_an_update_dropping_an_item_only_one_rule_saw_has_not_lost_nothing(tmp_path: Path) -> None:
    """Luna is disputed before the update (one rule sees her) and missing after: the update may have lost
    her, so it is not refuted as having lost nothing."""
    before = {"memory": "Caroline adopted a puppy named Pepper. She has a cat, Luna"}
    with mt.run(tmp_path, name="pets", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            dog = op.output("D1:1", "Caroline: I adopted a puppy named Pepper last week!", category="message")
            cat = op.output(
                "D1:2", "Caroline: And my sister gave me a kitten, we call her Luna.", category="message"
            )
        with mt.op("extract_facts", category="extraction") as op:
            op.use(dog)
            op.use(cat)
            run.memory("mem-1").create(before, by=op)
        with mt.op("update_memory_decision", category="update") as op:
            run.memory("mem-1").update({"memory": "Caroline adopted a puppy named Pepper."}, by=op)
            update_id = op.id
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", ["Caroline adopted a puppy named Pepper."], category="retrieved")
        answer_wrongly(
            run,
            found,
            "What are the names of Caroline's pets?",
            "Pepper and Luna",
            ["D1:1", "D1:2"],
            "Pepper",
        )
    with mt.open(tmp_path) as ws:
        claim = Attribution(run.id, ws.cases(run.id)[0].id, update_id, ErrorType.UPDATE, 0.0, "", "bare")
        assert verify(ws, claim).why != "lost-nothing"


def test_an_extraction_that_read_nothing_holding_the_answer_is_refuted(tmp_path: Path) -> None:
    """It had nothing of the answer to extract: adding the fact there would deliver it, and prove nothing."""
    with mt.run(tmp_path, name="unread", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            dog = op.output("D1:1", "Caroline: I adopted a dog named Pepper last week!", category="message")
            walk = op.output("D1:2", "Melanie: I went for a long walk by the lake today.", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(walk)
            op.output("extracted_facts", ["Melanie went for a walk"], category="extracted_facts")
            unrelated = op.id
        with mt.op("extract_facts", category="extraction") as op:
            op.use(dog)
            op.output("extracted_facts", [], category="extracted_facts")
            dropped = op.id
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", ["Melanie went for a walk"], category="retrieved")
        answer_wrongly(run, found, "What is the name of Caroline's dog?", "Pepper", ["D1:1"], "unknown")
    with mt.open(tmp_path) as ws:
        case_id = ws.cases(run.id)[0].id
        for op_id in (unrelated, dropped):
            outcome = verify(ws, Attribution(run.id, case_id, op_id, ErrorType.EXTRACTION, 0.0, "", "bare"))
            assert (outcome.why == "never-read-it") is (op_id == unrelated), (op_id, outcome.reason)
