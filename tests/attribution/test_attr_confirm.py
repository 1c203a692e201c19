"""The one carrying rule: a part carries the information only if it states what the evidence states."""

from __future__ import annotations

from memtrace.attribution.evidence.support import OverlapScorer, best_part, carrying_part, states_answer

EVIDENCE = [("D1:7", "Clara: I adopted a dog named Pepper last month! Pepper is a labrador.")]
QUESTION, GOLD = "What breed is Clara's dog?", ["labrador"]


def test_a_part_sharing_only_the_topic_does_not_carry_a_stated_answer() -> None:
    scorer = OverlapScorer()
    target = scorer.prepare(QUESTION, GOLD, EVIDENCE)
    assert target.answer_required and target.gold == ("labrador",)
    context = ["Clara adopted a dog named Pepper last month! [on 17 March 2023]", "Diego likes rowing."]
    assert carrying_part(target, [("ctx@1", context)], scorer) is None
    context.append("Pepper is a labrador and loves long walks. [on 16 April 2023]")
    found = carrying_part(target, [("ctx@1", context)], scorer)
    assert found is not None and "labrador" in found.text and found.var_id == "ctx@1" and found.states_answer


def test_a_part_not_stating_the_answer_is_no_candidate_when_the_evidence_states_it() -> None:
    scorer = OverlapScorer()
    target = scorer.prepare(QUESTION, GOLD, EVIDENCE)
    # a tagged line of the evidence message scores by its tag, yet without the answer it carries nothing
    tagged = ["[D1:7] Clara: I adopted a dog named Pepper last month!"]
    best = best_part(target, [("ctx@1", tagged)], scorer)
    assert best is None or best.support == 0.0
    assert carrying_part(target, [("ctx@1", tagged)], scorer) is None
    # when the evidence does not state the answer (it is inferred), the part need not state it
    inferred = scorer.prepare("When did Clara adopt a dog?", ["March 2023"], EVIDENCE)
    assert not inferred.answer_required
    found = carrying_part(inferred, [("ctx@1", tagged)], scorer)
    assert found is not None and not found.states_answer


def test_states_answer_needs_every_content_word_of_some_gold() -> None:
    assert states_answer("She works at a tech company now", ["a tech company", "Harbor Works"])
    assert not states_answer("She works at a company", ["a tech company"])


def test_a_gold_date_matched_only_by_the_said_on_stamp_is_not_required_of_a_part() -> None:
    scorer = OverlapScorer()
    evidence = [("D3:1", "Clara: I just moved to Lisbon last week! [said on 4 May 2023]")]
    target = scorer.prepare("When did Clara move to Lisbon?", ["the week before 4 May 2023"], evidence)
    assert not target.answer_required
    resolved = ["Big news, Diego: Clara just moved to Lisbon last week! [on 27 April 2023]"]
    assert carrying_part(target, [("ctx@1", resolved)], scorer) is not None
