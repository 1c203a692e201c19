"""An independent check of what a text holds of the gold answer: the strict judge's rule, not flow's.

Verification must test something the attributor did not decide. Flow decides with its carrying rule
(support.py: evidence-sentence overlap per message); this check asks the question the judge asks of an
answer instead, item by item of the gold: are the item's words there (one in four may be missing from
a long item), and does a date in the text fall inside each gold date? Relative dates are resolved
against the text's own stamp ("last week [said on 6 March 2023]" names the week before 6 March 2023).

Only items some turn of the conversation holds by this same rule are checked. An answer inferred
from the conversation ("likely no", a paraphrase) has no such item: then the annotated evidence turns
are what must be held, each whole (every part of the turn by the judge's rule, and flow's rule for
that turn alone), since an answer inferred from them can only be as good as what reached the step.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ...eval.relative_dates import resolve_relative
from ...eval.strict import missing_parts
from ...graph import Case, GraphQueries, VariableVersion
from ...graph.values import value_text
from ...vocabulary import Verdict
from ..evidence.anatomy import case_anatomy
from ..evidence.locate import message_text, message_versions, run_speakers, said_when
from ..evidence.support import OverlapScorer, Target, carrying_part, content_stems, value_parts
from ..evidence.words import BOTH, people_asked_about

_SAID = re.compile(r"\[said on [^\]]+\]")


def _gold_parts(gold: str) -> list[str]:
    """The parts of one gold answer the judge checks (its dates, then its other parts), without bare
    verdicts ("yes", "no"): those are inferred from the conversation, never stated as such."""
    return [part for part in missing_parts("", gold) if not set(part.casefold().split()) <= _VERDICTS]


_VERDICTS = {"yes", "no", "not", "nope", "yeah", "likely", "probably", "maybe"}


def held_parts(texts: Iterable[str], gold: str, parts: Iterable[str] | None = None) -> set[str]:
    """The parts of `gold` (or of `parts`) that some one of `texts` holds, by the judge's rule."""
    wanted = set(_gold_parts(gold) if parts is None else parts)
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


def _said_turns(graph: GraphQueries) -> list[tuple[str, str]]:
    """Every turn of the run as (name, text with its '[said on ...]' stamp)."""
    turns = message_versions(graph)
    values = graph.values(turns)
    said = []
    for version in turns:
        text = message_text(values[version.id])
        when = said_when(graph, version)
        said.append((version.name, f"{text} [said on {when}]" if when else text))
    return said


@dataclass(slots=True)
class Item:
    """One checkable part of the gold answer (or, for an inferred answer, one annotated evidence turn):
    the judge's text of it and flow's target for it alone."""

    gold: str
    text: str
    target: Target
    #: An evidence turn: held only where every part of it is (`gold` is the turn's own words).
    whole: bool = False
    #: A date only stamps hold: held only by a part naming more than half of the question's event too
    #: (the stems of it the stating turns use).
    event: frozenset[str] = frozenset()
    #: Whose statement this item is, when a question asks it of several people ("both").
    person: str | None = None

    @property
    def label(self) -> str:
        """How the item is named in findings: its text, and whose it is when the question asks of both."""
        return f"{self.text} ({self.person})" if self.person else self.text

    def judged_held(self, texts: Sequence[str]) -> bool:
        """The judge's rule: some one text holds the item (a whole turn: every part of it; a date only
        stamps hold: a text naming more than half of the question's event too)."""
        if self.whole:  # every content word of the turn: its one telling word may be the whole point
            words = content_stems(self.gold)
            return any(words <= content_stems(text) for text in texts)
        if self.event:
            texts = [t for t in texts if 2 * len(self.event & content_stems(t)) > len(self.event)]
        return bool(held_parts(texts, self.gold, [self.text]))


