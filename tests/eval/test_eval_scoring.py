"""LoCoMo-compatible normalisation, stemming, F1, exact match, per-category rules, unanswerables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtrace.eval import (
    as_gold_list,
    best_exact_match,
    best_f1,
    exact_match,
    is_unanswerable,
    locomo_score,
    multi_answer_f1,
    normalize_answer,
    says_unanswerable,
    score_answer,
    scoring_rule,
    token_f1,
)
from memtrace.retrieval import porter_stem


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("The Cat and the Hat!", "cat hat"),
        ("A dog, an apple", "dog apple"),
        ("1,000 dollars", "1000 dollars"),  # commas go before punctuation, as in LoCoMo
        ("co-founder's  (new)   band", "cofounders new band"),
        ("Theatre and Anderson", "theatre anderson"),  # only whole words a/an/the/and
        ("Caroline\u2019s caf\u00e9 \u2014 Paris", "carolines café paris"),  # Unicode punctuation too
        ("", ""),
    ],
)
def test_normalize_answer(text: str, normal: str) -> None:
    assert normalize_answer(text) == normal


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("ties", "tie"),
        ("agreed", "agre"),
        ("hopping", "hop"),
        ("filing", "file"),
        ("happy", "happi"),
        ("relational", "relat"),
        ("generalization", "gener"),
        ("running", "run"),
        ("dying", "die"),
        ("hopefully", "hope"),
        ("was", "wa"),
        ("as", "as"),
        ("café", "café"),  # non-ASCII words are left alone
    ],
)
def test_porter_stem_matches_nltk_reference_outputs(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


def test_token_f1_hand_computed() -> None:
    # prediction tokens: she move to boston in may (6); gold: boston (1); P = 1/6, R = 1, F1 = 2/7
    assert token_f1("She moved to Boston in May.", "Boston") == pytest.approx(2 / 7)
    # cats -> cat, running -> run, ran stays: overlap 1 of 2 each side
    assert token_f1("cats running", "the cat ran") == pytest.approx(0.5)
    assert token_f1("painting", "paint") == 1.0  # thanks to stemming
    assert token_f1("Paris", "Boston") == 0.0
    assert token_f1("the", "a") == 0.0  # both empty after normalisation: 0, as in LoCoMo


def test_token_f1_counts_repeats_and_splits_cjk() -> None:
    # prediction boston boston, gold boston: overlap min(2, 1) = 1, P = 1/2, R = 1 -> 2/3
    assert token_f1("Boston Boston", "Boston") == pytest.approx(2 / 3)
    assert token_f1("北京", "我在北京") == pytest.approx(2 * 1 * 0.5 / 1.5)


def test_exact_match_is_set_equality_without_stemming() -> None:
    assert exact_match("Boston, MA", "MA Boston")
    assert exact_match("the Boston.", "boston")
    assert not exact_match("cats", "cat")
    assert best_exact_match("Boston", ["Paris", "boston!"])
    assert not best_exact_match("Boston", [])


def test_multi_answer_f1_scores_each_gold_part() -> None:
    # gold parts: sweden -> best 0, norway -> 1; mean 0.5
    assert multi_answer_f1("Norway, Denmark", "Sweden, Norway") == pytest.approx(0.5)
    assert multi_answer_f1("Norway, Sweden", "Sweden, Norway") == 1.0
    # no comma in the prediction: each gold part meets "sweden norway" (P 1/2, R 1) -> 2/3 each
    assert multi_answer_f1("Sweden and Norway", "Sweden, Norway") == pytest.approx(2 / 3)


def test_best_f1_over_gold_alternatives_and_gold_shapes() -> None:
    assert best_f1("in May 2023", ["June 2023", "May 2023"]) == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    assert best_f1("x", []) == 0.0
    assert as_gold_list(2022) == ["2022"] and as_gold_list(None) == [] and as_gold_list("a") == ["a"]
    # "it was 2022" -> it wa 2022: P = 1/3, R = 1 -> F1 = 0.5
    assert locomo_score("It was 2022", 2022) == pytest.approx(0.5)


def test_category_rules_follow_locomo() -> None:
    assert [scoring_rule(c) for c in (1, 2, 3, 4, 5, None)] == [
        "multi-answer",
        "f1",
        "first-alternative",
        "f1",
        "unanswerable",
        "f1",
    ]
    assert scoring_rule("Multi_hop") == scoring_rule("multi-hop") == scoring_rule("1") == "multi-answer"
    assert scoring_rule("abstention") == "unanswerable" and scoring_rule("temporal-reasoning") == "f1"
    # open-domain keeps the gold before the first ';'
    assert locomo_score("Psychology", "Psychology; counseling certification", category=3) == 1.0
    assert locomo_score("Psychology", "Psychology; counseling certification") < 1.0
    assert locomo_score("Norway, Denmark", "Sweden, Norway", category="multi-hop") == pytest.approx(0.5)


def test_adversarial_questions_reward_saying_the_information_is_missing() -> None:
    assert locomo_score("That is not mentioned in the conversation.", "Sweden", category=5) == 1.0
    assert locomo_score("Sweden", "Sweden", category=5) == 0.0  # the distractor answer is wrong
    assert locomo_score("No information available", None, category="adversarial") == 1.0
    # gold answers that themselves say "not available" make the question unanswerable
    assert is_unanswerable(["Not mentioned in the conversation"])
    assert score_answer("It is unknown.", "Not mentioned in the conversation") == (1.0, "")


@pytest.mark.parametrize(
    "text",
    [
        "Not mentioned.",
        "There is no information about her sister.",
        "The conversation doesn\u2019t mention it.",
        "Unknown",
        "Her age is unknown.",
        "It cannot be determined from the conversation.",
        "I don't know.",
        "The information is not available.",
        "Not enough information to answer.",
        "This was never mentioned.",
        "No information available",
    ],
)
def test_unanswerable_phrasings(text: str) -> None:
    assert says_unanswerable(text)


@pytest.mark.parametrize(
    "text",
    ["Boston", "Unknown Mortal Orchestra", "not only Paris but also Rome", "She knows the answer", "no"],
)
def test_answers_that_are_not_unanswerable_phrasings(text: str) -> None:
    assert not says_unanswerable(text)


def test_an_answerable_question_without_gold_is_an_error() -> None:
    with pytest.raises(ValueError, match="without a gold answer"):
        locomo_score("Boston", None)
    with pytest.raises(ValueError, match="without a gold answer"):
        locomo_score("Boston", [], category=4)


def test_every_locomo_gold_answer_scores_one_against_itself(locomo_dev: Path) -> None:
    scored = 0
    for conversation in json.loads(locomo_dev.read_text(encoding="utf-8")):
        for qa in conversation["qa"]:
            if qa["category"] == 5:
                assert locomo_score("Not mentioned in the conversation", qa.get("answer"), 5) == 1.0
                continue
            gold = qa["answer"]
            prediction = str(gold).split(";")[0] if qa["category"] == 3 else gold
            assert locomo_score(prediction, gold, qa["category"]) == 1.0, qa
            scored += 1
    assert scored > 1000
