"""Whom a question asks about: both people it joins, and never the one who only asks the other."""

from __future__ import annotations

from pathlib import Path

import pytest
from attrhelpers import answer_wrongly, flow_claim, mem0_case, window_claim

import memtrace as mt
from memtrace.attribution.evidence.needs import asks_only
from memtrace.attribution.evidence.words import content_stems, people_asked_about


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What do Priya and Tomas pack for their climbing trips?", {"Priya", "Tomas"}),
        ("What are Priya's and Tomas's favourite crags?", {"Priya", "Tomas"}),
        ("Why did Priya call Tomas on Sunday?", {"Priya"}),
        ("Which crag does Tomas like?", {"Tomas"}),
    ],
)
def test_a_question_joining_two_names_asks_about_both(question: str, asked: set[str]) -> None:
    assert people_asked_about(question, ["Priya", "Tomas"]) == asked


def test_a_line_of_the_second_person_joined_in_the_question_carries_their_item(tmp_path: Path) -> None:
    """Asked what Priya and Tomas pack, Tomas's own rope is an item, not a line about someone else:
    his live memory that the search left out makes it a RetrievalError, not a lost extraction."""
    run_id = mem0_case(
        tmp_path,
        {
            "D1:1": "Priya: I never go climbing without my chalk bag.",
            "D1:2": "Tomas: And I always bring a spare rope on our climbing trips.",
        },
        {
            "mem-1": ("Priya never goes climbing without her chalk bag", "D1:1"),
            "mem-2": ("Tomas always brings a spare rope on climbing trips", "D1:2"),
        },
        ["Priya never goes climbing without her chalk bag", "Priya likes oat milk"],
        (
            "What do Priya and Tomas pack for their climbing trips?",
            "chalk bag, spare rope",
            ["D1:1", "D1:2"],
            "a chalk bag",
        ),
    )
    error_type, op_id, why = flow_claim(tmp_path, run_id)
    assert error_type == "RetrievalError", why
    assert op_id is not None and op_id.startswith("search#"), why
    assert "mem-2" in why, why


def test_a_sentence_only_asking_about_an_item_does_not_state_it() -> None:
    item = content_stems("R. R. Martin")
    assert asks_only("Marco: Nice! Have you read all of George R. R. Martin's books? [shares a photo]", item)
    assert not asks_only("Ines: I have read all of George R. R. Martin's books. Have you?", item)
    assert not asks_only("Ines: Sounds fun, see you then!", item)  # not said at all: nothing asked


def test_an_item_only_the_other_speaker_asks_about_is_not_traced_to_that_question(tmp_path: Path) -> None:
    """Asked which authors Ines read, Marco's "Have you read any Terry Pratchett?" states nothing about
    her: the item is left unstated, and the search that missed her live Le Guin memory is blamed, not
    the extraction that wrote no fact from Marco's question."""
    with mt.run(tmp_path, name="authors", system="mem0") as run:
        turns = {
            "D1:1": "Ines: I just finished a novel by Ursula Le Guin, what a read.",
            "D1:2": "Marco: Sounds great, enjoy your weekend.",
            "D5:3": "Marco: Have you read any Terry Pratchett books yet?",
            "D5:4": "Ines: Not yet, but they are on my list!",
        }
        with mt.op("load", category="construction") as op:
            messages = {name: op.output(name, text, category="message") for name, text in turns.items()}
        with mt.op("extract_facts", category="extraction") as op:
            op.use(messages["D1:1"])
            op.use(messages["D1:2"])
            run.memory("mem-1").create({"memory": "Ines finished a novel by Ursula Le Guin"}, by=op)
        with mt.op("extract_facts", category="extraction") as op:
            op.use(messages["D5:3"])
            op.use(messages["D5:4"])
            run.memory("mem-2").create({"memory": "Ines has some books on her reading list"}, by=op)
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", ["Ines has some books on her reading list"], category="retrieved")
        answer_wrongly(
            run,
            found,
            "Which authors has Ines read books from?",
            "Ursula Le Guin, Terry Pratchett",
            ["D1:1"],
            "Not mentioned in the conversation",
        )
    error_type, op_id, why = flow_claim(tmp_path, run.id)
    assert error_type == "RetrievalError", why
    assert op_id is not None and op_id.startswith("search#"), why
    assert "No turn states 'terry pratchett'" in why, why


def _climbing_run(workspace: Path, question: str, gold: str, retrieved: list[str]) -> str:
    """Priya and Tomas each said they went to the bouldering gym; one memory each, both live."""
    return mem0_case(
        workspace,
        {
            "D1:1": "Priya: I finally went to the new bouldering gym downtown last night!",
            "D1:2": "Tomas: Same here, I went to the bouldering gym on Tuesday.",
        },
        {
            "mem-1": ("Priya went to the new bouldering gym downtown", "D1:1"),
            "mem-2": ("Tomas went to the bouldering gym on Tuesday", "D1:2"),
        },
        retrieved,
        (question, gold, ["D1:1", "D1:2"], "Not mentioned in the conversation"),
    )


