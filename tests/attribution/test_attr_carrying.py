"""The carrying rule decides which memory versions hold the information, item by item of the answer."""

from __future__ import annotations

from pathlib import Path

from attrhelpers import answer_window_wrongly, window_of

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.attribution.evidence.support import OverlapScorer, answer_items, carrying_part


def test_a_gold_answer_splits_into_items_but_keeps_its_dates_whole() -> None:
    assert answer_items("routine examination and vaccination") == (
        frozenset({"routin", "examin"}),
        frozenset({"vaccin"}),
    )
    assert len(answer_items("yoga, meditation, walks, and mindfulness")) == 4
    assert answer_items("May 7, 2023") == (frozenset({"may", "7", "2023"}),)
    assert answer_items("Yes, she is supportive") == (frozenset({"support"}),)  # "yes" is inferred


def test_a_list_answer_held_one_item_per_memory_is_carried() -> None:
    """Mem0 writes one fact per sentence: each memory states one item of the answer and carries it."""
    scorer = OverlapScorer()
    evidence = [("D18:16", "James: This was just a routine examination. Also, the puppy was vaccinated.")]
    target = scorer.prepare(
        "What happened to James's puppy at the clinic?", ["routine examination and vaccination"], evidence
    )
    vaccinated = {"memory": "Also, the puppy was vaccinated. [on 5 August 2022]"}
    assert carrying_part(target, [("mem-2@1", vaccinated)], scorer) is not None
    assert carrying_part(target, [("mem-3@1", {"memory": "James has a puppy"})], scorer) is None


def test_a_message_stating_none_of_the_answer_does_not_carry_what_another_states() -> None:
    scorer = OverlapScorer()
    evidence = [
        ("D2:20", "Jolene: Meet Susie, my snake! She loves sharing my bed."),
        ("D2:24", "Jolene: I bought it a year ago in Paris."),
    ]
    target = scorer.prepare("What pets does Jolene have?", ["snakes"], evidence)
    paris = ["[D2:24] Jolene: I bought it a year ago in Paris."]
    assert carrying_part(target, [("window@1", paris)], scorer) is None
    snake = ["[D2:20] Jolene: Meet Susie, my snake! She loves sharing my bed."]
    assert carrying_part(target, [("window@2", snake)], scorer) is not None


def test_a_message_stating_none_of_the_answer_carries_an_item_no_message_states() -> None:
    """A paraphrased item ("my school event" for "school speech") is carried by the message saying it."""
    scorer = OverlapScorer()
    evidence = [
        ("D1:3", "Caroline: I went to a support group yesterday and it was powerful."),
        ("D3:1", "Caroline: I wanted to tell you about my school event last week, I talked to the kids."),
    ]
    target = scorer.prepare(
        "What LGBTQ+ events has Caroline participated in?", ["support group, school speech"], evidence
    )
    school = ["[D3:1] Caroline: I wanted to tell you about my school event last week, I talked to the kids."]
    assert carrying_part(target, [("ctx@1", school)], scorer) is not None


def test_the_trim_that_dropped_the_line_stating_the_answer_is_blamed(tmp_path: Path) -> None:
    """A window keeps a line of the evidence that states nothing of the answer after the line stating
    it was trimmed: the loss that matters is the first trim, whose repair brings the answer back."""
    lines = [
        ("D2:20", "Jolene: Meet Susie, my snake! She loves sharing my bed."),
        ("D2:21", "Deborah: So cute!"),
        ("D2:24", "Jolene: I bought it a year ago in Paris."),
        ("D2:25", "Deborah: Paris is lovely."),
    ]
    with mt.run(tmp_path, name="window") as run:
        window, kept = window_of(run, lines)
        for name in ("first_trim", "second_trim", "third_trim"):
            with mt.op(name, category="update") as op:
                kept = kept[1:]
                window.update(kept, by=op)
        answer_window_wrongly(
            run, kept, "What pets does Jolene have?", gold="snakes", evidence=["D2:20", "D2:24"], said="a dog"
        )
    with mt.open(tmp_path) as ws:
        result = FlowMethod().attribute(ws.view(run.id), ws.cases(run.id)[0])
        assert result.error_type == "UpdateError", result.explanation
        assert ws.graph(run.id).op(result.op_id).name == "first_trim", result.explanation


def test_the_extraction_that_dropped_the_message_stating_the_answer_is_blamed(tmp_path: Path) -> None:
    """Of two extractions that wrote nothing of the evidence, the one that read the message stating
    the answer dropped it; the earlier one read only a message that states none of it."""
    with mt.run(tmp_path, name="two-extractions") as run:
        with mt.op("load", category="construction") as op:
            snake = op.output(
                "D2:20", "Jolene: Meet Susie, my snake! She loves sharing my bed.", category="message"
            )
            paris = op.output("D2:24", "Jolene: I bought it a year ago in Paris.", category="message")
        with mt.op("extract_paris", category="extraction") as op:
            op.use(paris)
            run.memory("m1").create({"memory": "Jolene likes travelling"}, by=op)
        with mt.op("extract_snake", category="extraction") as op:
            op.use(snake)
            run.memory("m2").create({"memory": "Jolene has a bed"}, by=op)
        case = run.case("What pets does Jolene have?", gold="snakes", evidence=["D2:20", "D2:24"])
        with mt.op("answer", category="response") as op:
            prediction = op.output("prediction", "a dog", category="prediction")
        case.predict("a dog", var=prediction)
        case.judge(False)
    with mt.open(tmp_path) as ws:
        result = FlowMethod().attribute(ws.view(run.id), ws.cases(run.id)[0])
        assert result.error_type == "ExtractionError", result.explanation
        assert ws.graph(run.id).op(result.op_id).name == "extract_snake", result.explanation


