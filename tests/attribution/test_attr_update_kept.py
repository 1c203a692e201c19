"""Mem0-style update decisions (issue 19): an update step given a new value that keeps the unit's old
one failed to update it; a fact drawn from a long sentence still carries it when it names the person
asked about; a question in the future is answered by a plan."""

from __future__ import annotations

from pathlib import Path

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.evidence.support import OverlapScorer
from memtrace.attribution.evidence.words import asks_about_plan
from memtrace.attribution.model import PathRole

MOVED = "Tamsin: Change of plan for May: not Keswick any more, we're going climbing at Ullswater instead."
QUESTION = "Where is Tamsin going climbing in May?"


def _decision_run(workspace: Path, old_memory: str, new_fact: str) -> str:
    """Extraction writes the new fact; the update decision reads it beside `old_memory`, writes nothing."""
    with mt.run(workspace, name="plans", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            turn = op.output("D2:1", MOVED, category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(turn)
            facts = op.output("extracted_facts", [new_fact])
        with mt.op("add_old", category="update") as op:
            unit = run.memory("mem-1").create({"memory": old_memory}, by=op)
        with mt.op("update_memory_decision", category="update") as op:
            op.use(facts)
            op.use(unit)
            op.output("update_action", {"event": "NONE", "id": "mem-1"})
        with mt.op("search", category="retrieval") as op:
            op.input("query", QUESTION, category="query")
            found = op.output("retrieved", [old_memory], category="retrieved")
        case = run.case(QUESTION, gold="Ullswater", evidence=["D2:1"])
        with mt.op("answer", category="response") as op:
            op.use(found)
            prediction = op.output("prediction", "Keswick", category="prediction")
        case.predict("Keswick", var=prediction)
        case.judge(False)
        return run.id


def _attribute(workspace: Path, run_id: str) -> mt.Attribution:
    with mt.open(workspace) as ws:
        return FlowMethod().attribute(ws.view(run_id), ws.cases(run_id)[0])


def test_an_update_step_keeping_the_outdated_value_is_an_update_error(tmp_path: Path) -> None:
    run_id = _decision_run(
        tmp_path,
        "Tamsin plans to go climbing at Keswick in May",
        "Tamsin plans to go climbing at Ullswater in May",
    )
    result = _attribute(tmp_path, run_id)
    assert (result.error_type, result.op_id.split("#")[0]) == ("UpdateError", "update_memory_decision"), (
        result.explanation
    )
    assert "Keswick" in result.explanation and "instead of updating it" in result.explanation
    # The kept unit never carried "Ullswater": no version of it is a carrier an Update repair restores.
    assert result.step(PathRole.LAST_CARRIER) is None


def test_an_update_step_dropping_a_fact_no_unit_was_about_is_an_extraction_error(tmp_path: Path) -> None:
    """The unit it read is about something else: nothing was there to update, the fact never entered."""
    run_id = _decision_run(
        tmp_path, "Tamsin keeps bees in her garden", "Tamsin plans to go climbing at Ullswater in May"
    )
    result = _attribute(tmp_path, run_id)
    assert (result.error_type, result.op_id.split("#")[0]) == ("ExtractionError", "update_memory_decision"), (
        result.explanation
    )


def test_a_question_in_the_future_asks_about_a_plan() -> None:
    assert asks_about_plan(QUESTION)
    assert asks_about_plan("What will Odile bake for the fair?")
    assert asks_about_plan("What are Marisol's plans for her finished quilt?")  # a plan, asked as a noun
    assert not asks_about_plan("Where did Tamsin go climbing in May?")
    assert not asks_about_plan("How is Gina's store going?")


def test_a_fact_from_a_long_sentence_carries_it_when_it_names_the_person_asked_about() -> None:
    """The sentence says more than the fact drawn from it; the fact naming the person asked about and
    one more word of the sentence carries it, the same words about someone else do not."""
    scorer = OverlapScorer()
    said = "Bertil: Grimsby, my old whippet, is asleep by the stove as we speak."
    target = scorer.prepare(
        "What is Bertil's dog called?", ["Grimsby"], [("D1:5", said)], ["Bertil", "Agnes"]
    )
    assert scorer.carries(target, "Bertil has an elderly whippet named Grimsby")
    assert not scorer.carries(target, "A whippet named Grimsby lives next door")
    assert not scorer.carries(target, "Agnes has a whippet named Grimsby")