class ItemCheck:
    """The checkable items of a case's gold answer, and what a set of values holds of them.

    An item is checked by two rules that must agree: the judge's (its words, its dates) and flow's
    carrying rule for that item alone (the sentence stating it, not a look-alike sharing a word). Both
    present: held. Both absent: missing. They disagree: disputed, and nothing is concluded from it.
    An item is checkable when a turn states it by the judge's rule: an annotated turn or one of their
    sessions, else a turn that also shares a word of the question.
    """

    def __init__(self, graph: GraphQueries, case: Case, scorer: OverlapScorer | None = None) -> None:
        self.scorer = scorer or OverlapScorer()
        said = graph.derived("said-turns", lambda: _said_turns(graph))
        speakers = run_speakers(graph)
        self.items: list[Item] = []
        self.inferred: list[str] = []
        annotated = {str(e).split("@")[0] for e in case.evidence}
        sessions = {name.split(":")[0] for name in annotated if ":" in name}
        asked = content_stems(case.question)
        named = [s for s in speakers if re.search(rf"\b{re.escape(s)}\b", case.question)]
        asked_about = named[0] if len(named) == 1 else None
        # The people a "both" question joins ("Caroline and Melanie both"): each one's item is checked.
        joined = sorted(people_asked_about(case.question, speakers)) if BOTH.search(case.question) else []
        for gold in (g for g in case.gold if g.strip()):
            for part in _gold_parts(gold):
                everywhere = [(name, text) for name, text in said if part in held_parts([text], gold, [part])]
                stamped = not any(
                    part in held_parts([_SAID.sub("", text)], gold, [part]) for _, text in everywhere
                )
                if stamped:
                    # A date only stamps hold ("February, 2023"): every turn said that month holds it,
                    # and none says what happened then. The annotated turns say it; no other turn does.
                    everywhere = [(name, text) for name, text in everywhere if name in annotated]
                elif (words := content_stems(part)) and words <= _name_stems(speakers):
                    # A speaker's name ("Who invited Nate?" "Joanna"): every line she said names her.
                    everywhere = [(name, text) for name, text in everywhere if name in annotated]
                else:
                    everywhere = _statements_first(everywhere, part)
                # Where the case's information is: the annotated turns and their sessions, else a turn
                # that also shares a word of the question; a word said anywhere else is another matter.
                stating = [
                    (name, text)
                    for name, text in everywhere
                    if name in annotated or name.split(":")[0] in sessions
                ] or [
                    (name, text)
                    for name, text in everywhere
                    if (content_stems(text) - content_stems(part)) & asked
                ]
                if not stating:
                    self.inferred.append(part)
                    continue
                stating = _own_words_first(stating, asked_about)
                target = self.scorer.prepare(case.question, [part], stating[:_STATING_TURNS], speakers)
                # The question's event as the stating turns word it ("did it yesterday" words none of it,
                # and then no part can be asked to).
                event = frozenset()
                if stamped:
                    worded = frozenset().union(*(content_stems(text) for _, text in stating))
                    event = (asked - _name_stems(speakers)) & worded
                by_person = _each_persons_turns(stating, joined, annotated) if joined else []
                for person, own in by_person:  # "both painted sunsets": each one's statement is an item
                    own_target = self.scorer.prepare(case.question, [part], own[:_STATING_TURNS], speakers)
                    whom = content_stems(person)  # a line naming only the other one is about them
                    own_target = replace(
                        own_target, asked_about=whom, others=(own_target.others | target.asked_about) - whom
                    )
                    self.items.append(Item(gold, part, own_target, event=event, person=person))
                if not by_person:
                    self.items.append(Item(gold, part, target, event=event))
            break  # the first gold alternative: datasets list one answer per case
        if not self.items:
            self.items = self._evidence_turns(graph, case, annotated, speakers)

    @property
    def complete(self) -> bool:
        """Whether the items cover the whole answer: none of its parts went unchecked (an inferred
        answer's items are its evidence turns, which stand for all of it). Only then can a finding
        say "every item" or "none of it"."""
        return self.has_items and (self.turns or not self.inferred)

    @property
    def turns(self) -> bool:
        """The items are annotated evidence turns (the answer is inferred), not parts of the answer."""
        return bool(self.items) and self.items[0].whole

    def _evidence_turns(
        self, graph: GraphQueries, case: Case, annotated: set[str], speakers: Iterable[str]
    ) -> list[Item]:
        """For an inferred answer: each annotated turn the run recorded, as an item held only whole."""
        turns = message_versions(graph)
        values = graph.values(turns)
        items = []
        for version in turns:
            if version.name not in annotated:
                continue
            text = message_text(values[version.id])
            body = text.split(": ", 1)[1] if ": " in text[:40] else text
            if not content_stems(body):
                continue
            target = self.scorer.prepare(case.question, [], [(version.name, text)], speakers)
            items.append(Item(body, f"turn {version.name}", target, whole=True))
        return items

    @property
    def has_items(self) -> bool:
        return bool(self.items)

    def status(self, values: Sequence[object]) -> dict[str, str]:
        """Per item: "held" (both rules find it in one and the same part), "missing" (neither finds it
        anywhere), "disputed" (otherwise)."""
        texts = texts_of(values)
        parts = [(None, value) for value in values]
        found = {}
        for item in self.items:
            # Held only where both rules find it in the same part: the judge's words in a long episode
            # and flow's statement in another memory are two half-findings, not one.
            judged = [(None, text) for text in texts if item.judged_held([text])]
            if judged and carrying_part(item.target, judged, self.scorer) is not None:
                found[item.label] = "held"
            elif judged or carrying_part(item.target, parts, self.scorer) is not None:
                found[item.label] = "disputed"
            else:
                found[item.label] = "missing"
        return found

    def lacking(self, values: Sequence[object]) -> list[str]:
        """The items not held (missing or disputed)."""
        return [item for item, state in self.status(values).items() if state != "held"]

    def held(self, values: Sequence[object]) -> list[str]:
        return [item for item, state in self.status(values).items() if state == "held"]


