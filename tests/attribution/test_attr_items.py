"""The flow method traces what the gold answer needs: every item of a list, the turns that state it,
the earliest loss among several turns, and no blame at all for a gold the conversation does not support."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from attrhelpers import (
    PEPPER,
    answer_window_wrongly,
    answer_wrongly,
    mem0_case,
    pets_run,
    window_claim,
    window_of,
)

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.model import Attribution
from memtrace.graph.values import value_text


def _attribute(workspace: Path, run_id: str) -> tuple[Attribution, mt.Workspace]:
    ws = mt.open(workspace)
    return FlowMethod().attribute(ws.view(run_id), ws.cases(run_id)[0]), ws


def test_a_context_with_one_item_of_two_is_a_partial_carrier_and_retrieval_is_blamed(tmp_path: Path) -> None:
    """The demo's q10: the context held the cat, not the dog, while the dog's memory was live."""
    run_id = pets_run(tmp_path, ["mem-2"])
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "RetrievalError", result.explanation
        assert result.op_id is not None and result.op_id.startswith("search#")
        assert "partial carrier" in result.explanation and "pepper" in result.explanation.lower()


def test_a_context_with_every_item_is_a_response_error_naming_each(tmp_path: Path) -> None:
    run_id = pets_run(tmp_path, ["mem-1", "mem-2"])
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "ResponseError", result.explanation
        assert "Pepper" in result.explanation and "Whiskers" in result.explanation


def test_the_turn_stating_the_answer_is_traced_when_the_annotated_one_is_a_bare_reply(tmp_path: Path) -> None:
    """The dataset points at "Yeah, good idea!"; the turn before it in the session says kayaking."""
    with mt.run(tmp_path, name="reply", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            stating = op.output(
                "D4:1", "Nadia: I took up kayaking on the lake this summer.", category="message"
            )
            reply = op.output("D4:2", "Omar: Yeah, good idea!", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(reply)
            run.memory("mem-1").create({"memory": "Omar likes good ideas"}, by=op)
        with mt.op("extract_facts", category="extraction") as op:
            op.use(stating)
            run.memory("mem-2").create({"memory": "Nadia spent the summer at the lake"}, by=op)
        case = run.case("What water sport did Nadia take up?", gold="kayaking", evidence=["D4:2"])
        with mt.op("answer", category="response") as op:
            prediction = op.output("prediction", "swimming", category="prediction")
        case.predict("swimming", var=prediction)
        case.judge(False)
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "ExtractionError", result.explanation
        extraction = ws.graph(run.id).op(result.op_id)
        assert any(v.name == "D4:1" for v in ws.graph(run.id).inputs(extraction.id)), result.explanation
        assert "does not state" in result.explanation and "D4:1" in result.explanation


def test_of_two_turns_trimmed_by_different_operations_the_earliest_trim_is_blamed(tmp_path: Path) -> None:
    """Each item's turn leaves the window in its own trim: repairing the first, with later trims
    ideal, keeps both; the last trim only finished the loss."""
    lines = [
        ("D1:4", "Ravi: I'm doing kickboxing twice a week now."),
        ("D1:5", "Lena: Wow, sounds intense."),
        ("D2:8", "Ravi: I also started taekwondo at the community hall."),
        ("D2:9", "Lena: Nice!"),
        ("D3:1", "Lena: How was your weekend?"),
    ]
    result, trims = window_claim(
        tmp_path,
        lines,
        4,
        "What martial arts has Ravi done?",
        gold="Kickboxing, Taekwondo",
        evidence=["D2:8", "D1:4"],
        said="none",
    )
    assert result.error_type == "UpdateError", result.explanation
    assert result.op_id == trims[0], result.explanation  # the trim that dropped the kickboxing line


def test_a_gold_naming_what_no_turn_mentions_is_a_suspected_annotation_error(tmp_path: Path) -> None:
    with mt.run(tmp_path, name="unsupported", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            message = op.output(
                "D8:3", "Kofi: We played that card game with colours again.", category="message"
            )
        with mt.op("extract_facts", category="extraction") as op:
            op.use(message)
            run.memory("mem-1").create({"memory": "Kofi played a card game with colours"}, by=op)
        case = run.case("Which card game did Kofi play?", gold="UNO", evidence=["D8:3"])
        with mt.op("answer", category="response") as op:
            prediction = op.output("prediction", "poker", category="prediction")
        case.predict("poker", var=prediction)
        case.judge(False)
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "AnnotationError", result.explanation
        assert result.op_id is None and "'UNO'" in result.explanation


def _naming_run(workspace: Path, said: str, question: str, gold: str) -> str:
    """One turn, a memory of it retrieved, the answer wrong: whether flow calls the gold unsupported."""
    with mt.run(workspace, name="naming", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            message = op.output("D14:21", said, category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(message)
            run.memory("mem-1").create({"memory": said.split(": ", 1)[1]}, by=op)
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", [said.split(": ", 1)[1]], category="retrieved")
        answer_wrongly(run, found, question, gold, ["D14:21"], "no idea")
        return run.id


@pytest.mark.parametrize(
    ("said", "question", "gold"),
    [  # a name said in a plan is said; a name the conversation begins is completed, not new
        ("John: I want to work on improving my old area, West County, too.", "Which area?", "West County"),
        (
            "Tim: LeBron is the man, I love watching him play.",
            "Who is Tim's favorite player?",
            "LeBron James",
        ),
        # a month the gold misspells is a date, no name
        (
            "Nate: I won my first tournament last week!",
            "When did Nate win?",
            "the week before 21Janury, 2022",
        ),
        # a number's unit is no name ("5K" names no "K")
        (
            "Maria: Last weekend I ran a 5K charity run.",
            "What did Maria do last weekend?",
            "a 5K charity run",
        ),
        # a long list whose items are said but for one title (shown only in an image): the said items
        # are what the answer needs
        (
            "Nate: Get a pet, watch The Lord of the Rings, and bake with coconut oil!",
            "What has Nate recommended?",
            'A pet, "The Lord of the Rings" movies, coconut oil, "Project Hail Mary" book',
        ),
        # a quoted title is one item: its "and" splits no list
        (
            "Joanna: Get a cork board for memories, and a comfy couch!",
            "What has Joanna recommended?",
            '"A Court of Thorns and Roses" book, a cork board, a comfy couch',
        ),
    ],
)
def test_a_gold_name_the_conversation_says_is_no_annotation_error(
    tmp_path: Path, said: str, question: str, gold: str
) -> None:
    run_id = _naming_run(tmp_path, said, question, gold)
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type != "AnnotationError", result.explanation


def test_a_list_mostly_named_nowhere_is_still_a_suspected_annotation_error(tmp_path: Path) -> None:
    """Two titles of three named nowhere (only images show them): the list is not mostly stated."""
    run_id = _naming_run(
        tmp_path,
        "Joanna: You should watch a romantic drama about memory and sort your photos!",
        "What has Joanna recommended?",
        '"Eternal Sunshine of the Spotless Mind" movie, "Little Women" movie, sorting photos',
    )
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "AnnotationError", result.explanation


def test_an_explanation_quotes_a_memorys_text_not_its_json(tmp_path: Path) -> None:
    """Explanations read as sentences: the memory's own words, no braces, keys or literal backslash-n."""
    stored = {"id": "mem-1", "memory": "Diego adopted a dog named Pepper\\nlast spring", "hash": "x1"}
    assert "{" in value_text(stored)  # what the explanation used to quote
    with mt.run(tmp_path, name="json-memory", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            message = op.output("D1:3", PEPPER, category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(message)
            run.memory("mem-1").create(stored, by=op)
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", ["Diego likes parks"], category="retrieved")
        case = run.case("What pet does Diego have?", gold="a dog named Pepper", evidence=["D1:3"])
        with mt.op("answer", category="response") as op:
            op.use(found)
            prediction = op.output("prediction", "a cat", category="prediction")
        case.predict("a cat", var=prediction)
        case.judge(False)
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "RetrievalError", result.explanation
        assert "Pepper" in result.explanation
        assert "{" not in result.explanation and '"memory"' not in result.explanation
        assert "\\n" not in result.explanation


def test_a_plan_does_not_carry_a_done_fact_and_gives_way_to_the_turn_saying_it_happened(
    tmp_path: Path,
) -> None:
    """'Thinking about kayaking' (annotated) is a plan; a later turn says Nadia now kayaks. The memory of
    the plan is no carrier of the fact; the turn saying it happened is traced, its extraction blamed."""
    with mt.run(tmp_path, name="plan", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            plan = op.output("D2:3", "Nadia: I'm thinking about kayaking on the lake.", category="message")
            done = op.output("D5:7", "Nadia: I kayak on the lake every Sunday now!", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(plan)
            run.memory("mem-1").create({"memory": "Nadia is thinking about kayaking on the lake"}, by=op)
        with mt.op("extract_facts", category="extraction") as op:
            op.use(done)
            run.memory("mem-2").create({"memory": "Nadia spends Sundays at the lake"}, by=op)
        with mt.op("search", category="retrieval") as op:
            found = op.output(
                "retrieved", ["Nadia is thinking about kayaking on the lake"], category="retrieved"
            )
        case = run.case("What water sport does Nadia do?", gold="kayaking", evidence=["D2:3"])
        with mt.op("answer", category="response") as op:
            op.use(found)
            prediction = op.output("prediction", "none", category="prediction")
        case.predict("none", var=prediction)
        case.judge(False)
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "ExtractionError", result.explanation
        extraction = ws.graph(run.id).op(result.op_id)
        assert any(v.name == "D5:7" for v in ws.graph(run.id).inputs(extraction.id)), result.explanation


def test_evidence_about_the_other_speaker_is_a_suspected_annotation_error(tmp_path: Path) -> None:
    """Asked about Kofi; the only evidence is Ama speaking of her own sister and dogs."""
    with mt.run(tmp_path, name="other", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            op.output("D1:1", "Kofi: Morning! How was the weekend?", category="message")
            evidence = op.output(
                "D1:2",
                "Ama: That's my sister and my dogs, we chilled at the beach yesterday.",
                category="message",
            )
        with mt.op("extract_facts", category="extraction") as op:
            op.use(evidence)
            run.memory("mem-1").create({"memory": "Ama chilled at the beach with her sister"}, by=op)
        case = run.case(
            "When did Kofi spend time with his sister and dogs?", gold="21 July 2022", evidence=["D1:2"]
        )
        with mt.op("answer", category="response") as op:
            prediction = op.output("prediction", "last week", category="prediction")
        case.predict("last week", var=prediction)
        case.judge(False)
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "AnnotationError", result.explanation
        assert "Ama" in result.explanation and "Kofi" in result.explanation and result.op_id is None


def test_a_question_about_a_wish_is_answered_by_the_plan(tmp_path: Path) -> None:
    """'What does Nadia want to try?' is answered by her plan: the plan's turn is traced, not a later
    turn that happens to mention the same sport."""
    with mt.run(tmp_path, name="wish", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            plan = op.output("D2:3", "Nadia: I want to try kayaking on the lake.", category="message")
            other = op.output(
                "D9:1", "Omar: My cousin went kayaking in Norway, she loved it.", category="message"
            )
        with mt.op("extract_facts", category="extraction") as op:
            op.use(plan)
            run.memory("mem-1").create({"memory": "Nadia likes the lake"}, by=op)
        with mt.op("extract_facts", category="extraction") as op:
            op.use(other)
            run.memory("mem-2").create({"memory": "Omar's cousin went kayaking in Norway"}, by=op)
        case = run.case("What does Nadia want to try on the lake?", gold="kayaking", evidence=["D2:3"])
        with mt.op("answer", category="response") as op:
            prediction = op.output("prediction", "swimming", category="prediction")
        case.predict("swimming", var=prediction)
        case.judge(False)
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "ExtractionError", result.explanation
        extraction = ws.graph(run.id).op(result.op_id)
        assert any(v.name == "D2:3" for v in ws.graph(run.id).inputs(extraction.id)), result.explanation


def test_a_count_is_carried_only_by_a_part_with_its_number(tmp_path: Path) -> None:
    """'Max is 8 years old' shares 'years old' with Luna's 'she is 5 years old': it carries Max's item,
    never Luna's, and the search that left Luna's memory out is blamed."""
    max_said, luna_said = "Max is already old, he is 8 years old.", "She is younger, she is 5 years old."
    run_id = mem0_case(
        tmp_path,
        {"D22:27": f"Deborah: {max_said}", "D22:29": f"Deborah: {luna_said}"},
        {"mem-1": (max_said, "D22:27"), "mem-2": (luna_said, "D22:29")},
        [max_said],
        (
            "How old are Deborah's cats?",
            "Max is 8 years old and Luna is 5 years old",
            ["D22:27", "D22:29"],
            "last Sunday",
        ),
    )
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "RetrievalError", result.explanation
        assert "partial carrier" in result.explanation and "5 years" in result.explanation


def test_a_fact_tagged_with_the_exchange_but_about_the_other_speaker_carries_nothing(tmp_path: Path) -> None:
    """EverMemOS tags each fact with its whole exchange: 'Jolene's mother also passed away' carries the
    tag of Deborah's line about her own mother, yet it is about Jolene."""
    with mt.run(tmp_path, name="tagged-other", system="evermemos") as run:
        with mt.op("load", category="construction") as op:
            said = op.output(
                "D1:5",
                "Deborah: It was my mother's old house, she passed away a few years ago.",
                category="message",
            )
            op.output("D1:6", "Jolene: So sorry. My mother also passed away last year.", category="message")
        with mt.op("extract_memcell", category="extraction") as op:
            op.use(said)
            run.memory("fact-1").create("[D1:5,D1:6] Jolene's mother also passed away last year.", by=op)
            run.memory("fact-2").create("[D1:5,D1:6] Deborah's mother passed away a few years ago.", by=op)
        with mt.op("retrieve", category="retrieval") as op:
            found = op.output(
                "retrieved", ["[D1:5,D1:6] Jolene's mother also passed away last year."], category="retrieved"
            )
        answer_wrongly(
            run, found, "When did Deborah's mother pass away?", "a few years before 2023", ["D1:5"], "2022"
        )
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "RetrievalError", result.explanation
        assert "fact-2" in result.explanation


def test_a_part_about_the_other_speaker_carries_an_answer_naming_them(tmp_path: Path) -> None:
    """'Who invited Nate to the trails?' is answered by Joanna's line: a fact tagged with the exchange
    that names only Joanna is about the answer, not about someone else."""
    fact = "[D11:16,D11:17] Joanna would love for someone to come down and join her on the trails."
    run_id = mem0_case(
        tmp_path,
        {
            "D11:16": "Nate: I could use some fresh air!",
            "D11:17": "Joanna: Sure, you should come down and join me on the trails sometime!",
        },
        {"mem-1": (fact, "D11:17")},
        ["[D2:1,D2:2] Nate likes games."],
        ("Who invited Nate to join her on the trails sometime?", "Joanna", ["D11:17"], "Nate"),
    )
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "RetrievalError", result.explanation


def test_spoken_forms_state_the_words_they_stand_for(tmp_path: Path) -> None:
    """'make 'em wanna come back' in the context states the gold 'want them to come back'."""
    memory = "Just creating an experience that'll make 'em wanna come back."
    run_id = mem0_case(
        tmp_path,
        {"D3:8": f"Gina: Making my spot inviting is key. I want 'em to feel at home. {memory}"},
        {"mem-1": (memory, "D3:8")},
        [memory],
        (
            "What did Gina say about creating an experience for her customers?",
            "want them to come back",
            ["D3:8"],
            "a welcoming spot",
        ),
    )
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "ResponseError", result.explanation


@pytest.mark.parametrize(
    ("said", "suspected"),
    [  # the other speaker of a question naming both, about themself: the gold is theirs
        ("Deborah: Sorry, I remembered that I already have plans for this day.", True),
        # "we" in a question naming both is about both of them
        ("Deborah: It's okay, maybe we can try it together sometime!", False),
    ],
)
def test_a_question_naming_both_speakers_asks_about_the_first(
    tmp_path: Path, said: str, suspected: bool
) -> None:
    with mt.run(tmp_path, name="both-named", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            op.output("D26:14", "Jolene: Shall we meet on Friday?", category="message")
            op.output("D26:15", said, category="message")
        answer_wrongly(
            run,
            "nothing",
            "Why did Jolene have to reschedule their meeting with Deborah?",
            "Jolene already had plans",
            ["D26:15"],
            "no idea",
        )
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert (result.error_type == "AnnotationError") is suspected, result.explanation
        if suspected:
            assert "asks about Jolene" in result.explanation


def test_facts_of_one_exchange_in_the_context_carry_an_item_together(tmp_path: Path) -> None:
    """mem0 split one turn into 'teaming up with schools to do workshops' and 'invite engineers as
    guest speakers': neither holds 'guest speakers for workshops' alone, both in the context do."""
    turn = (
        "Jolene: I'm thinking of teaming up with local schools to do workshops. We could even invite"
        " engineers as guest speakers to show kids their career options."
    )
    facts = [
        "[D5:9,D5:10] Jolene is thinking of teaming up with local schools to do workshops.",
        "[D5:9,D5:10] We could even invite engineers as guest speakers to show kids their career options.",
    ]
    run_id = mem0_case(
        tmp_path,
        {"D5:9": turn},
        {f"mem-{number}": (fact.split("] ", 1)[1], "D5:9") for number, fact in enumerate(facts, 1)},
        [*facts, "[D2:1,D2:2] Jolene likes snakes."],
        (
            "How does Jolene plan to involve local engineers in teaching STEM?",
            "As guest speakers for workshops",
            ["D5:9"],
            "Not mentioned in the conversation",
        ),
    )
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "ResponseError", result.explanation


def test_a_done_clause_before_a_plan_in_one_sentence_is_said_as_done() -> None:
    """'Lost my job yesterday, so I'm gonna start a business' states the loss as done; only the plan
    after ', so' is a plan (before, the whole sentence was, and the other speaker's 'I also lost my
    job' was traced instead)."""
    from memtrace.attribution.evidence.words import plan_aware_stems

    words = plan_aware_stems(
        "Lost my job as a banker yesterday, so I'm gonna take a shot at my own business."
    )
    assert {"lose", "job", "banker"} <= words
    assert "~busi" in words and "busi" not in words
    assert "move" not in plan_aware_stems("I might move there this summer.")


def test_a_hedge_after_a_comma_hedges_its_own_clause_not_the_done_fact_before_it() -> None:
    """'I made a chocolate cake the other day, maybe you would like that!' made the cake (before, the
    whole sentence was a hedge, and the other speaker's 'who can say no to cake?' was traced)."""
    from memtrace.attribution.evidence.words import plan_aware_stems

    words = plan_aware_stems(
        "Well I also made a lemon cake with figs the other day, maybe you would like that!"
    )
    assert {"lemon", "cake", "fig"} <= words, words
    assert "~would" in words and "would" not in words  # the hedged clause stays a hedge
    assert "cake" not in plan_aware_stems("Maybe I will bake a lemon cake with figs, it sounds fun.")


def test_an_item_no_turn_states_leaves_the_stated_items_to_trace(tmp_path: Path) -> None:
    """ "gives seminars" is said as "doing seminars": no turn states it word for word. The window still
    holds that line, but the mentoring line is gone: the answer lacked an item, and the trim that
    dropped it is to blame, not the answer step."""
    lines = [
        ("D14:3", "Kai: I'm now mentoring the younger players on my team."),
        ("D14:4", "Iris: That's generous of you."),
        ("D26:1", "Kai: My week's been busy - I started doing seminars for new coaches."),
        ("D26:2", "Iris: Sounds rewarding!"),
    ]
    with mt.run(tmp_path, name="window", system="long_context") as run:
        window, kept = window_of(run, lines)
        with mt.op("trim_memory", category="update") as op:
            kept = kept[2:]
            window.update(kept, by=op)
            trim = op.id
        answer_window_wrongly(
            run,
            kept,
            "What does Kai do to share his knowledge?",
            gold="gives seminars, mentors younger players",
            evidence=["D14:3", "D26:1"],
            said="he is busy",
        )
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "UpdateError", result.explanation
        assert result.op_id == trim, result.explanation
        assert "No turn states 'gives seminars'" in result.explanation


def test_an_item_said_in_other_words_is_traced_through_the_annotated_turn_naming_part_of_it(
    tmp_path: Path,
) -> None:
    """ "animal shelter" is said as "a dog shelter": no turn states it whole, but the annotated turn
    naming "shelter" is where it comes from. That turn left the window first, so its trim decides,
    not the later one that dropped the turn stating "homeless" word for word."""
    lines = [
        ("D10:10", "Omar: Our tournament raised money for a dog shelter near my street."),
        ("D10:11", "Pia: That's so kind."),
        ("D10:12", "Omar: With what was left we cooked food for the homeless."),
        ("D10:13", "Pia: Wonderful!"),
        ("D29:1", "Omar: This time the proceeds went to the children's hospital."),
    ]
    result, trims = window_claim(
        tmp_path,
        lines,
        3,
        "Who has benefited from Omar's charity tournaments?",
        gold="animal shelter, homeless, children's hospital",
        evidence=["D10:10", "D10:12", "D29:1"],
        said="the hospital",
    )
    assert result.error_type == "UpdateError", result.explanation
    assert result.op_id == trims[0], result.explanation  # the trim that dropped D10:10
    assert "No turn states 'animal shelter' as worded; the annotated turns" in result.explanation
    assert "animal shelter (D10:10)" in result.explanation


def test_an_item_said_in_other_words_is_lost_only_when_every_annotated_turn_naming_it_is_gone(
    tmp_path: Path,
) -> None:
    """ "teaching others" is said as "teach people" twice: D18:8 leaves the window, but D21:4, which
    states the cooking show too, still says it. The context holds every item: the answer step failed."""
    lines = [
        ("D18:8", "Nate: Since we last spoke, I started teaching people to make vegan ice cream."),
        ("D18:9", "Joanna: That's amazing!"),
        ("D21:4", "Nate: Last Monday I got to teach people vegan ice cream recipes on my own cooking show!"),
        ("D21:5", "Joanna: Wow, a show of your own!"),
    ]
    result, _ = window_claim(
        tmp_path,
        lines,
        2,
        "How has Nate shared his vegan ice-cream recipes?",
        gold="teaching others, cooking show",
        evidence=["D18:8", "D21:4"],
        said="Last Monday got",
    )
    assert result.error_type == "ResponseError", result.explanation
    assert "teaching others (D18:8, D21:4)" in result.explanation


def test_an_item_said_in_other_words_twice_is_lost_with_the_trim_of_its_last_turn(tmp_path: Path) -> None:
    """Two annotated turns say "teach people": the first trim drops one, the window still says it, and
    the item is lost only when the later trim drops the other; that trim decides, not the first."""
    lines = [
        ("D18:8", "Nate: Since we last spoke, I started teaching people to make vegan ice cream."),
        ("D18:9", "Joanna: That's amazing!"),
        ("D19:4", "Nate: Last Monday I got to teach people my recipes at the market."),
        ("D19:5", "Joanna: Wow!"),
        ("D20:1", "Nate: And I have my own cooking show now."),
        ("D20:2", "Joanna: A show of your own!"),
    ]
    result, trims = window_claim(
        tmp_path,
        lines,
        4,
        "How has Nate shared his vegan ice-cream recipes?",
        gold="teaching others, cooking show",
        evidence=["D18:8", "D19:4", "D20:1"],
        said="a show",
    )
    assert result.error_type == "UpdateError", result.explanation
    assert result.op_id == trims[2], result.explanation  # the trim that dropped D19:4, the last


def test_an_item_said_in_other_words_does_not_hide_a_gold_name_no_turn_mentions(tmp_path: Path) -> None:
    """ "Brighton Zoo" is said nowhere: the gold is suspected, whatever the other items' turns say."""
    lines = [
        ("D10:10", "Omar: Our tournament raised money for a dog shelter near my street."),
        ("D10:12", "Omar: With what was left we cooked food for the homeless."),
    ]
    result, _ = window_claim(
        tmp_path,
        lines,
        0,
        "Who has benefited from Omar's charity tournaments?",
        gold="animal shelter, homeless, Brighton Zoo",
        evidence=["D10:10", "D10:12"],
        said="the hospital",
    )
    assert result.error_type == "AnnotationError", result.explanation
    assert "Zoo" in result.explanation


def test_an_unstated_item_is_not_pinned_on_an_annotated_turn_sharing_only_the_questions_words(
    tmp_path: Path,
) -> None:
    """The annotated turn left over shares only "tournament" with the unstated item, a word the
    question asks with: it says nothing of the item, so the stated item's loss still decides."""
    lines = [
        ("D10:10", "Omar: The tournament was fun, we played all night."),
        ("D10:11", "Pia: That's so kind."),
        ("D10:12", "Omar: With what was left we cooked food for the homeless."),
        ("D10:13", "Pia: Wonderful!"),
        ("D29:1", "Omar: This time the proceeds went to the children's hospital."),
    ]
    result, trims = window_claim(
        tmp_path,
        lines,
        3,
        "Who has benefited from Omar's charity tournaments?",
        gold="tournament shelter, homeless, children's hospital",
        evidence=["D10:10", "D10:12", "D29:1"],
        said="the hospital",
    )
    assert result.error_type == "UpdateError", result.explanation
    assert result.op_id == trims[2], result.explanation  # the trim that dropped D10:12
    assert "traced in its place" not in result.explanation


def _beach_run(workspace: Path, retrieved: list[str]) -> str:
    """LoCoMo's conv-41 q5 in small: the dataset points at Tomas's reply about his own photos, while
    Ines said on 1 January 2023 that she went "last month" (December 2022)."""
    with mt.run(workspace, name="beach", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            op.output("session_3_date", "8:30 pm on 1 January, 2023", category="session_date")
            stating = op.output(
                "D3:14",
                "Ines: I took it at the beach last month, the sunset was so calm.",
                category="message",
            )
            op.output(
                "D3:15",
                "Tomas: Wow! It reminds me of my old film camera, I took plenty of beach pics.",
                category="message",
            )
        with mt.op("extract_facts", category="extraction") as op:
            op.use(stating)
            run.memory("mem-1").create(
                {"memory": "Ines took it at the beach last month [on 2 December 2022]"}, by=op
            )
            run.memory("mem-2").create({"memory": "Ines finds sunsets calm"}, by=op)
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", retrieved, category="retrieved")
        answer_wrongly(run, found, "When did Ines go to the beach?", "December 2022", ["D3:15"], "4 May 2023")
        return run.id


def test_a_relative_date_in_the_asked_persons_own_turn_is_no_annotation_error(tmp_path: Path) -> None:
    """The annotated turn is the other speaker about himself, but the asked person's turn in that session
    names the gold month by "last month": the pointer is wrong, the gold is not; that turn is traced."""
    run_id = _beach_run(tmp_path, ["Ines took it at the beach last month [on 2 December 2022]"])
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "ResponseError", result.explanation
        assert "D3:14" in result.explanation and "D3:15" in result.explanation


def test_a_memory_keeping_the_month_a_relative_date_names_is_what_retrieval_missed(tmp_path: Path) -> None:
    run_id = _beach_run(tmp_path, ["Ines finds sunsets calm"])
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "RetrievalError", result.explanation
        assert result.op_id is not None and result.op_id.startswith("search#")


def test_a_gold_date_written_without_a_space_is_still_a_date() -> None:
    """LoCoMo writes "The Sunday before 25October, 2022."; its "2022" alone is no item of the answer."""
    from memtrace.attribution.evidence.words import answer_item_texts
    from memtrace.eval.strict import date_spans

    (span,) = date_spans("The Sunday before 25October, 2022.")
    assert (span.first, span.last) == (date(2022, 10, 23), date(2022, 10, 23))
    assert [text for text, _ in answer_item_texts("The Sunday before 25October, 2022.")] == [
        "the sunday before 25october, 2022"
    ]


_PUPPY_TURNS = (
    (
        "D12:1",
        "Tariq: Hey! So much has changed since last time we talked - meet Biscuit, my new puppy. He is a"
        " bundle of joy and I could not resist bringing him home to the flat. How have you been?",
    ),
    ("D24:2", "Tariq: Big news -- I adopted another pup from the shelter on Elm Street last weekend."),
)
_PUPPY_FACTS = {  # one fact per sentence, as Mem0 writes them: far less than half of either turn
    "mem-1": "Meet Biscuit, Tariq's new puppy; so much has changed since they last talked",
    "mem-2": "Tariq adopted another pup from the shelter on Elm Street",
}


def _puppies_run(workspace: Path, retrieved: list[str]) -> str:
    """A count no turn states: "How many dogs does Tariq have?" is 2, one dog per annotated turn."""
    with mt.run(workspace, name="puppies", system="mem0") as run:
        for (turn, text), (unit, fact) in zip(_PUPPY_TURNS, _PUPPY_FACTS.items(), strict=True):
            with mt.op("load", category="construction") as op:
                message = op.output(turn, text, category="message")
            with mt.op("extract_facts", category="extraction") as op:
                op.use(message)
                run.memory(unit).create({"memory": fact}, by=op)
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", [_PUPPY_FACTS[unit] for unit in retrieved], category="retrieved")
        answer_wrongly(run, found, "How many dogs does Tariq have?", "2", ["D12:1", "D24:2"], "1")
        return run.id


def test_a_count_needs_every_turn_it_counts_and_a_context_with_one_is_a_partial_carrier(
    tmp_path: Path,
) -> None:
    run_id = _puppies_run(tmp_path, ["mem-2"])
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "RetrievalError", result.explanation
        assert "partial carrier" in result.explanation and "'D12:1'" in result.explanation


def test_a_count_whose_turns_are_all_in_the_context_is_a_response_error(tmp_path: Path) -> None:
    """Each fact holds one sentence of its turn, which carries it: the answer step miscounted."""
    run_id = _puppies_run(tmp_path, ["mem-1", "mem-2"])
    result, ws = _attribute(tmp_path, run_id)
    with ws:
        assert result.error_type == "ResponseError", result.explanation


def test_a_message_stating_no_answer_word_is_a_statement_per_sentence_too() -> None:
    """An inferred answer rests on a message; a fact of one of its sentences is drawn from it."""
    from memtrace.attribution.evidence.statements import statements_of
    from memtrace.attribution.evidence.words import content_stems

    body = _PUPPY_TURNS[0][1].split(": ", 1)[1]
    statements = statements_of(body, frozenset(), frozenset({"tariq"}), content_stems("How many dogs?"))
    assert len(statements) == 3  # the whole message, and its two sentences of four words or more
    whole, *own = statements
    assert all(s.words < whole.words for s in own) and not any(s.answer for s in statements)
    assert any({"biscuit", "puppi"} <= s.words for s in own)


def test_a_look_alike_line_in_the_context_does_not_stand_for_an_item_whose_memory_was_left_out(
    tmp_path: Path,
) -> None:
    """The trip's own memory was live and not retrieved; a line about another trip that happens to say
    "a new city" is no copy of it: retrieval missed the item (the injected "demote the evidence" fault)."""
    with mt.run(tmp_path, name="trip", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            trip = op.output(
                "D30:4",
                "Ines: Our team is taking a trip next month to explore a new city!",
                category="message",
            )
        with mt.op("extract_facts", category="extraction") as op:
            op.use(trip)
            run.memory("mem-1").create(
                {"memory": "Ines's team will explore a new city on a trip", "sources": ["D30:4"]}, by=op
            )
        with mt.op("search", category="retrieval") as op:
            found = op.output(
                "retrieved",
                ["[D12:2] Ines and her team saw a new city at last year's tournament"],
                category="retrieved",
            )
        answer_wrongly(
            run,
            found,
            "Where is Ines's team planning to explore on a trip?",
            "a new city",
            ["D30:4"],
            "the coast",
        )
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "RetrievalError", result.explanation
        assert "mem-1" in result.explanation


def test_an_annotated_turn_naming_the_month_by_next_month_is_traced_not_a_later_mention(
    tmp_path: Path,
) -> None:
    """LoCoMo conv-44 q16 in small: "Let's do it next month" said on 8 July is the gold "August"; a later
    turn saying "August's been eventful" is about something else."""
    with mt.run(tmp_path, name="hike", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            op.output("session_11_date", "3:00 pm on 8 July, 2023", category="session_date")
            plan = op.output(
                "D11:7", "Omar: I'm down for a hike with you. Let's do it next month!", category="message"
            )
        with mt.op("load", category="construction") as op:
            op.output("session_16_date", "1:00 pm on 2 September, 2023", category="session_date")
            op.output("D16:2", "Lina: August's been eventful, the hike pic looks great!", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(plan)
            run.memory("mem-1").create(
                {"memory": "Let's do it next month. [said on 8 July 2023]", "sources": ["D11:7"]}, by=op
            )
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", ["Lina posted a hike picture"], category="retrieved")
        answer_wrongly(run, found, "When is Omar going hiking with Lina?", "August", ["D11:7"], "October")
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "RetrievalError", result.explanation
        assert "mem-1" in result.explanation


def test_a_sentence_counts_by_its_own_words_though_most_are_the_questions(tmp_path: Path) -> None:
    """LoCoMo conv-42 q19 in small: "found some more amazing trails in my town" shares "found", "hiking"
    and "trails" with the question; what is left ("went", "amazing", "town") still shows the fact's
    source, and both counted turns were in the context: the answer step miscounted."""
    turns = {
        "D8:4": "Noor: On a different note, I found an awesome hiking trail in my hometown yesterday!"
        " It was gorgeous. Nature is so inspiring, and it's a great way to reset.",
        "D11:3": "Noor: I went hiking and found some more amazing trails in my town. It was such an awesome"
        " experience! I think I am an expert hiker now.",
    }
    facts = {
        "mem-1": ("D8:4", "Noor found an awesome hiking trail in Noor's hometown"),
        "mem-2": ("D11:3", "Noor went hiking and found some more amazing trails in Noor's town"),
    }
    with mt.run(tmp_path, name="trails", system="mem0") as run:
        messages = {}
        with mt.op("load", category="construction") as op:
            for turn, text in turns.items():
                messages[turn] = op.output(turn, text, category="message")
        for unit, (turn, fact) in facts.items():
            with mt.op("extract_facts", category="extraction") as op:
                op.use(messages[turn])
                run.memory(unit).create({"memory": fact, "sources": [turn]}, by=op)
        with mt.op("search", category="retrieval") as op:
            found = op.output("retrieved", [f"[{t}] {f}" for t, f in facts.values()], category="retrieved")
        answer_wrongly(
            run, found, "How many times has Noor found new hiking trails?", "twice", list(turns), "once"
        )
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "ResponseError", result.explanation


def test_an_annotated_turn_said_on_the_gold_date_is_traced_not_a_relative_date_beside_it(
    tmp_path: Path,
) -> None:
    """LoCoMo conv-30 q10 in small: the gold "February, 2023" is the day the annotated turn was said; a
    turn of the same session saying "this month" about the artist is no better source of it."""
    with mt.run(tmp_path, name="artist", system="mem0") as run:
        with mt.op("load", category="construction") as op:
            op.output("session_5_date", "4:10 pm on 8 February, 2023", category="session_date")
            teamed = op.output(
                "D5:5", "Gina: I teamed up with a local artist for some cool designs!", category="message"
            )
            op.output("D5:7", "Gina: This month the artist and I also start a podcast.", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(teamed)
            run.memory("mem-1").create(
                {"memory": "Gina teamed up with a local artist for cool designs [said on 8 February 2023]"},
                by=op,
            )
        with mt.op("search", category="retrieval") as op:
            found = op.output(
                "retrieved",
                ["Gina teamed up with a local artist for cool designs [said on 8 February 2023]"],
                category="retrieved",
            )
        answer_wrongly(
            run, found, "When did Gina team up with a local artist?", "February, 2023", ["D5:5"], "March 2023"
        )
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "ResponseError", result.explanation
        assert "does not state" not in result.explanation


def test_a_question_asking_why_is_answered_by_the_hope_that_states_the_purpose(tmp_path: Path) -> None:
    """'Why did Oksana start a podcast?': her 'Hoping to raise awareness' states the purpose, so a
    context holding her line is a carrier; Ivo's later line saying the podcast raised awareness is not
    the turn to trace, and the search that left it out is not to blame."""
    with mt.run(tmp_path, name="purpose", system="rag") as run:
        hoped = "Oksana: I started a podcast about the river. Hoping to raise awareness of the pollution."
        told = "Ivo: Your podcast raised awareness of the pollution, the whole town knows."
        with mt.op("load", category="construction") as op:
            hope = op.output("D1:1", hoped, category="message")
            later = op.output("D4:2", told, category="message")
        with mt.op("index", category="extraction") as op:
            op.use(hope)
            op.use(later)
            run.memory("doc-1").create(f"[D1:1] {hoped}", by=op)
            run.memory("doc-2").create(f"[D4:2] {told}", by=op)
        with mt.op("retrieve", category="retrieval") as op:
            found = op.output("retrieved", [f"[D1:1] {hoped}"], category="retrieved")
        answer_wrongly(
            run,
            found,
            "Why did Oksana start a podcast?",
            "to raise awareness of the pollution",
            ["D1:1"],
            "about the river",
        )
    result, ws = _attribute(tmp_path, run.id)
    with ws:
        assert result.error_type == "ResponseError", result.explanation
        assert "Hoping to raise awareness" in result.explanation