def test_an_answer_about_two_people_needs_a_turn_of_each(tmp_path: Path) -> None:
    """ "Did Priya and Tomas both go?" (yes) rests on each one's turn: a context with Priya's alone is
    a partial carrier, and the search that left Tomas's live memory out is blamed."""
    run_id = _climbing_run(
        tmp_path,
        "Did Priya and Tomas both go to the bouldering gym?",
        "Yes",
        ["Priya went to the new bouldering gym downtown", "Priya likes oat milk"],
    )
    error_type, op_id, why = flow_claim(tmp_path, run_id)
    assert error_type == "RetrievalError", why
    assert op_id is not None and op_id.startswith("search#"), why
    assert "missed 'Tomas (D1:2)'" in why, why


def test_one_shared_place_is_held_by_either_turn_unless_asked_of_both(tmp_path: Path) -> None:
    """ "Where did Priya and Tomas go?" is answered by either line saying the gym; asked where they
    "both" went, the context needs each one's line."""
    retrieved = ["Priya went to the new bouldering gym downtown"]
    either = _climbing_run(
        tmp_path / "either", "Where did Priya and Tomas go?", "the bouldering gym", retrieved
    )
    both = _climbing_run(
        tmp_path / "both", "Where have Priya and Tomas both been?", "the bouldering gym", retrieved
    )
    error_type, _, why = flow_claim(tmp_path / "either", either)
    assert error_type == "ResponseError", why
    error_type, _, why = flow_claim(tmp_path / "both", both)
    assert error_type == "RetrievalError", why


def _exchange_run(
    workspace: Path, turns: dict[str, str], evidence: str, memory: str, question: str, gold: str
) -> str:
    """An exchange of `turns`; the extraction of the annotated `evidence` turn writes `memory`, and the
    case (question, gold) is answered wrong from nothing."""
    with mt.run(workspace, name="handed-back", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            messages = {name: op.output(name, text, category="message") for name, text in turns.items()}
        with mt.op("extract_facts", category="extraction") as op:
            op.use(messages[evidence])
            run.memory("mem-1").create({"memory": memory}, by=op)
        answer_wrongly(run, "nothing", question, gold, [evidence], "no idea")
        return run.id


def test_a_turn_handing_the_question_back_to_the_one_asked_is_no_suspected_annotation_error(
    tmp_path: Path,
) -> None:
    """The annotated turn is Ines answering for herself and asking Omar back ("How long have you been
    into pottery?"); Omar's reply states the gold. The annotation points at the exchange, not at a
    wrong person: no suspected annotation error, since Omar's reply states it (reading every such "you"
    as handing the talk back, without looking at the reply, was tried: blind readers rejected 7 of the
    9 cases it moved)."""
    run_id = _exchange_run(
        tmp_path,
        {
            "D6:7": "Ines: Since I was 17 or so. How long have you been into pottery?",
            "D6:8": "Omar: Seven years now, and I still love it.",
        },
        "D6:7",
        "Ines has done pottery since she was 17",
        "How long has Omar been doing pottery?",
        "7 years",
    )
    error_type, _, why = flow_claim(tmp_path, run_id)
    assert error_type != "AnnotationError", why


def test_a_reply_handing_the_question_back_is_about_the_speaker_when_the_one_asked_says_else(
    tmp_path: Path,
) -> None:
    """Lena asks how Omar keeps going; Omar answers for himself and hands it back ("Do you have any
    study tricks?"); Lena's reply is about short breaks. Asked how Lena stays motivated, the gold
    (visualizing goals) is Omar's: a suspected annotation error."""
    run_id = _exchange_run(
        tmp_path,
        {
            "D3:1": "Lena: Exams next week. How do you keep going when it gets hard?",
            "D3:2": "Omar: I visualize my goals before every exam. Do you have any study tricks?",
            "D3:3": "Lena: I take a short break every 25 minutes.",
        },
        "D3:2",
        "Omar visualizes his goals before every exam",
        "How does Lena stay motivated while studying?",
        "Visualizing goals",
    )
    error_type, op_id, why = flow_claim(tmp_path, run_id)
    assert error_type == "AnnotationError", why
    assert op_id is None and "asks about Lena" in why, why


def test_a_list_asked_of_both_needs_each_persons_turn_for_an_item_both_said(tmp_path: Path) -> None:
    """Asked which films Priya and Tomas have both seen, "Paddington" needs Priya's line and Tomas's:
    the window kept Tomas's, so the first trim, which dropped Priya's, is the earliest loss, not the
    later trim of the "Amelie" line."""
    lines = [
        ("D1:1", "Priya: I watched Paddington last night, so sweet."),
        ("D1:2", "Tomas: Nice."),
        ("D2:1", "Priya: I also watched Amelie on Sunday!"),
        ("D2:2", "Tomas: I watched Paddington too, loved the bear."),
    ]
    claim, trims = window_claim(
        tmp_path,
        lines,
        3,
        "What films have both Priya and Tomas seen?",
        gold="Paddington, Amelie",
        evidence=["D1:1", "D2:1", "D2:2"],
        said="no idea",
    )
    why = claim.explanation
    assert claim.error_type == "UpdateError", why
    assert claim.op_id == trims[0], why
    assert "missed 'paddington (Priya)'" in why, why
