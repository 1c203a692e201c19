"""Answer scoring with LoCoMo's conventions (task_eval/evaluation.py of snap-research/LoCoMo).

What LoCoMo does and what is kept:

- `normalize_answer`: drop commas, lowercase, drop punctuation, drop the words a/an/the/and,
  collapse whitespace. Kept exactly for ASCII text. Additions that only touch non-ASCII text:
  NFKC normalisation, casefolding (not just lowercasing) and removal of Unicode punctuation
  (curly quotes, dashes, CJK full stops), which LoCoMo left in, so that "Caroline's" written with
  a curly apostrophe did not match the straight one.
- `token_f1`: F1 of the Porter-stemmed normalised tokens (our own stemmer matching nltk's, in
  text/stem.py). Zero when nothing overlaps, including when both sides are empty, as in
  LoCoMo. Han and kana characters count as one token each (LoCoMo split on whitespace only, which
  made a Chinese answer one token).
- `exact_match`: LoCoMo's definition: the normalised *sets* of tokens are equal (order and
  repetition do not matter; no stemming).
- per category (`locomo_score`): multi-hop (1) splits prediction and gold at commas and averages,
  over gold sub-answers, the best F1 of any predicted sub-answer; open-domain (3) keeps the gold
  before the first ';'; temporal (2) and single-hop (4) use plain F1; adversarial (5) is correct
  when the prediction says the information is not available.
- unanswerable phrasing (`says_unanswerable`): LoCoMo accepts only "no information available" and
  "not mentioned"; models phrase it many ways, so more phrasings count (see `_UNANSWERABLE`).
  A question whose every gold answer is itself such a phrase is scored the same way.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from ..text import porter_stem, split_cjk

Gold = str | int | float | Sequence[str | int | float]
Rule = Literal["f1", "multi-answer", "first-alternative", "unanswerable"]

#: LoCoMo's category numbers (as its evaluation code names them).
LOCOMO_CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}

_RULES: dict[str, Rule] = {
    "multi-hop": "multi-answer",
    "multihop": "multi-answer",
    "open-domain": "first-alternative",
    "opendomain": "first-alternative",
    "adversarial": "unanswerable",
    "unanswerable": "unanswerable",
    "abstention": "unanswerable",
}

_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")

_UNANSWERABLE = re.compile(
    "|".join(
        (
            r"\bno (?:information|info|mention|data|record|details?|evidence|indication|context)\b",
            r"\bnot (?:be )?(?:mentioned|specified|stated|provided|available|known|given|discussed|"
            r"recorded|found|included|indicated|described|addressed|disclosed|clear)\b",
            r"\bnever (?:mentioned|specified|stated|discussed)\b",
            r"^\W*unknown\W*$",
            r"\b(?:is|are|was|were|remains?|still) unknown\b",
            r"\bunanswerable\b",
            r"\b(?:cannot|can ?not|can't|unable to|impossible to) (?:be )?"
            r"(?:determined?|answer(?:ed)?|tell|say|know|find|confirm|infer(?:red)?|identif(?:y|ied))\b",
            r"\b(?:don't|do not|doesn't|does not|did not|didn't) (?:know|say|mention|specify|state|"
            r"provide|have (?:any |enough )?(?:information|details|data|record))\b",
            r"\b(?:not enough|insufficient|no relevant) (?:information|context|data|details|evidence)\b",
        )
    )
)


def normalize_answer(text: str) -> str:
    """LoCoMo's answer normalisation (commas, case, punctuation, a/an/the/and, spaces); see module doc."""
    text = unicodedata.normalize("NFKC", str(text)).replace(",", "").casefold()
    text = text.translate(_ASCII_PUNCTUATION)
    if not text.isascii():
        text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_tokens(text: str, *, stem: bool = True) -> list[str]:
    """The normalised tokens F1 compares: whitespace words, Han/kana split per character, stemmed."""
    tokens: list[str] = []
    for word in normalize_answer(text).split():
        for token in split_cjk(word):
            tokens.append(porter_stem(token) if stem else token)
    return tokens


