"""Verification's own checks: a part carries the information only if it states what the evidence states."""

from __future__ import annotations

from memtrace.attribution.confirm import carrying_part, states_answer
from memtrace.attribution.support import OverlapScorer

EVIDENCE = [("D1:7", "Clara: I adopted a dog named Pepper last month! Pepper is a labrador.")]
QUESTION, GOLD = "What breed is Clara's dog?", ["labrador"]


def test_a_part_sharing_only_the_topic_does_not_carry_a_stated_answer() -> None:
    scorer = OverlapScorer()
    target = scorer.prepare(QUESTION, GOLD, EVIDENCE)
    context = ["Clara adopted a dog named Pepper last month! [on 17 March 2023]", "Diego likes rowing."]
    # The overlap scorer itself now asks an untagged part for an answer word: "dog" alone does not pass.
    assert carrying_part(target, [("ctx@1", context)], GOLD, scorer) is None
    assert carrying_part(target, [("ctx@1", context)], GOLD, scorer, require_answer=True) is None
    context.append("Pepper is a labrador and loves long walks. [on 16 April 2023]")
    strict = carrying_part(target, [("ctx@1", context)], GOLD, scorer, require_answer=True)
    assert strict is not None and "labrador" in strict.text and strict.var_id == "ctx@1"


def test_states_answer_needs_every_content_word_of_some_gold() -> None:
    assert states_answer("She works at a tech company now", ["a tech company", "Harbor Works"])
    assert not states_answer("She works at a company", ["a tech company"])
