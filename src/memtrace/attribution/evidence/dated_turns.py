"""The turns that name a gold date by a relative one: "I took it at the beach last month", said on 1
January 2023, states "December 2022". LoCoMo's gold answers to "when" questions are such resolutions,
and its annotated turn is sometimes the other speaker's reply, so the turn saying it is looked for.
"""

from __future__ import annotations

import calendar
import re
from datetime import date

from ...eval.relative_dates import mentions_relative_date, resolve_relative
from ...eval.strict import Span, date_spans
from ...graph import GraphQueries, VariableVersion
from .locate import dated_message, run_speakers, said_when, session_of
from .words import content_stems


def turns_naming_date(
    graph: GraphQueries,
    text: str,
    turns: list[tuple[VariableVersion, frozenset[str]]],
    annotated: set[str],
    sessions: set[str],
    asked: frozenset[str],
) -> tuple[str, list[VariableVersion]] | None:
    """Where and which turns name a gold date by a relative one ("last month", said on 1 January 2023,
    for "December 2022"): the annotated ones, else in their sessions, each sharing a word of the
    question (the event asked about); None when the annotated turns were said on that date."""
    golds = [g for g in _gold_spans(text) if (g.last - g.first).days <= 31]  # a year is said too often
    if not golds:
        return None

    def names_it(version: VariableVersion) -> bool:
        said = dated_message(graph, version)
        if not mentions_relative_date(said):
            return False
        return any(s.within(g) for s in date_spans(resolve_relative(said)) for g in golds)

    if any(_said_within(graph, v, golds) for v, _ in turns if v.id in annotated):
        return None  # said on that day: the annotated turns state it by their stamp, as most do
    names = frozenset().union(*(content_stems(n) for n in run_speakers(graph) if n))
    event = asked - names  # "Maria" is in most turns of her sessions; "beach" is what was asked
    relating = [v for v, w in turns if w & event]
    for where, chosen in (
        ("annotated", [v for v in relating if v.id in annotated]),
        ("session", [v for v in relating if session_of(v) in sessions and v.id not in annotated]),
    ):  # not the whole conversation: some turn of another session says "last week" of most dates
        picked = [v for v in chosen if names_it(v)]
        if picked:
            return where, picked
    return None


def _said_within(graph: GraphQueries, version: VariableVersion, golds: list[Span]) -> bool:
    """Whether a turn was said on a day inside one of the gold dates."""
    when = said_when(graph, version)
    return when is not None and any(s.within(g) for s in date_spans(when) for g in golds)


_BARE_MONTH = re.compile(r"(?:in |early |late |mid-?)?(?P<month>[a-z]+)")


def _gold_spans(text: str) -> list[Span]:
    """The dates of a gold item; a bare month ("August", "in early May") is that month of any year."""
    spans = date_spans(text)
    match = _BARE_MONTH.fullmatch(text.strip().casefold())
    if spans or match is None or match.group("month") not in _MONTH_NUMBERS:
        return spans
    month = _MONTH_NUMBERS[match.group("month")]
    last = calendar.monthrange(2000, month)[1]
    return [Span(date(2000, month, 1), date(2000, month, last), text, yearless=True)]


_MONTH_NUMBERS = {name.casefold(): number for number, name in enumerate(calendar.month_name) if name}