#: How many turns stating an item make its flow target (the first ones: the earliest statements).
_STATING_TURNS = 6

_SENTENCE = re.compile(r"[^.!?]*[.!?]?")


def _statements_first(turns: list[tuple[str, str]], part: str) -> list[tuple[str, str]]:
    """The turns holding an item in a statement, when some do: a question holding its words ("Is there
    a piece from your early writings you love?") asks about it, and another turn states it."""
    words = content_stems(part)

    def asks_only(text: str) -> bool:
        sentences = [m.group(0) for m in _SENTENCE.finditer(text) if words <= content_stems(m.group(0))]
        return bool(sentences) and all(sentence.rstrip().endswith("?") for sentence in sentences)

    stating = [(name, text) for name, text in turns if not asks_only(text)]
    return stating or turns


def _own_words_first(turns: list[tuple[str, str]], speaker: str | None) -> list[tuple[str, str]]:
    """The turns the person asked about said, when some state the item: the other speaker's echo ("Cool,
    John. Kickboxing is a perfect way to de-stress") restates John's "I'm doing kickboxing", it does
    not state it, and a window that lost John's line lost what the answer rests on."""
    if speaker is None:
        return turns
    own = [(name, text) for name, text in turns if text.startswith(f"{speaker}: ")]
    return own or turns


def _each_persons_turns(
    stating: list[tuple[str, str]], named: list[str], annotated: set[str]
) -> list[tuple[str, list[tuple[str, str]]]]:
    """The stating turns of each person a question joins with "both", when each of them said one: an
    item held for one of them ("Caroline painted a sunset") is not held for the other. A person's
    annotated turns first: their other lines with the words may be about the other person's thing
    (Melanie's "it really looks like a real sunset" of Caroline's painting). Empty otherwise."""
    if len(named) < 2:
        return []
    found = []
    for person in named:  # turns here read "Speaker: text" (`_said_turns`)
        own = [(name, text) for name, text in stating if text.startswith(f"{person}: ")]
        found.append((person, [(name, text) for name, text in own if name in annotated] or own))
    return found if all(turns for _, turns in found) else []


def _name_stems(speakers: Iterable[str]) -> frozenset[str]:
    """The stems of the speakers' names: on every line they said, so no sign of what a line is about."""
    return frozenset().union(*(content_stems(name) for name in speakers))


