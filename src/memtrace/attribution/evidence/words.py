"""The words the carrying rule reads: content stems, words said only as a plan, a gold answer's items.

Kept apart from the scorers (support.py) so the needs of a case (needs.py) and the item check of
verification read answers and turns the same way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from ...eval.strict import date_spans, strip_dates
from ...text import ENGLISH_STOPWORDS, porter_stem, sentences, tokenize

_GENERIC = {"said", "say", "says", "told", "just", "really", "yeah", "oh", "also", "like", "got", "get"}


@functools.lru_cache(maxsize=262_144)
def content_stems(text: str) -> frozenset[str]:
    words = (IRREGULAR_FORMS.get(t, t) for t in tokenize(text, stopwords=True) if t not in _GENERIC)
    return frozenset(porter_stem(w) for w in words if w not in ENGLISH_STOPWORDS)


#: Irregular past forms Porter's stemmer leaves apart from their verb: "losing Jon's job" states
#: "he lost his job", "I won the tournament" a gold "win". Forms that are also other words ("left",
#: "found", "saw", "read") are left out, and so are the light verbs (went, got, made, took): a
#: question's "go" or "take" says little, and would tie every "went" to it.
_IRREGULAR_PAIRS = (
    "lost:lose won:win bought:buy began:begin begun:begin ran:run met:meet seen:see felt:feel"
    " gave:give given:give wrote:write written:write taught:teach caught:catch brought:bring"
    " thought:think sold:sell told:tell held:hold kept:keep slept:sleep spent:spend built:build"
    " drove:drive driven:drive flew:fly flown:fly ate:eat eaten:eat drew:draw drawn:draw grew:grow"
    " grown:grow knew:know known:know chose:choose chosen:choose rode:ride ridden:ride swam:swim"
    " sang:sing sung:sing became:become fell:fall fallen:fall broke:break broken:break paid:pay"
    " heard:hear led:lead fought:fight threw:throw thrown:throw wore:wear worn:wear"
)
#: Spoken forms the conversations write ("make 'em wanna come back" says "make them want to").
_SPOKEN_PAIRS = "wanna:want em:them"
IRREGULAR_FORMS = dict(pair.split(":", 1) for pair in f"{_IRREGULAR_PAIRS} {_SPOKEN_PAIRS}".split())


#: A plan or a hedge ("might move there", "thinking about kayaking") states no done fact. Its words
#: are kept marked with `PLANNED` ("~kayak"), so they carry only what the evidence itself planned.
HEDGE = re.compile(
    r"\b(?:might|maybe|perhaps|planning to|plans? to|going to|gonna|thinking (?:about|of)|considering"
    r"|hoping to|hopes? to|would like to|wants? to|wanna|someday|one day)\b",
    re.IGNORECASE,
)
PLANNED = "~"
#: A question in the future ("Where is Odalys going fossil-hunting in March?", "What will Ben
#: teach?") or about someone's plans ("What are Joanna's plans for her screenplay?") asks about a
#: plan: a line planning it answers it.
FUTURE = re.compile(
    r"\bwill\b|\b(?:is|are|am)\s+(?:\S+\s+){0,3}?going\s+[\w-]+ing\b|\bupcoming\b|\bplans\b",
    re.IGNORECASE,
)


#: A question asking why, or for a goal or a motive ("Why did John start blogging?"), asks about a
#: purpose: a hope states one ("Hoping to raise awareness").
PURPOSE = re.compile(r"\bwhy\b|\bgoals?\b|\bpurpose\b|\bmotivat", re.IGNORECASE)


def asks_about_plan(question: str) -> bool:
    """Whether a question asks about a plan, a wish, a purpose or what is yet to happen (then a plan
    or a hope answers it)."""
    return bool(HEDGE.search(question) or FUTURE.search(question) or PURPOSE.search(question))


_COUNT = re.compile(r"\bhow many\b", re.IGNORECASE)


def asks_count(question: str) -> bool:
    """Whether a question asks to count ("How many dogs does Andrew have?"): each turn the answer rests
    on is one of the things counted."""
    return _COUNT.search(question) is not None


#: Where a sentence joins two statements: "Lost my job yesterday, so I'm gonna start a business"
#: states the loss as done; the plan is the second clause's. A hedge after a comma opens its own
#: clause: "I made a chocolate cake the other day, maybe you would like that!" made the cake.
_CLAUSE = re.compile(r",\s*(?:so|but|and then)\s+|;\s*|,\s*(?=(?:maybe|perhaps)\b)", re.IGNORECASE)


@functools.lru_cache(maxsize=262_144)
def plan_aware_stems(text: str) -> frozenset[str]:
    """Content words of a text, those said only in a planning or hedging clause marked `~word`. A
    line ends a sentence: a memory appending "Maybe she will get another one" on a new line hedges
    that line, not the caption ending the line before; ", so" and ", but" end a clause."""
    if not HEDGE.search(text):
        return content_stems(text)
    done: set[str] = set()
    planned: set[str] = set()
    clauses = [c for line in text.splitlines() for s in sentences(line) for c in _CLAUSE.split(s)]
    for clause in clauses or [text]:
        (planned if HEDGE.search(clause) else done).update(content_stems(clause))
    return frozenset(done | {PLANNED + w for w in planned - done})


@functools.lru_cache(maxsize=65_536)  # a run's turns, asked once per item of every case
def unplanned(words: frozenset[str]) -> frozenset[str]:
    """The words with plans counted as said (for evidence that was itself a plan)."""
    return frozenset(w[1:] if w.startswith(PLANNED) else w for w in words)


def first_named(question: str, names: Iterable[str]) -> str | None:
    """The person the question names first: whom it asks about ("What did Joanna recommend to
    Nate?" asks about Joanna; a line about Nate alone is not about her)."""
    found = {name: re.search(rf"\b{re.escape(name)}\b", question, re.IGNORECASE) for name in names if name}
    at = {name: match.start() for name, match in found.items() if match}
    return min(at, key=at.__getitem__) if at else None


#: A question asking the same of several people ("What have Caroline and Melanie both painted?").
BOTH = re.compile(r"\bboth\b", re.IGNORECASE)


def people_asked_about(question: str, names: Iterable[str]) -> frozenset[str]:
    """Whom a question asks about: the person it names first, and whoever it joins to that name ("What
    do Deborah and Jolene use to relax?" asks about both; "Why did Jolene call Deborah?" about Jolene)."""
    names = [name for name in names if name]
    first = first_named(question, names)
    if first is None:
        return frozenset()
    joined = {first}
    for name in names:
        both = rf"\b{re.escape(first)}(?:'s)?\s*(?:,|and|&)\s*{re.escape(name)}\b"
        if name != first and re.search(both, question, re.IGNORECASE):
            joined.add(name)
    return frozenset(joined)


def asked_about_words(question: str, names: Iterable[str]) -> frozenset[str]:
    """The name words of everyone a question asks about (`people_asked_about`), as a line names them."""
    return frozenset().union(*(content_stems(name) for name in people_asked_about(question, names)))


STAMP = re.compile(r"\s*\[said on (?P<date>[^\]]+)\]\s*$")


_ITEM_SEPARATOR = re.compile(r"\s*(?:,(?!\d)|;|\band\b|\bas well as\b)\s*", re.IGNORECASE)


@functools.lru_cache(maxsize=8192)
def answer_item_texts(gold: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """A gold answer's items as (text, content words): "yoga, meditation and walks" has three, and a
    memory may hold each in a part of its own (Mem0 writes one fact per sentence). Its dates stay
    whole (the comma of "May 7, 2023" does not split it); a bare "yes" or "no" is no item."""
    items = [span.text for span in date_spans(gold)]
    items += [part.strip() for part in _ITEM_SEPARATOR.split(strip_dates(gold)) if part.strip()]
    found: dict[frozenset[str], str] = {}
    for item in items:
        stems = content_stems(item)
        if stems and not stems <= _VERDICT_WORDS:
            found.setdefault(stems, item)
    return tuple((text, stems) for stems, text in found.items())


def answer_items(gold: str) -> tuple[frozenset[str], ...]:
    """A gold answer's items, each as its content words (see `answer_item_texts`)."""
    return tuple(stems for _, stems in answer_item_texts(gold))


#: "Yes" and "no" are verdicts inferred from the evidence, not items a message states.
_VERDICT_WORDS = frozenset({"ye", "yes", "no", "not", "nope", "yeah"})


def states_answer(text: str, gold: Iterable[str]) -> bool:
    """Whether a text holds every content word of an item of some gold answer (stemmed)."""
    words = content_stems(text)
    return any(item <= words for g in gold for item in answer_items(g))


def answer_rule(gold: list[str], evidence: list[tuple[str, str]]) -> tuple[tuple[str, ...], bool]:
    """(the gold answers, whether an evidence message's words state one): a target's carrying rule."""
    return tuple(gold), any(stated_items(gold, text) for _, text in evidence)


def stated_items(gold: Iterable[str], text: str) -> tuple[frozenset[str], ...]:
    """The gold answer items a message states in its own words.

    The '[said on 4 May 2023]' stamp does not count: a gold date matched only by it ("the week before
    4 May 2023" for "I moved last week") is inferred, and a memory resolving it ("[on 27 April 2023]")
    carries the information without repeating the stamp."""
    words = content_stems(STAMP.sub("", text))
    return tuple(item for g in gold for item in answer_items(g) if item <= words)


#: Number words as digits: "five" and "5" are one number.
_DIGITS = {
    word: str(value)
    for value, word in enumerate(
        re.findall(r"\w+", "zero one two three four five six seven eight nine ten eleven twelve")
    )
}


def numbers_in(words: frozenset[str]) -> frozenset[str]:
    """The numbers among content words, as digits ("five" and "5" are one number)."""
    return frozenset(_DIGITS.get(w, w) for w in words if w.isdigit() or w in _DIGITS)
