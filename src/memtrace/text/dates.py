"""Dates the way LoCoMo writes them, read from datasets, and relative dates pinned to a session's day.

One home for every date helper (datasets, systems and attribution all speak these formats), so the
sample conversation, the offline fact extraction and the evidence location agree to the letter.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

_WORD_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "a couple of": 2,
    "a few": 3,
}
_RELATIVE = [
    (re.compile(r"\byesterday\b", re.I), lambda m: timedelta(days=1)),
    (re.compile(r"\b(today|tonight|this morning|this evening)\b", re.I), lambda m: timedelta(0)),
    (re.compile(r"\blast night\b", re.I), lambda m: timedelta(days=1)),
    (
        re.compile(r"\b(\d+|one|two|three|four|five|six|seven|a couple of|a few) days? ago\b", re.I),
        lambda m: timedelta(days=_number(m.group(1))),
    ),
    (
        re.compile(r"\b(\d+|one|two|three|four|a couple of|a few) weeks? ago\b", re.I),
        lambda m: timedelta(weeks=_number(m.group(1))),
    ),
    (re.compile(r"\blast week(end)?\b", re.I), lambda m: timedelta(weeks=1)),
    (re.compile(r"\blast month\b", re.I), lambda m: timedelta(days=30)),
]


def _number(text: str) -> int:
    text = text.lower()
    return int(text) if text.isdigit() else _WORD_NUMBERS.get(text, 1)


_DATE_FORMATS = (
    "%I:%M %p on %d %B, %Y",  # LoCoMo: "4:06 pm on 23 January, 2023"
    "%I:%M %p on %d %b, %Y",
    "%Y/%m/%d (%a) %H:%M",  # LongMemEval: "2023/05/20 (Sat) 02:21"
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d",
    "%d %B %Y",
    "%d %B, %Y",
)


def parse_when(raw: str | None) -> datetime | None:
    """Best-effort parse of a dataset's date string; None when the format is unknown (never raises)."""
    if not raw:
        return None
    text = " ".join(raw.split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def format_date(when: date) -> str:
    """Dates the way LoCoMo's gold answers write them: '7 May 2023'."""
    return f"{when.day} {when.strftime('%B')} {when.year}"


def session_date_text(when: datetime) -> str:
    """A session date the way LoCoMo writes it: "4:06 pm on 23 January, 2023"."""
    hour = when.hour % 12 or 12
    half = "am" if when.hour < 12 else "pm"
    return f"{hour}:{when.minute:02d} {half} on {when.day} {when:%B}, {when.year}"


def resolve_date(sentence: str, said_on: datetime | None) -> str | None:
    """The absolute date a sentence refers to ('two days ago' said on 27 April -> 25 April 2023)."""
    if said_on is None:
        return None
    for pattern, delta in _RELATIVE:
        match = pattern.search(sentence)
        if match:
            return format_date(said_on - delta(match))
    return None
