"""An independent check of what a text holds of the gold answer: the strict judge's rule, not flow's.

Verification must test something the attributor did not decide. Flow decides with its carrying rule
(support.py: evidence-sentence overlap per message); this check asks the question the judge asks of an
answer instead, item by item of the gold: are the item's words there (one in four may be missing from
a long item), and does a date in the text fall inside each gold date? Relative dates are resolved
against the text's own stamp ("last week [said on 6 March 2023]" names the week before 6 March 2023).

Only items some turn of the conversation holds by this same rule are checked: an answer inferred
from the conversation ("likely no", a paraphrase) has nothing this rule could find, and is said so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date, timedelta

from ...eval.strict import date_spans, missing_parts
from ...graph import Case, GraphQueries
from ...graph.values import value_text
from ...text import format_date
from ..evidence.anatomy import case_anatomy
from ..evidence.locate import message_text, message_versions, said_when
from ..evidence.support import value_parts

_STAMP = re.compile(r"\[(?:said )?on (?P<date>[^\]]+)\]")
_NUMBER = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "few": 3}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_RELATIVE = re.compile(
    r"\b(?P<yesterday>yesterday)\b|\b(?P<today>today|tonight|this morning)\b"
    r"|\blast (?P<unit>week|weekend|month|year)\b|\blast (?P<weekday>" + "|".join(_WEEKDAYS) + r")\b"
    r"|\b(?P<n>\d+|a|an|one|two|three|four|five|six|a few) (?P<ago>days?|weeks?|months?|years?) ago\b",
    re.IGNORECASE,
)


def _anchor(text: str) -> date | None:
    """The day a text was said or stamped: its last '[said on ...]' / '[on ...]' stamp."""
    stamps = list(_STAMP.finditer(text))
    for stamp in reversed(stamps):
        spans = date_spans(stamp.group("date"))
        if spans and not spans[0].yearless and spans[0].first == spans[0].last:
            return spans[0].first
    return None


def resolve_relative(text: str, anchor: date | None = None) -> str:
    """The text with each relative date it uses restated against its stamp, so the judge's date rule
    can read it: "last week [said on 6 March 2023]" gains "the week before 6 March 2023"."""
    day = anchor or _anchor(text)
    if day is None:
        return text
    said = format_date(day)
    resolved = []
    for match in _RELATIVE.finditer(text):
        if match.group("yesterday"):
            resolved.append(format_date(day - timedelta(days=1)))
        elif match.group("today"):
            resolved.append(said)
        elif match.group("unit"):
            resolved.append(f"the {match.group('unit').lower()} before {said}")
        elif match.group("weekday"):
            resolved.append(f"the {match.group('weekday').lower()} before {said}")
        else:
            count = match.group("n").lower()
            n = int(count) if count.isdigit() else _NUMBER.get(count.split()[-1], 1)
            unit = match.group("ago").lower().rstrip("s")
            if unit == "day":
                resolved.append(format_date(day - timedelta(days=n)))
            else:
                resolved.append(f"{'the' if n == 1 else n} {unit}{'' if n == 1 else 's'} before {said}")
    return text if not resolved else f"{text} ({'; '.join(resolved)})"


def _gold_parts(gold: str) -> list[str]:
    """The parts of one gold answer the judge checks (its dates, then its other parts)."""
    return missing_parts("", gold)


def held_parts(texts: Iterable[str], gold: str) -> set[str]:
    """The parts of `gold` that some one of `texts` holds, by the judge's rule."""
    wanted = set(_gold_parts(gold))
    held: set[str] = set()
    for text in texts:
        if held >= wanted:
            break
        held |= wanted - set(missing_parts(resolve_relative(text), gold))
    return held


def texts_of(values: Iterable[object]) -> list[str]:
    """The parts of values as texts, one per memory, list item or line (as the carrying rule splits them)."""
    return [text for value in values for _, text in value_parts(value)] or [
        value_text(value) for value in values
    ]


