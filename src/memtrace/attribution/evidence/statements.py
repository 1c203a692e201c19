"""The sentences of an evidence message that state the answer: what a part must repeat to carry it.

Kept apart from the scorer (support.py): a message's statements, the words that say what happened
rather than who or when, and whether a gold answer is a date only a stamp repeats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...text import sentences
from .words import HEDGE, STAMP, content_stems


@dataclass(frozen=True, slots=True)
class Statement:
    """A sentence of an evidence message that states an answer word: its words and the answer words.

    A message stating no answer word (the answer is inferred from it) is one statement of all its
    content words with no answer words: a part must then hold half of those.
    """

    words: frozenset[str]
    answer: frozenset[str]
    #: The sentence plans or hedges ("might go kayaking"): a part planning it too may carry it.
    hedged: bool = False


def date_only(words: frozenset[str]) -> bool:
    """Whether answer words are a date's alone (a day number, a month, a year): what a stamp repeats.
    A bare number ("3" kids) is no date."""
    return (
        bool(words)
        and all(w in WHEN_WORDS or w.isdigit() for w in words)
        and any(w in WHEN_WORDS or YEAR.match(w) for w in words)
    )


YEAR = re.compile(r"^(?:19|20)\d\d$")
#: Words that say when, not what: dates are stamped on every line, so they cannot show a line's source.
WHEN_WORDS = content_stems(
    "january february march april may june july august september october november december monday tuesday "
    "wednesday thursday friday saturday sunday yesterday today tonight tomorrow ago day days week weeks "
    "weekend month months year years last next"
)


def what_words(words: frozenset[str], speakers: frozenset[str]) -> frozenset[str]:
    """The words of a sentence that say what happened: not who said it, not when."""
    return frozenset(w for w in words - speakers - WHEN_WORDS if not YEAR.match(w))


def statements_of(
    body: str,
    answer: frozenset[str],
    speakers: frozenset[str],
    asked: frozenset[str],
    items: tuple[frozenset[str], ...] = (),
) -> tuple[Statement, ...]:
    """The sentences of a message body that state an answer word, else the whole body but the
    question's words as one statement without answer words. A statement's words, the half a part must
    hold, leave out speakers' names and dates: they are on every line of the speaker or the day.

    For a list answer, every clause stating a whole item is a statement ("a routine examination",
    "the puppy was vaccinated"): a memory may hold each item on its own.

    A trailing '[said on 8 May 2023]' dates every sentence: when the answer is that date, it is
    stated by the sentence most about what was asked. The date is on every line of that day, so it
    is not among the words.
    """
    stamp = STAMP.search(body)
    dated = answer & content_stems(stamp.group("date")) if stamp else frozenset()
    text = body[: stamp.start()] if stamp else body
    literal: list[tuple[int, Statement]] = []
    whole_items: list[Statement] = []  # clauses stating a whole item of a list answer
    by_date: list[tuple[int, Statement]] = []
    for sentence in sentences(text) or [text]:
        words = content_stems(sentence)
        planned = bool(HEDGE.search(sentence))
        what = what_words(words, speakers)
        if not what:
            continue
        if words & answer:
            for clause in _clauses(sentence):  # "I am allergic to peanuts, so I carry an epipen"
                clause_words = content_stems(clause)
                clause_what = what_words(clause_words, speakers)
                if clause_words & answer and clause_what:
                    stated = frozenset((clause_words & answer) | dated)
                    literal.append((len(clause_words & answer), Statement(clause_what, stated, planned)))
                    if len(items) > 1 and any(item <= clause_words for item in items):
                        whole_items.append(literal[-1][1])
        elif dated:
            by_date.append((len(what & asked), Statement(what, dated, planned)))
    # The sentence that states the answer: the one stating most of it, or for a date, the one most
    # about what was asked ("we started a road trip", not "it was fun with the dogs" said that day).
    if whole_items:  # each item of a list answer is stated by its own clause
        return tuple(dict.fromkeys(whole_items))
    for candidates in (literal, by_date):
        if candidates:
            most = max(count for count, _ in candidates)
            return tuple(statement for count, statement in candidates if count == most)
    words = content_stems(text)
    whole = Statement(what_words(words - asked, speakers) or words, frozenset(), bool(HEDGE.search(text)))
    # The answer is inferred ("How many dogs?" from "meet Toby, my puppy"): a fact drawn from one of
    # the message's sentences is drawn from the message, as half of that sentence shows.
    # A sentence counts by its own words, the question's too ("found some more amazing trails in my
    # town" for "How many times has Joanna found new hiking trails?"); a part must hold half of the
    # rest, two at least.
    own = []
    for sentence in sentences(text):
        said = what_words(content_stems(sentence), speakers)
        what = said - asked
        if len(said) >= _SENTENCE_WORDS and len(what) >= 2:
            own.append(Statement(what, frozenset(), bool(HEDGE.search(sentence))))
    return (whole, *(statement for statement in own if statement.words != whole.words))


#: The fewest words that make a sentence a statement of its own ("How've you been?" is none).
_SENTENCE_WORDS = 4


_CLAUSE = re.compile(r"\s*[;:]\s+|,\s+(?=(?:so|but|because|and|which|while|then)\b)", re.IGNORECASE)


def _clauses(sentence: str) -> list[str]:
    """A sentence's clauses: the one naming the answer states it, its sequel ("so I always carry an
    epipen") is another statement a memory need not repeat."""
    return [c for c in _CLAUSE.split(sentence) if c.strip()] or [sentence]