def test_a_date_answer_is_carried_by_what_happened_not_by_the_question_words_and_a_stamp() -> None:
    """'The week before 9 June 2023' is on the stamp of every line said that day: a tagged line with
    the question's words ("friends, family and mentors") does not say when they met; "we met up last
    week" does."""
    scorer = OverlapScorer()
    message = (
        "Caroline: My friends, family and mentors are my rocks. Here's a pic from when we met up last week!"
        " [said on 9 June 2023]"
    )
    target = scorer.prepare(
        "When did Caroline meet up with her friends, family, and mentors?",
        ["The week before 9 June 2023"],
        [("D3:11", message)],
    )
    rocks = ["[D3:11] Caroline's friends, family and mentors are Caroline's rocks. [said on 9 June 2023]"]
    assert carrying_part(target, [("ctx@1", rocks)], scorer) is None
    met = ["[D3:11] Here's a pic from when Caroline met up with them last week! [said on 9 June 2023]"]
    assert carrying_part(target, [("ctx@1", met)], scorer) is not None


def test_a_memory_drawn_from_the_turn_does_not_carry_a_date_by_its_stamp_and_a_question_word() -> None:
    """A mem0 memory of the same exchange says the friends, family and mentors are her rocks; its own
    "[said on 9 June 2023]" and "family" made half of the sentence saying when they met. The stamp
    counts for nothing: "we met up last week" is what must be shared (LoCoMo conv-26 q9, whose two
    blind readers named the search that missed the meet-up memory)."""
    scorer = OverlapScorer()
    message = (
        "Caroline: Thanks, Mel! My friends, family and mentors are my rocks - they motivate me and give"
        " me the strength to push on. Here's a pic from when we met up last week! [shares a photo of a"
        " family posing for a picture in a yard] [said on 9 June 2023]"
    )
    target = scorer.prepare(
        "When did Caroline meet up with her friends, family, and mentors?",
        ["The week before 9 June 2023"],
        [("D3:11", message)],
        ["Caroline", "Melanie"],
    )
    rocks = {
        "memory": "Caroline's friends, family and mentors are Caroline's rocks - they motivate Caroline and"
        " give Caroline the strength to push on. [said on 9 June 2023]",
        "sources": ["D3:11", "D3:12"],
    }
    assert not scorer.carries(target, rocks)
    met = {
        "memory": "Here's a pic from when we met up last week! [shares a photo of a family posing for a"
        " picture in a yard] [on 2 June 2023]",
        "sources": ["D3:11", "D3:12"],
    }
    assert scorer.carries(target, met)
    # A duration is no calendar date: "been doing it for 3 years" still carries "3 years".
    yoga = scorer.prepare(
        "How long has Jolene been doing yoga?",
        ["3 years"],
        [
            (
                "D20:21",
                "Jolene: Been doing it for 3 years. It's a great way to escape stress. [said on 2 June 2023]",
            )
        ],
        ["Jolene", "Deborah"],
    )
    assert scorer.carries(yoga, "[D20:21] Jolene: Been doing it for 3 years. [said on 2 June 2023]")


def test_a_count_is_no_date_a_tagged_line_stating_it_carries_it() -> None:
    scorer = OverlapScorer()
    evidence = [
        ("D1:3", "Clara: After a long time we finally decided we wanted 3 kids in our big family home.")
    ]
    target = scorer.prepare("How many kids does Clara want?", ["3"], evidence)
    assert carrying_part(target, [("m@1", ["[D1:3] Clara wants 3 kids"])], scorer) is not None


def test_a_number_with_a_comma_is_one_item() -> None:
    assert answer_items("$1,500") == (frozenset({"1", "500"}),)
    scorer = OverlapScorer()
    target = scorer.prepare(
        "How much did Clara pay for the car?", ["$1,500"], [("D1:1", "Clara: I paid $1,500 for the car!")]
    )
    assert carrying_part(target, [("m@1", ["Clara paid 1 dollar for the car"])], scorer) is None
    assert carrying_part(target, [("m@1", ["Clara paid $1,500 for the car"])], scorer) is not None


def test_a_name_or_a_date_in_an_unstated_item_lets_no_line_carry_it() -> None:
    """ "Caroline's school speech" is unstated; the name is on every line Caroline said, the date on
    every line of its day: neither makes "I bought it in Paris" carry it."""
    scorer = OverlapScorer()
    evidence = [
        ("D1:3", "Caroline: I went to a support group yesterday and it was powerful."),
        ("D3:5", "Caroline: I bought it in Paris."),
    ]
    paris = ["[D3:5] Caroline: I bought it in Paris. [said on 9 June 2023]"]
    for gold in ("support group, Caroline's school speech", "support group, a speech on 7 May 2023"):
        target = scorer.prepare("What events has Caroline been to?", [gold], evidence)
        assert carrying_part(target, [("ctx@1", paris)], scorer) is None, gold
