"""The strict verdict: correct only when every part of a gold answer is present and its dates match.

Token F1 >= 0.5 counts "24 May 2023" for "the week before 4 May 2023" (two shared tokens) and half a
list as a whole one. Here a gold answer is split into its dates and its parts (at commas, semicolons
and "and"); each part must have its content words in the prediction (a part of four or more may
miss one in four: "copywriter at Harbor Works" is not answered by "Harbor Works"), and each gold
date, resolved to the days it names ("the week before 4 May 2023" is 27 April to 3 May), must be
matched by a prediction date that falls inside it. The F1 verdict must hold too, so strict is never
more lenient than F1 (a long line that mentions the answer among much else stays wrong); F1 stays
the reported score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from .judges import RecordingJudge, Verdict
from .scoring import Gold, as_gold_list, is_unanswerable, says_unanswerable, score_answer, scoring_rule

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "several": 2}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH = r"(?P<{0}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ABSOLUTE = re.compile(
    r"\b(?:(?P<d1>\d{1,2})(?:st|nd|rd|th)?(?: of)? ?" + _MONTH.format("m1") + r",?(?: (?P<y1>\d{4}))?"
    r"|" + _MONTH.format("m2") + r" (?P<d2>\d{1,2})(?:st|nd|rd|th)?\b,?(?: (?P<y2>\d{4}))?"
    r"|" + _MONTH.format("m3") + r",? (?P<y3>\d{4})"
    r"|(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})"
    r"|(?P<y4>(?:19|20)\d{2}))\b"
)
_RELATIVE = re.compile(
    r"\b(?:the )?(?:(?P<n>\d+|a|an|one|two|three|four|five|six|several) )?"
    r"(?P<unit>days?|weeks?|weekend|months?|years?|" + "|".join(_WEEKDAYS) + r") (?P<rel>before|after|of) $"
)
_SPLIT = re.compile(r"\s*(?:[,;]|\band\b|\bas well as\b)\s*")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "by",
        "with",
        "from",
        "his",
        "her",
        "their",
        "its",
        "my",
        "our",
        "your",
        "he",
        "she",
        "they",
        "it",
        "is",
        "was",
        "were",
        "be",
        "been",
        "are",
        "that",
        "this",
        "these",
        "those",
        "some",
        "any",
        "about",
        "around",
        "also",
        "just",
    }
)


@dataclass(frozen=True, slots=True)
class Span:
    """A date expression as the first and last day it can name."""

    first: date
    last: date
    text: str
    yearless: bool = False  # "7 May": the days are kept in the year 2000 and compared without years

    def within(self, other: Span) -> bool:
        if self.yearless or other.yearless:
            mine, theirs = _in_2000(self), _in_2000(other)
            return theirs[0] <= mine[0] and mine[1] <= theirs[1]
        return other.first <= self.first and self.last <= other.last


def _in_2000(span: Span) -> tuple[date, date]:
    try:
        return span.first.replace(year=2000), span.last.replace(year=2000)
    except ValueError:  # 29 February
        return span.first.replace(year=2000, day=28), span.last.replace(year=2000, day=28)


def date_spans(text: str) -> list[Span]:
    """Every date expression in a text, relative ones ('the week before 4 May 2023') resolved."""
    lowered = text.casefold()
    spans = []
    for match in _ABSOLUTE.finditer(lowered):
        absolute = _absolute(match)
        if absolute is None:
            continue
        relative = _RELATIVE.search(lowered[max(0, match.start() - 40) : match.start()])
        spans.append(_shift(absolute, relative) if relative else absolute)
    return spans


def strip_dates(text: str, *, keep_case: bool = False) -> str:
    """The text without its date expressions (and their relative prefixes), for the word check;
    lowercased unless `keep_case` (then in the text's own case, when casefolding keeps its length)."""
    lowered = text.casefold()
    source = text if keep_case and len(lowered) == len(text) else lowered
    out, last = [], 0
    for match in _ABSOLUTE.finditer(lowered):
        start = match.start()
        relative = _RELATIVE.search(lowered[max(0, start - 40) : start])
        if relative is not None:
            start = max(0, start - 40) + relative.start()
        out.append(source[last:start])
        last = match.end()
    return " ".join([*out, source[last:]])


def missing_parts(prediction: str, gold: str) -> list[str]:
    """What of one gold answer the prediction lacks: dates with no match inside them, and parts."""
    found = date_spans(prediction)
    lacking = [s.text for s in date_spans(gold) if not any(p.within(s) for p in found)]
    said = {_stem(w) for w in _WORD.findall(prediction.casefold())}
    for part in _SPLIT.split(strip_dates(gold)):
        words = {_stem(w) for w in _WORD.findall(part) if w not in _STOP}
        if words and len(words - said) > len(words) // 4:  # a long part may miss one word in four
            lacking.append(part.strip())
    return lacking


class StrictJudge(RecordingJudge):
    """Correct when F1 would say so and, besides, every part of a gold answer is present with its dates
    matching: never more lenient than the F1 verdict. F1 stays the reported score."""

    method = "strict"

    def __init__(self, threshold: float = 0.5) -> None:
        self.threshold = threshold

    def verdict(
        self, question: str, gold: Gold | None, prediction: str, category: str | int | None = None
    ) -> Verdict:
        """The verdict without recording anything."""
        golds = as_gold_list(gold)
        f1, _ = score_answer(prediction, golds, category)
        if is_unanswerable(golds, category):
            correct = says_unanswerable(prediction)
            says = "says" if correct else "does not say"
            return Verdict(correct, f1, self.method, f"unanswerable; the prediction {says} so")
        if scoring_rule(category) == "first-alternative":
            golds = [g.split(";")[0].strip() for g in golds]
        lacks = {g: missing_parts(prediction, g) for g in golds}
        best = min(golds, key=lambda g: len(lacks[g]))
        if lacks[best]:
            why = f"missing from {best!r}: {'; '.join(lacks[best])} (token F1 {f1:.2f})"
            return Verdict(False, f1, self.method, why)
        if f1 < self.threshold:
            why = f"every part of {best!r} is present, but token F1 {f1:.2f} < {self.threshold:g}"
            return Verdict(False, f1, self.method, why)
        return Verdict(True, f1, self.method, f"every part of {best!r} is present (token F1 {f1:.2f})")


def _absolute(match: re.Match[str]) -> Span | None:
    g = match.groupdict()
    try:
        if g["iy"]:
            day = date(int(g["iy"]), int(g["im"]), int(g["id"]))
            return Span(day, day, match.group(0))
        month_name = g["m1"] or g["m2"] or g["m3"]
        year = int(g["y1"] or g["y2"] or g["y3"] or g["y4"] or 0) or None
        if month_name is None:
            return Span(date(year, 1, 1), date(year, 12, 31), match.group(0)) if year else None
        month = _MONTHS[month_name]
        day_text = g["d1"] or g["d2"]
        yearless = year is None
        year = year or 2000
        if day_text:
            day = date(year, month, int(day_text))
            return Span(day, day, match.group(0), yearless)
        end = date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)
        return Span(date(year, month, 1), end, match.group(0), yearless)
    except ValueError:
        return None


