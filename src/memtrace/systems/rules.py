"""Deterministic rules behind every system's offline implementation.

Fact extraction keeps the informative sentences of a message, rewrites first person to the
speaker and pins relative dates ('yesterday', 'two days ago') to the session date. Answering is
extractive: find the best-supported sentence, then cut the span the question asks for (a name, a
place, a date, a number). Crude next to an LLM, but deterministic and fast, which is what tests,
demos and fault injection need.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime

from ..datasets import NOT_MENTIONED
from ..text import format_date, resolve_date, sentences, tokenize

_FIRST_PERSON = [
    (re.compile(r"\bI'm\b"), "{s} is"),
    (re.compile(r"\bI've\b"), "{s} has"),
    (re.compile(r"\bI'll\b"), "{s} will"),
    (re.compile(r"\bI'd\b"), "{s} would"),
    (re.compile(r"\bI\b"), "{s}"),
    (re.compile(r"\b[Mm]y\b"), "{s}'s"),
    (re.compile(r"\b[Mm]yself\b"), "{s}"),
    (re.compile(r"(?<=\s)me\b"), "{s}"),
]
_FILLER = re.compile(r"^(hey|hi|hello|thanks|thank you|wow|nice|cool|great|aww+|haha|bye|see you)\b", re.I)
_DATE_IN_TEXT = re.compile(
    r"\b(\d{1,2} (?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December),? \d{4}|(?:January|February|March|April|May|June|July|August|September|October|"
    r"November|December) \d{4}|(?:19|20)\d{2})\b"
)
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|the\s+|and\s+)?[A-Z][\w'-]*)*")
_NAMED = re.compile(r"\b(?:named|called)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")
_PLACE = re.compile(r"\b(?:to|in|at|from|near)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")
_NUMBER = re.compile(r"\b(\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten)\b", re.I)


def third_person(sentence: str, speaker: str) -> str:
    """Rewrite the speaker's first person so a fact stands on its own: 'I moved' -> 'Clara moved'."""
    for pattern, template in _FIRST_PERSON:
        sentence = pattern.sub(template.format(s=speaker), sentence)
    return sentence


def extract_facts(speaker: str, text: str, said_on: datetime | None, min_tokens: int = 3) -> list[str]:
    """Informative sentences of a message as standalone dated facts (questions and small talk dropped)."""
    facts = []
    for sentence in sentences(text):
        if sentence.endswith("?") or _FILLER.match(sentence):
            continue
        if len(tokenize(sentence, stopwords=True)) < min_tokens:
            continue
        fact = third_person(sentence, speaker)
        date = resolve_date(sentence, said_on)
        stamp = date or (format_date(said_on) if said_on else None)
        facts.append(f"{fact} [{'on' if date else 'said on'} {stamp}]" if stamp else fact)
    return facts


@functools.lru_cache(maxsize=131_072)
def content_stems(text: str) -> frozenset[str]:
    """The stemmed content words of a text; cached, as answering compares the same memories often."""
    return frozenset(_stem(t) for t in tokenize(text, stopwords=True))


def overlap(question: str, text: str) -> float:
    """Share of the question's content tokens found in the text (stems compared)."""
    wanted = content_stems(question)
    if not wanted:
        return 0.0
    return len(wanted & content_stems(text)) / len(wanted)


def similarity(a: str, b: str) -> float:
    """Symmetric token overlap (Dice) of two texts: how much two facts say the same thing."""
    left, right = content_stems(a), content_stems(b)
    if not left or not right:
        return 0.0
    return 2 * len(left & right) / (len(left) + len(right))


def extract_answer(question: str, passages: list[str], min_support: float = 0.2) -> tuple[str, float]:
    """(answer span, support) from the passage sentence that best matches the question."""
    best, support, best_when = "", 0.0, ""
    for passage in passages:
        when = _stamp_order(passage)
        for sentence in sentences(passage) or [passage]:
            score = overlap(question, sentence)
            # Equal support: the later memory wins, so updated facts beat the ones they replaced.
            if score > support or (score == support and score > 0 and when > best_when):
                best, support, best_when = sentence, score, when
    if support < min_support or not best:
        return NOT_MENTIONED, support
    return answer_span(question, best), support


def answer_span(question: str, sentence: str) -> str:
    """Cut the part of a sentence that answers the question's type of question."""
    q = question.lower()
    asked = {t.lower() for t in tokenize(question)}
    stamp = re.search(r"\[(?:said )?on ([^\]]+)\]", sentence)
    body = re.sub(r"\s*\[[^\]]*\]\s*$", "", sentence)
    if q.startswith(("when", "what date", "what year", "which year", "what month")):
        found = _DATE_IN_TEXT.search(body)
        if found:
            return found.group(1)
        if stamp:
            return stamp.group(1)
    if "name" in q or "called" in q:
        named = _NAMED.search(body)
        if named:
            return named.group(1)
    if q.startswith("where"):
        for place in _PLACE.findall(body):
            if place.lower() not in asked:
                return place
    if q.startswith("how many") or q.startswith("how much"):
        number = _NUMBER.search(body)
        if number:
            return number.group(1)
    for match in _CAPITALISED.finditer(body):
        phrase = match.group(0)
        words = {w.lower().removesuffix("'s") for w in phrase.split()}
        if match.start() == 0 and " " not in phrase:
            continue  # a capitalised first word is usually just the start of the sentence
        if not words & asked:
            return phrase
    rest = [w for w in re.findall(r"[\w'-]+", body) if w.lower() not in asked]
    content = [w for w in rest if tokenize(w, stopwords=True)]
    return " ".join(content[:6]) if content else body


@functools.lru_cache(maxsize=65_536)
def _stamp_order(passage: str) -> str:
    """A sortable key of the date stamp extract_facts puts on a fact ('' when it has none)."""
    stamp = re.search(r"\[(?:said )?on (\d{1,2}) ([A-Za-z]+) (\d{4})\]", passage)
    if stamp is None:
        return ""
    try:
        when = datetime.strptime(" ".join(stamp.groups()), "%d %B %Y")
    except ValueError:
        return ""
    return when.strftime("%Y-%m-%d")


def _stem(token: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) > len(suffix) + 2:
            return token[: -len(suffix)]
    return token
