"""Relative dates read against the day they were said: "last Sunday [said on 13 June 2023]" is 11 June.

LoCoMo's gold answers to "when" questions are mostly such resolutions ("The week before 6 March
2023", "June 11, 2023"), while the turns and the memories made of them say "last week" or "last
Sunday" beside a "[said on ...]" stamp. Both the strict item check of verification and the flow
method's carrying rule read a text with its relative dates restated, so a memory keeping the words
holds the date the gold names.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from ..text import format_date
from .strict import date_spans

_STAMP = re.compile(r"\[(?:said )?on (?P<date>[^\]]+)\]")
_SAID = re.compile(r"\[said on [^\]]+\]")
_NUMBER = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_RELATIVE = re.compile(
    r"\b(?P<yesterday>yesterday)\b|\b(?P<today>today|tonight|this morning)\b"
    r"|\blast (?P<unit>week|weekend|month|year)\b|\blast (?P<weekday>" + "|".join(_WEEKDAYS) + r")\b"
    r"|\bon (?P<onday>" + "|".join(_WEEKDAYS) + r")\b"
    r"|\bthis (?P<current>week|month|year)\b|\bnext (?P<next>month|year)\b"
    r"|\b(?P<n>\d+|a|an|one|two|three|four|five|six|a few) (?P<ago>days?|weeks?|months?|years?) ago\b"
    r"|\bthe (?P<day>[1-3]?\d)(?:st|nd|rd|th)\b(?! of)",
    re.IGNORECASE,
)


#: A plain "on Friday" names a day only in a sentence about the past ("On Friday, Tim got great news"
#: said on a Sunday is that Sunday's Friday before); "I'll call you on Friday" is still to come.
_PAST = re.compile(
    r"\b(?:\w{3,}ed|got|went|had|was|were|did|made|took|saw|came|found|gave|met|won|lost|bought|felt"
    r"|heard|told|left|ran|began|brought|sold|wrote|ate|drove|flew|spent|caught|threw|sang|swam)\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(?:will|going to|gonna|tomorrow|next|planning|plan to|plans to|can't wait|hope to|hoping)\b|'ll\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?\n]")


def _names_a_day(match: re.Match[str], text: str) -> bool:
    """Whether a match names a day: every expression does, but a plain "on Friday" only in a sentence
    told in the past tense with nothing of the future in it."""
    if not match.group("onday"):
        return True
    starts = [m.end() for m in _SENTENCE_END.finditer(text, 0, match.start())]
    end = _SENTENCE_END.search(text, match.end())
    sentence = text[starts[-1] if starts else 0 : end.start() if end else len(text)]
    return _PAST.search(sentence) is not None and _FUTURE.search(sentence) is None


def stamp_day(text: str) -> date | None:
    """The day a text was said or stamped: its last full-date '[said on ...]' / '[on ...]' stamp."""
    stamps = list(_STAMP.finditer(text))
    for stamp in reversed(stamps):
        spans = date_spans(stamp.group("date"))
        if spans and not spans[0].yearless and spans[0].first == spans[0].last:
            return spans[0].first
    return None


def mentions_relative_date(text: str) -> bool:
    """Whether `text` says a date relative to when it was said ("yesterday", "last week", ...)."""
    return _RELATIVE.search(text) is not None


def resolved_dates(text: str, anchor: date | None = None) -> list[str]:
    """The dates the relative expressions of `text` name, said on `anchor` (else on its own stamp)."""
    if not _RELATIVE.search(text):
        return []
    day = anchor or stamp_day(text)
    if day is None:
        return []
    matches = (match for match in _RELATIVE.finditer(text) if _names_a_day(match, text))
    return [r for r in (_resolved(match, day) for match in matches) if r]


def with_resolved_dates(text: str, anchor: date | None = None) -> str:
    """`text` with the date each relative expression names written after it, its stamp kept (flow's
    reading: "Last Sunday (11 June 2023) was awesome [said on 13 June 2023]"), so the date stays in
    the sentence that says what happened on it."""
    if not _RELATIVE.search(text):  # most texts: no stamp to parse
        return text
    day = anchor or stamp_day(text)
    if day is None:
        return text

    def restated(match: re.Match[str]) -> str:
        resolved = _resolved(match, day) if _names_a_day(match, text) else ""
        if resolved and (match.group("unit") or "").lower() == "month":  # also the calendar month's name
            resolved = f"{resolved}, {_month_before(day)}"
        return f"{match.group(0)} ({resolved})" if resolved else match.group(0)

    return _RELATIVE.sub(restated, text)


def resolve_relative(text: str, anchor: date | None = None) -> str:
    """The text with each relative date it uses restated against its stamp, so the judge's date rule
    can read it: "last week [said on 6 March 2023]" becomes "last week (the week before 6 March 2023)"."""
    resolved = resolved_dates(text, anchor)
    if not resolved:
        return text
    # A "[said on ...]" stamp says when it was said, not when it happened: "last week [said on 27
    # February]" does not hold "the week before 6 March" by the stamp's date falling inside that week.
    # An "[on ...]" stamp is the event's own date, as the memory system resolved it, and stays.
    return f"{_SAID.sub('', text).rstrip()} ({'; '.join(resolved)})"


def _resolved(match: re.Match[str], day: date) -> str:
    """The date one relative expression names when said on `day` ("" when it names none)."""
    said = format_date(day)
    if match.group("yesterday"):
        return format_date(day - timedelta(days=1))
    if match.group("today"):
        return said
    if match.group("unit"):
        return f"the {match.group('unit').lower()} before {said}"
    if match.group("day"):  # "on the 15th": the stamp's month, or the month before
        return _day_of_month(day, int(match.group("day")))
    if match.group("current"):  # "this month" said on 20 January 2023 is January 2023
        unit = match.group("current").lower()
        if unit == "year":
            return str(day.year)
        return f"the week of {said}" if unit == "week" else f"{day:%B} {day.year}"
    if match.group("next"):  # "next month" said on 8 July 2023 is August 2023
        if match.group("next").lower() == "year":
            return str(day.year + 1)
        month, year = (1, day.year + 1) if day.month == 12 else (day.month + 1, day.year)
        return f"{date(year, month, 1):%B} {year}"
    weekday = match.group("weekday") or match.group("onday")
    if weekday:  # "last Sunday", or "on Sunday" told as past: the latest Sunday before the day it was said
        back = (day.weekday() - _WEEKDAYS.index(weekday.lower())) % 7 or 7
        return format_date(day - timedelta(days=back))
    count = match.group("n").lower()
    n = int(count) if count.isdigit() else _NUMBER.get(count.split()[-1], 1)
    unit = match.group("ago").lower().rstrip("s")
    if unit == "day":
        return format_date(day - timedelta(days=n))
    return f"{'the' if n == 1 else n} {unit}{'' if n == 1 else 's'} before {said}"


def _month_before(day: date) -> str:
    """The calendar month before `day`'s ("December 2022" for 1 January 2023): how a gold answer
    usually names "last month"."""
    previous = day.replace(day=1) - timedelta(days=1)
    return f"{previous:%B} {previous.year}"


def _day_of_month(anchor: date, number: int) -> str:
    """The date "the Nth" names when said on `anchor`: in its month, or the month before if still to come."""
    month, year = anchor.month, anchor.year
    if number > anchor.day:
        month, year = (12, year - 1) if month == 1 else (month - 1, year)
    try:
        return format_date(date(year, month, number))
    except ValueError:
        return ""