def _shift(anchor: Span, relative: re.Match[str]) -> Span:
    """'the week before X', 'two days after X', 'the Sunday before X' as the days they name."""
    unit, rel = relative.group("unit"), relative.group("rel")
    count = relative.group("n")
    n = int(count) if count and count.isdigit() else _NUMBERS.get(count or "", 1)
    text = f"{relative.group(0)}{anchor.text}"
    if unit in _WEEKDAYS:
        target = _WEEKDAYS.index(unit)
        if rel == "after":
            day = anchor.last + timedelta(days=(target - anchor.last.weekday() - 1) % 7 + 1)
        else:
            day = anchor.first - timedelta(days=(anchor.first.weekday() - target - 1) % 7 + 1)
        return Span(day, day, text, anchor.yearless)
    days = {"day": 1, "week": 7, "weekend": 7, "month": 31, "year": 366}[unit.rstrip("s") or "day"] * n
    if rel == "of":
        return Span(
            anchor.first - timedelta(days=days - 1),
            anchor.last + timedelta(days=days - 1),
            text,
            anchor.yearless,
        )
    if rel == "before":
        exact = unit.startswith("day")
        first = anchor.first - timedelta(days=days)
        return Span(first, first if exact else anchor.first - timedelta(days=1), text, anchor.yearless)
    last = anchor.last + timedelta(days=days)
    first = last if unit.startswith("day") else anchor.last + timedelta(days=1)
    return Span(first, last, text, anchor.yearless)


_DIGITS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
           "eight": "8", "nine": "9", "ten": "10"}  # fmt: skip


def _stem(word: str) -> str:
    from ..text import porter_stem

    return _DIGITS.get(word) or porter_stem(word)