def item_line(check: ItemCheck, values: Sequence[object]) -> str:
    """What the two rules find of the answer's items in these values, as one line for `checked`."""
    if not check.has_items:
        return "the answer is inferred: no turn states an item of it, so no independent item check"
    status = check.status(values)
    what = "evidence turns (the answer is inferred)" if check.turns else "items"
    parts = [
        f"{state} {', '.join(item for item, found in status.items() if found == state)}"
        for state in ("held", "missing", "disputed")
        if state in status.values()
    ]
    return f"{what} by the judge's rule and flow's: " + "; ".join(parts)


def check_for(graph: GraphQueries, case: Case) -> ItemCheck:
    """The item check of a case, built once per graph object (its turns are read once per run)."""
    return graph.derived(("item-check", case.run_id, case.id), lambda: ItemCheck(graph, case))


def premise_finding(
    graph: GraphQueries, case: Case, kind: str, check: ItemCheck, kept_value: object = None
) -> tuple[Verdict, str, str] | None:
    """(verdict, why, reason) when the recorded run contradicts what a claim of this kind says was
    lost (refuted), or disputes it (not verifiable).

    Every claim upstream of the answer step says the context lacked the information: refuted when it
    held every item. An UpdateError or DeletionError says a unit held it and lost it: refuted when the
    unit it names held none of it. An ExtractionError says no unit ever held it: disputed when memory
    held every item at question time. Held and missing are what both rules agree on (see
    `ItemCheck`). Only with a complete check: no rule checks a part of the answer no turn states."""
    if not check.complete:  # "every item" cannot be said of items none checks
        return None
    anatomy = case_anatomy(graph, case)
    context = list(graph.values(anatomy.context_vars).values())
    upstream = kind in ("ExtractionError", "UpdateError", "DeletionError", "RetrievalError")
    if upstream and context and not check.lacking(context):  # nothing was lost before the answer step
        return (
            Verdict.REFUTED,
            "context-had-it",
            f"the recorded context already held every item: {', '.join(check.held(context))}",
        )
    if kind in ("UpdateError", "DeletionError") and not check.turns:  # a paraphrase splits a turn
        if kept_value is not None and set(check.status([kept_value]).values()) == {"missing"}:
            return (
                Verdict.REFUTED,
                "unit-never-held-it",
                "the unit version the claim says was lost holds no item of the answer",
            )
    elif kind == "ExtractionError":
        memory = list(graph.memory_values_at(anatomy.question_seq - 1).values())
        if memory and not check.lacking(memory):
            # Disputed, not refuted: a short item's words in some unit ("surfing", "3 years") say
            # little of whether the fact is there; on the blind labels this finding refuted more right
            # extraction claims than wrong ones (6 to 3).
            return (
                Verdict.NOT_VERIFIABLE,
                "memory-held-items",
                f"memory held every item at question time ({', '.join(check.held(memory))}) word for word:"
                " the claim that no unit ever held it is disputed, not refuted",
            )
    return None


def carriers_of_missing(graph: GraphQueries, case: Case, check: ItemCheck) -> list[object]:
    """Live memories at question time holding the items the recorded context lacks, one per item (by
    both rules): what an ideal retrieval returns besides what it did, for a partial carrier too."""
    return [value for _, value in carrier_versions(graph, case, check)]


def carrier_versions(
    graph: GraphQueries, case: Case, check: ItemCheck
) -> list[tuple[VariableVersion, object]]:
    """`carriers_of_missing` with the memory version each value is, in memory order."""
    if not check.has_items:
        return []
    anatomy = case_anatomy(graph, case)
    context = list(graph.values(anatomy.context_vars).values())
    lacking = set(check.lacking(context))
    live = graph.memory_state_at(anatomy.question_seq - 1)
    values = graph.values(live.values())
    found: list[tuple[VariableVersion, object]] = []
    for version in live.values():
        if not lacking:
            break
        value = values[version.id]
        holds = {item for item, state in check.status([value]).items() if state == "held"} & lacking
        if holds:
            found.append((version, value))
            lacking -= holds
    return found


def stating_turns(check: ItemCheck) -> set[str]:
    """The names of the turns stating the checkable items (what ideal later trims keep)."""
    return {label for item in check.items for label in item.target.labels if label}
