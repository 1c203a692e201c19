"""The overlap scorer: which parts of a value carry an evidence message's information."""

from __future__ import annotations

from memtrace.attribution.evidence.support import OverlapScorer, Target

EVIDENCE = "Clara: I adopted a dog named Pepper last month! Pepper is a labrador and loves long walks."


def breed() -> tuple[OverlapScorer, Target]:
    scorer = OverlapScorer()
    return scorer, scorer.prepare("What breed is Clara's dog?", ["labrador"], [("D1:7", EVIDENCE)])


def test_an_untagged_line_needs_an_answer_word_and_half_the_sentence_stating_it() -> None:
    scorer, target = breed()
    assert scorer.carries(target, "Clara's dog Pepper is a labrador who loves long walks")
    assert not scorer.carries(target, "Clara adopted a dog named Pepper")  # the question's word, no answer
    assert not scorer.carries(target, "Diego saw a labrador")  # the answer, not the evidence's sentence
    assert scorer.carries(target, ["Diego likes pasta", "Pepper the labrador loves walks"])


def test_a_tagged_line_counts_only_for_its_own_message() -> None:
    scorer, target = breed()
    assert scorer.carries(target, "[D1:7] Clara: Pepper is a labrador")
    assert not scorer.carries(target, "[D2:3] Clara: Pepper is a labrador and loves long walks")
    assert scorer.carries(target, "[D1:6,D1:7] Clara's dog is a labrador")  # a memory of several messages
    assert not scorer.carries(target, "[D1:7] Clara adopted a dog named Pepper")  # its own message, no answer
    assert scorer.carries(target, {"memory": "Clara's dog is a labrador", "sources": ["D1:7"]})


def test_a_speakers_name_is_not_the_answer() -> None:
    scorer = OverlapScorer()
    target = scorer.prepare(
        "Who did Clara go hiking with?",
        ["Diego"],
        [("D3:2", "Clara: I went hiking with Diego at Mount Dandenong on Sunday.")],
    )
    assert not scorer.carries(target, "Diego: I started rowing on Sunday.")  # every Diego line names him
    assert scorer.carries(target, "Clara went hiking with Diego at Mount Dandenong.")


def test_a_date_stamp_on_every_line_is_not_the_answer() -> None:
    scorer = OverlapScorer()
    evidence = "Clara: I quit the band two days ago. It was too hard to make rehearsals. [said on 4 May 2023]"
    target = scorer.prepare("When did Clara quit the band?", ["4 May 2023"], [("D3:5", evidence)])
    assert scorer.carries(target, "Clara quit the band two days ago. [said on 4 May 2023]")
    assert not scorer.carries(target, "Diego made pasta for dinner. [said on 4 May 2023]")
    assert not scorer.carries(target, " [said on 4 May 2023]")
    assert not scorer.carries(
        target, "It was too hard to make rehearsals [said on 4 May 2023]"
    )  # not what was asked


def test_the_sentence_stating_the_answer_is_the_one_stating_most_of_it() -> None:
    scorer = OverlapScorer()
    evidence = "Joanna: Writing is not always easy. Last week I found my early writings in old notebooks."
    target = scorer.prepare(
        "What did Joanna find in old notebooks?", ["early writings"], [("D26:5", evidence)]
    )
    assert not scorer.carries(target, "Writing is not always easy for Joanna")  # states 'writing' only
    assert scorer.carries(target, "Joanna found her early writings in old notebooks")


def test_a_date_is_stated_by_the_sentence_about_what_was_asked() -> None:
    scorer = OverlapScorer()
    evidence = (
        "James: Yesterday, we started on a road trip. It was fun with the family and my dogs."
        " [said on 5 November 2022]"
    )
    question = "When did James and his family start on a road trip?"
    target = scorer.prepare(question, ["5 November 2022"], [("D30:1", evidence)])
    assert scorer.carries(target, "James started on a road trip [said on 5 November 2022]")
    assert not scorer.carries(target, "It was fun with the family and James's dogs [said on 5 November 2022]")


def test_a_tagged_line_needs_what_was_asked_about_not_just_the_days_date() -> None:
    """Mem0 tags a memory with every message of its batch: the reply said that day is not the answer."""
    scorer = OverlapScorer()
    evidence = "Melanie: I made a plate in pottery class yesterday! [said on 25 August 2023]"
    question = "When did Melanie make a plate in pottery class?"
    target = scorer.prepare(question, ["24 August 2023"], [("D1:1", evidence)])
    assert scorer.carries(target, "[D1:1] Melanie made a plate in pottery class [on 24 August 2023]")
    assert not scorer.carries(
        target, "[D1:1,D1:2] Pottery's so relaxing and creative [said on 25 August 2023]"
    )