def _said_turns(graph: GraphQueries) -> list[str]:
    """Every turn of the run as text with its '[said on ...]' stamp."""
    turns = message_versions(graph)
    values = graph.values(turns)
    said = []
    for version in turns:
        text = message_text(values[version.id])
        when = said_when(graph, version)
        said.append(f"{text} [said on {when}]" if when else text)
    return said


class ItemCheck:
    """The checkable parts of a case's gold answer and what a set of texts holds of them."""

    def __init__(self, graph: GraphQueries, case: Case) -> None:
        self.gold = [g for g in case.gold if g.strip()]
        said = graph.derived("said-turns", lambda: _said_turns(graph))
        #: Per gold alternative: the parts some turn of the conversation states (the checkable ones).
        self.checkable = {g: held_parts(said, g) for g in self.gold}
        #: Per gold alternative: the parts no turn states (inferred; this rule cannot check them).
        self.inferred = {g: set(_gold_parts(g)) - self.checkable[g] for g in self.gold}

    @property
    def has_items(self) -> bool:
        return any(self.checkable.values())

    def lacking(self, texts: Sequence[str]) -> list[str]:
        """The checkable parts of the best gold alternative that none of `texts` holds."""
        best: list[str] | None = None
        for gold, parts in self.checkable.items():
            if not parts:
                continue
            missing = sorted(parts - held_parts(texts, gold))
            if best is None or len(missing) < len(best):
                best = missing
        return best or []

    def held(self, texts: Sequence[str]) -> list[str]:
        """The checkable parts of the gold that some of `texts` holds."""
        found: set[str] = set()
        for gold, parts in self.checkable.items():
            found |= parts & held_parts(texts, gold)
        return sorted(found)


def check_for(graph: GraphQueries, case: Case) -> ItemCheck:
    """The item check of a case, built once per graph object (its turns are read once per run)."""
    return graph.derived(("item-check", case.run_id, case.id), lambda: ItemCheck(graph, case))


def refuted_premise(
    graph: GraphQueries, case: Case, kind: str, check: ItemCheck, kept_value: object = None
) -> tuple[str, str] | None:
    """(why, reason) when the recorded run contradicts what a claim of this kind says was lost.

    A RetrievalError says the context lacked the information: refuted when it held every item. An
    UpdateError or DeletionError says a unit held it and lost it: refuted when the unit it names held
    none of it. An ExtractionError says no unit ever held it: refuted when memory held every item at
    question time. Only items some turn states are checked (see `ItemCheck`)."""
    if not check.has_items:
        return None
    anatomy = case_anatomy(graph, case)
    if kind == "RetrievalError":
        context = texts_of(graph.values(anatomy.context_vars).values())
        if context and not check.lacking(context):
            return (
                "context-had-it",
                f"the recorded context already held every item: {', '.join(check.held(context))}",
            )
    elif kind in ("UpdateError", "DeletionError"):
        if kept_value is not None and not check.held(texts_of([kept_value])):
            return (
                "unit-never-held-it",
                "the unit version the claim says was lost holds no item of the answer",
            )
    elif kind == "ExtractionError":
        memory = texts_of(graph.memory_values_at(anatomy.question_seq - 1).values())
        if memory and not check.lacking(memory):
            return (
                "memory-had-it",
                f"memory held every item at question time: {', '.join(check.held(memory))}",
            )
    return None


def item_line(check: ItemCheck, texts: Sequence[str]) -> str:
    """What the judge's rule finds of the answer in these texts, as one line for `checked`."""
    if not check.has_items:
        return "the answer is inferred: no turn states an item of it, so no independent item check"
    lacking = check.lacking(texts)
    if lacking:
        return f"by the judge's rule it lacks {', '.join(lacking)}"
    return f"by the judge's rule it holds every item: {', '.join(check.held(texts))}"
