"""An inferred answer's claim is not confirmed by its own evidence turns arriving (issue 19).

For "Would Priya likely enjoy a pottery class? Likely yes" the item check's items are the annotated
turns, the very turns flow traced. A retrieval repair writes them into the context, and ideal later
trims keep them there, by construction: seeing them arrive restates flow's premise. Without a flip
such a claim is not verifiable. A stated answer ("clay") is still checked by the judge's rule on its
words, which flow never decided, and stays confirmed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import memtrace as mt
from memtrace.attribution.engine import attribute
from memtrace.attribution.verify.counterfactual import Verification, verify
from memtrace.attribution.verify.items import check_for
from memtrace.datasets.model import Conversation, Question, Session, Turn
from memtrace.systems import run_conversation
from memtrace.systems.long_context import LongContext, LongContextConfig
from memtrace.systems.rag import RAGConfig, RAGSystem

ASKED = "Would Priya likely enjoy a weekend class at a ceramics workshop?"
INFERRED = Question("q0", ASKED, ["Likely yes"], ["D1:3"], "open-domain")
STATED = Question("q1", "What material does Priya love working with?", ["clay"], ["D1:3"], "single-hop")


def _conversation() -> Conversation:
    """Priya's one telling line (D1:3) early in a session of small talk, so it is trimmed or outranked."""
    turns = [
        ("D1:1", "Tomas", "Hey Priya, how did the week treat you?"),
        ("D1:2", "Priya", "Pretty calm, mostly errands and a dentist visit."),
        ("D1:3", "Priya", "I spent every evening at the pottery studio, I love working with clay."),
        ("D1:4", "Tomas", "Nice, I mostly watched the rowing finals on television."),
        # What a top-1 retrieval ranks first for each question: the question's words, none of its answer.
        ("D1:5", "Tomas", "What material would you love working with, Priya? I love working with wood."),
        ("D1:6", "Tomas", "Would you enjoy a weekend class, Priya? A language class at the workshop, say."),
    ]
    filler = [
        (f"D1:{n}", "Tomas" if n % 2 else "Priya", f"Small talk number {n} about buses, lunch and rain.")
        for n in range(7, 30)
    ]
    session = Session(
        1, "6:10 pm on 3 March, 2024", [Turn(i, s, t, 1, "3 March 2024") for i, s, t in turns + filler]
    )
    return Conversation("pottery", ["Priya", "Tomas"], [session], [INFERRED, STATED], "test")


def _outcomes(workspace: Path, system: object) -> dict[str, tuple[Verification, bool]]:
    """Each failed case's verification, with whether its item check stands on evidence turns."""
    run = run_conversation(system, _conversation(), workspace)
    found = {}
    with mt.open(workspace) as ws:
        graph = ws.view(run.run_id)
        for claim in attribute(ws, "flow"):
            if claim.error_type in ("RetrievalError", "UpdateError"):
                case = ws.case(run.run_id, claim.case_id)
                found[claim.case_id] = (verify(ws, claim), check_for(graph, case).turns)
    return found


@pytest.mark.parametrize(
    "system",
    [LongContext(LongContextConfig(max_tokens=220)), RAGSystem(RAGConfig(top_k=1, chunk_tokens=1))],
    ids=["trimmed-window", "retrieval-top-1"],
)
def test_an_inferred_answer_is_not_confirmed_by_the_turns_its_repair_placed(
    tmp_path: Path, system: object
) -> None:
    outcomes = _outcomes(tmp_path, system)
    assert set(outcomes) == {"q0", "q1"}, "both questions should be lost upstream of the answer step"
    inferred, on_turns = outcomes["q0"]
    assert on_turns, "a verdict answer no turn states is checked on its evidence turns"
    assert inferred.answer_confirmed is False, "the offline answer step cannot say 'likely yes'"
    assert any("D1:3" in line and "held" in line for line in inferred.checked), inferred.checked
    assert (inferred.verdict, inferred.why, inferred.flow_confirmed) == (
        "not-verifiable",
        "inferred-answer",
        False,
    ), inferred.reason
    assert inferred.second_faults, "the answer step's own failure is still recorded beside the claim"
    stated, on_turns = outcomes["q1"]
    assert not on_turns
    assert stated.verdict in ("flow-confirmed", "answer-confirmed"), stated.reason
