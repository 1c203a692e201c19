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
from attrhelpers import one_session, pets_run

import memtrace as mt
from memtrace.attribution.engine import attribute
from memtrace.attribution.verify.confirm import placed_by_construction
from memtrace.attribution.verify.counterfactual import Verification, verify
from memtrace.attribution.verify.items import check_for
from memtrace.datasets.model import Conversation, Question
from memtrace.systems import run_conversation
from memtrace.systems.long_context import LongContext, LongContextConfig
from memtrace.systems.rag import RAGConfig, RAGSystem
from memtrace.vocabulary import ErrorType

ASKED = "Would Priya likely enjoy a weekend class at a ceramics workshop?"
INFERRED = Question("q0", ASKED, ["Likely yes"], ["D1:3"], "open-domain")
STATED = Question("q1", "What material does Priya love working with?", ["clay"], ["D1:3"], "single-hop")


def _conversation(turns_after: int = 23) -> Conversation:
    """Priya's one telling line (D1:3) early in a session of small talk, so it is trimmed or outranked;
    `turns_after` lines of small talk follow the distractors."""
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
        for n in range(7, 7 + turns_after)
    ]
    return one_session(
        "pottery",
        ["Priya", "Tomas"],
        turns + filler,
        "6:10 pm on 3 March, 2024",
        "3 March 2024",
        [INFERRED, STATED],
    )


def _outcomes(workspace: Path, system: object, turns_after: int) -> dict[str, tuple[Verification, bool]]:
    """Each failed case's verification, with whether its item check stands on evidence turns."""
    run = run_conversation(system, _conversation(turns_after), workspace)
    found = {}
    with mt.open(workspace) as ws:
        graph = ws.view(run.run_id)
        for claim in attribute(ws, "flow"):
            if claim.error_type in ("RetrievalError", "UpdateError"):
                case = ws.case(run.run_id, claim.case_id)
                found[claim.case_id] = (verify(ws, claim), check_for(graph, case).turns)
    return found


def _last_trim(workspace: Path, run_id: str) -> str:
    with mt.open(workspace) as ws:
        trims = [op for op in ws.view(run_id).ops_by_category("update") if op.name == "trim_memory"]
    return max(trims, key=lambda op: op.seq).id


@pytest.mark.parametrize(
    ("system", "turns_after"),
    [
        (LongContext(LongContextConfig(max_tokens=220)), 23),
        (LongContext(LongContextConfig(max_tokens=220)), 6),
        (RAGSystem(RAGConfig(top_k=1, chunk_tokens=1)), 23),
    ],
    ids=["window-later-trims-kept", "window-last-trim", "retrieval-top-1"],
)
def test_an_inferred_answer_is_not_confirmed_by_the_turns_its_repair_placed(
    tmp_path: Path, system: object, turns_after: int
) -> None:
    outcomes = _outcomes(tmp_path, system, turns_after)
    assert set(outcomes) == {"q0", "q1"}, "both questions should be lost upstream of the answer step"
    inferred, on_turns = outcomes["q0"]
    if turns_after == 6:  # the trim that lost D1:3 is the last: the plain repair delivers, no ideal trim
        assert inferred.attribution.op_id == _last_trim(tmp_path, inferred.attribution.run_id)
        assert not any("later trims" in line for line in inferred.checked), inferred.checked
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


def test_only_a_repair_that_writes_where_the_answer_reads_places_by_construction(tmp_path: Path) -> None:
    """A window handed over whole places a kept line; a search choosing among units does not; an
    extraction repair's fact must still be found by the replayed retrieval."""
    window = tmp_path / "window"
    run = run_conversation(LongContext(LongContextConfig(max_tokens=220)), _conversation(6), window)
    searched = pets_run(tmp_path / "search", ["mem-2"])
    for workspace, run_id, placed in ((window, run.run_id, True), (tmp_path / "search", searched, False)):
        with mt.open(workspace) as ws:
            graph, case = ws.view(run_id), ws.cases(run_id)[0]
            assert placed_by_construction(graph, case, ErrorType.RETRIEVAL)
            assert not placed_by_construction(graph, case, ErrorType.EXTRACTION)
            for kind in (ErrorType.UPDATE, ErrorType.DELETION):
                assert placed_by_construction(graph, case, kind) is placed