def token_f1(prediction: str, gold: str) -> float:
    """Token-level F1 between a prediction and one gold answer, LoCoMo style (stemmed)."""
    predicted = answer_tokens(prediction)
    expected = answer_tokens(gold)
    same = sum((Counter(predicted) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision = same / len(predicted)
    recall = same / len(expected)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, gold: str) -> bool:
    """LoCoMo's exact match: equal *sets* of normalised tokens (no stemming)."""
    return set(answer_tokens(prediction, stem=False)) == set(answer_tokens(gold, stem=False))


def multi_answer_f1(prediction: str, gold: str) -> float:
    """LoCoMo's multi-hop F1: per comma-separated gold part, the best F1 of any predicted part; averaged."""
    predicted = [p.strip() for p in str(prediction).split(",")]
    expected = [g.strip() for g in str(gold).split(",")]
    return sum(max(token_f1(p, g) for p in predicted) for g in expected) / len(expected)


def as_gold_list(gold: Gold | None) -> list[str]:
    """Gold answers as a list of strings (datasets give one string, a list, or a bare number)."""
    if gold is None:
        return []
    if isinstance(gold, str | int | float):
        return [str(gold)]
    return [str(g) for g in gold]


def best_f1(prediction: str, golds: Gold) -> float:
    """The best token F1 against any of several acceptable gold answers (0 for none)."""
    return max((token_f1(prediction, g) for g in as_gold_list(golds)), default=0.0)


def best_exact_match(prediction: str, golds: Gold) -> bool:
    """Whether the prediction exactly matches any of several acceptable gold answers."""
    return any(exact_match(prediction, g) for g in as_gold_list(golds))


def says_unanswerable(text: str) -> bool:
    """Whether an answer says the information is not available ("not mentioned", "unknown", ...)."""
    text = unicodedata.normalize("NFKC", str(text)).casefold().replace("\u2019", "'").strip()
    return bool(_UNANSWERABLE.search(text))


def scoring_rule(category: str | int | None) -> Rule:
    """Which LoCoMo rule scores a question category (LoCoMo numbers or names; unknown ones get F1)."""
    if category is None:
        return "f1"
    if isinstance(category, int) or (isinstance(category, str) and category.strip().isdigit()):
        category = LOCOMO_CATEGORIES.get(int(category), "")
    key = re.sub(r"[\s_]+", "-", str(category).strip().casefold())
    return _RULES.get(key, "f1")


def is_unanswerable(golds: Sequence[str], category: str | int | None = None) -> bool:
    """A question to be answered "not available": adversarial category, or every gold answer says so."""
    return scoring_rule(category) == "unanswerable" or (
        bool(golds) and all(says_unanswerable(g) for g in golds)
    )


def score_answer(prediction: str, gold: Gold | None, category: str | int | None = None) -> tuple[float, str]:
    """LoCoMo's per-question score in [0, 1] with the gold answer it was best against ('' if none).

    Several gold answers are alternatives: the best one counts. Raises ValueError when an answerable
    question has no gold answer, since there is nothing to score against.
    """
    golds = as_gold_list(gold)
    if is_unanswerable(golds, category):
        return (1.0 if says_unanswerable(prediction) else 0.0), ""
    if not golds:
        raise ValueError("cannot score an answer without a gold answer (and the question is not adversarial)")
    rule = scoring_rule(category)
    if rule == "first-alternative":
        golds = [g.split(";")[0].strip() for g in golds]
    score_one = multi_answer_f1 if rule == "multi-answer" else token_f1
    scored = [(score_one(prediction, g), g) for g in golds]
    return max(scored, key=lambda item: item[0])


def locomo_score(prediction: str, gold: Gold | None, category: str | int | None = None) -> float:
    """LoCoMo's per-question score in [0, 1]: the F1 variant its category calls for (see module doc)."""
    return score_answer(prediction, gold, category)[0]
