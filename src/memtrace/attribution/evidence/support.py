"""Does a value still carry the information a question needed? The flow method asks this everywhere.

The default scorer is lexical: a value carries evidence message `e` when it holds most of the gold
answer's content words that `e` states, or, when the answer is not literally in `e` (a date
resolved from "yesterday", a paraphrase), most of `e`'s own content words. Scorers are pluggable:
any object with `prepare` and `score` works (embeddings, an LLM yes/no judge).
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ...eval.relative_dates import mentions_relative_date, stamp_day, with_resolved_dates
from ...eval.strict import strip_dates
from ...graph.values import value_text
from .fields import Reading, as_record, read_dict, text_lines
from .statements import WHEN_WORDS, YEAR, Statement, date_only, statements_of, what_words
from .words import (
    STAMP,
    answer_item_texts,
    answer_items,
    answer_rule,
    asked_about_words,
    asks_about_plan,
    content_stems,
    numbers_in,
    plan_aware_stems,
    stated_items,
    states_answer,
    unplanned,
)

__all__ = [
    "STAMP",
    "CarryingPart",
    "OverlapScorer",
    "SupportScorer",
    "Target",
    "answer_item_texts",
    "answer_items",
    "answer_rule",
    "best_part",
    "carrying_part",
    "content_stems",
    "value_parts",
    "value_words",
]

_TAG = re.compile(r"^\[([^\]\s]+)\] ")


@functools.lru_cache(maxsize=262_144)
def _line_words(line: str) -> frozenset[str]:
    """A line's content words (a plan's marked, see `plan_aware_stems`); a line tagged with its message
    id ('[D1:7] ...') also carries the marker word '@D1:7', so a scorer can require the line to come
    from the evidence message."""
    match = _TAG.match(line)
    if match is None:
        return plan_aware_stems(line)
    markers = {f"@{message_id}" for message_id in match.group(1).split(",") if message_id}
    return plan_aware_stems(line[match.end() :]) | markers


def value_words(value: Any) -> tuple[frozenset[str], ...]:
    """Content words of a value, one set per part: list items and text lines are separate parts.

    Information is carried by one part (a memory, a message, a line), not by words scattered over
    many: "Pepper loves the park" plus "I adopted a dog" elsewhere do not carry "my dog is named
    Pepper". Parts are cached per text, so a long-context memory growing by one message per version
    costs linear, not quadratic, work.
    """
    if value is None:
        return ()
    if isinstance(value, str):
        return _text_words(value) if len(value) <= _CACHED_TEXT else _text_words.__wrapped__(value)
    if isinstance(value, (list, tuple)):
        joined = tuple(_line_words(text) for text in exchange_joins(value))
        return tuple(part for item in value for part in value_words(item)) + joined
    if isinstance(value, dict):
        return _reading_words(read_dict(value)) if value else ()
    return (content_stems(value_text(value)),)


#: An exchange of at most this many messages: mem0 extracts the facts of one pair of turns.
_EXCHANGE_IDS = 2


def exchange_joins(items: Sequence[Any]) -> list[str]:
    """Facts a list holds from one exchange, joined into one part per exchange: mem0 splits "teaming
    up with schools to do workshops" and "invite engineers as guest speakers" out of one turn, and
    together they say what that turn said ("guest speakers for workshops"). Only short exchanges (a
    pair of turns) join; a fact tagged with a whole session says no more joined to its neighbours."""
    groups: dict[str, list[str]] = {}
    for item in items:
        if not isinstance(item, str) or "\n" in item:
            continue
        match = _TAG.match(item)
        if match is None or match.group(1).count(",") >= _EXCHANGE_IDS:
            continue
        groups.setdefault(match.group(0), []).append(item[match.end() :])
    return [tag + " / ".join(bodies) for tag, bodies in groups.items() if len(bodies) > 1]


#: Texts up to this long have their parts cached (a long-context window's lines recur per version).
_CACHED_TEXT = 4096


@functools.lru_cache(maxsize=131_072)
def _text_words(text: str) -> tuple[frozenset[str], ...]:
    if (record := as_record(text)) is not None:  # a dict's dump reads as the dict
        return value_words(record)
    return tuple(_line_words(line) for line in _dated_lines(text))


def _dated_lines(text: str) -> list[str]:
    """The text's lines, each with the dates its relative expressions name appended ("last Sunday"
    said on 13 June 2023 is 11 June), against its own stamp or else the text's last: a retrieved chunk
    stamps its lines once, at its end."""
    lines = text_lines(text)
    if not mentions_relative_date(text):
        return lines
    day = stamp_day(text)
    return [
        with_resolved_dates(line, stamp_day(line) or day) if mentions_relative_date(line) else line
        for line in lines
    ]


def value_parts(value: Any) -> list[tuple[Any, str]]:
    """A value's parts as `value_words` splits them: (the part to score, its text to show)."""
    if value is None:
        return []
    if isinstance(value, str):
        if (record := as_record(value)) is not None:
            return value_parts(record)
        return list(zip(_dated_lines(value), text_lines(value), strict=True))
    if isinstance(value, (list, tuple)):
        joined = [(text, text) for text in exchange_joins(value)]
        return [part for item in value for part in value_parts(item)] + joined
    if isinstance(value, dict):
        return [(value, read_dict(value).stamped())]
    return [(value, value_text(value))]


def _reading_words(reading: Reading) -> tuple[frozenset[str], ...]:
    """A dict is one part: its text with its date stamp, its sources as tag markers (see `fields`)."""
    words = plan_aware_stems(with_resolved_dates(reading.stamped())) | {f"@{s}" for s in reading.sources}
    return (words,) if words else ()


@functools.lru_cache(maxsize=2048)  # one run's memory versions; a window's split holds ~40 kB
def parts_by_source(
    parts: tuple[frozenset[str], ...],
) -> tuple[dict[str, tuple[frozenset[str], ...]], tuple[frozenset[str], ...]]:
    """A value's parts split into those tagged with a message id (by marker) and untagged ones.

    Scoring a key then reads only its own message's parts and the untagged ones: a long-context
    window of 400 tagged lines costs one lookup, not 400 set scans. Cached per parts tuple.
    """
    tagged: dict[str, list[frozenset[str]]] = {}
    untagged: list[frozenset[str]] = []
    for words in parts:
        markers = [w for w in words if w.startswith("@")]
        for marker in markers:
            tagged.setdefault(marker, []).append(words)
        if not markers:
            untagged.append(words)
    return {m: tuple(ws) for m, ws in tagged.items()}, tuple(untagged)


@dataclass
class Target:
    """The critical information of one case: per evidence message, the words that must survive.

    `statements[i]` are the sentences of evidence message i that state an answer word: a part with no
    message id must repeat one of them (see `OverlapScorer.score_words`).
    """

    keys: list[frozenset[str]]
    answer: frozenset[str]
    labels: list[str] = field(default_factory=list)
    statements: list[tuple[Statement, ...]] = field(default_factory=list)
    #: The gold answers, and whether an evidence message states one outright: then a part carries
    #: the information only if it states a gold answer too (see `carrying_part`).
    gold: tuple[str, ...] = ()
    answer_required: bool = False

    @property
    def empty(self) -> bool:
        return not any(self.keys) and not self.answer

    #: Per evidence message, the gold answer items it states outright: a part carries that message
    #: only if it states one of them too (see `OverlapScorer.score_words`).
    stated_items: list[tuple[frozenset[str], ...]] = field(default_factory=list)
    #: The words of the gold answer items no evidence message states outright (paraphrased or
    #: inferred), without speakers' names, the question's words and dates, which every line may hold.
    unstated_words: tuple[frozenset[str], ...] = ()
    #: The person the question asks about (the first it names) and everyone else who speaks: a part
    #: of no message naming only others is about them ("Nate watched it" for what Joanna watched).
    asked_about: frozenset[str] = frozenset()
    others: frozenset[str] = frozenset()

    def about_others(self, words: frozenset[str]) -> bool:
        """Whether a part names only people other than the one asked about; never when the answer is
        one of them ("Who invited Nate?" is answered by a line about Joanna)."""
        if not self.asked_about or self.answer & self.others:
            return False
        return bool(words & self.others) and not words & self.asked_about

    @functools.cached_property
    def key_rows(self) -> tuple[KeyRow, ...]:
        """What the overlap scorer checks per evidence message, derived once per target: it scores
        every memory version of a run against it."""
        count = len(self.keys)
        labels = self.labels or [None] * count
        statements = self.statements or [()] * count
        items = self.stated_items or [()] * count
        rows = []
        counts = answer_counts(self.gold)
        for key, label, stating, items_stated in zip(self.keys, labels, statements, items, strict=False):
            if not key:
                continue
            stated = key & self.answer
            stamped = date_only(stated)
            carries = _carrying_rule(self, items_stated)
            counted = counts & numbers_in(key)
            if counted:  # "she is 5 years old" is not carried by "he is 8 years old"
                carries = _counting(counted, carries)
            rows.append(
                KeyRow(
                    key,
                    f"@{label}" if label else None,
                    stating,
                    stated,
                    # A date is stamped on every line of its day: it shows the answer, not the topic.
                    frozenset(w for w in key - WHEN_WORDS if not YEAR.match(w)) or key,
                    # A date answer is on the '[said on ...]' stamp every line of that day repeats:
                    # with the question's words that proves nothing; the part must say what happened.
                    stamped,
                    carries,
                    any(statement.hedged for statement in stating),
                    _stamp_date(stated) if stamped else frozenset(),
                )
            )
        return tuple(rows)


@dataclass(frozen=True, slots=True)
class KeyRow:
    """One evidence message as the overlap scorer checks a part against it."""

    key: frozenset[str]
    marker: str | None  # '@D1:7': the parts tagged with this message's id
    stating: tuple[Statement, ...]
    stated: frozenset[str]  # the answer words the message states
    about: frozenset[str]  # its key without dates
    stamped: bool  # the answer is a date only the stamp states
    carries: Callable[[frozenset[str]], bool] | None  # the carrying rule (None: any part)
    hedged: bool = False  # the message states it as a plan or a hedge: a hedging part may carry it
    #: The words of a calendar date only the stamp states ("9 June 2023"); none for a duration.
    stamp_words: frozenset[str] = frozenset()


#: How many characters of a carrying part are kept in a path step and a verdict.
PART_CHARS = 400


@dataclass(slots=True)
class CarryingPart:
    """The part of a value that carries the evidence best, its support, and whether it states the answer."""

    text: str
    support: float
    states_answer: bool
    var_id: str | None = None


def best_part(
    target: Target, values: list[tuple[str | None, Any]], scorer: SupportScorer | None = None
) -> CarryingPart | None:
    """The best-supported part among `(var id, value)` pairs that may carry the information, whatever
    its support: when an evidence message states an item of the gold answer, only parts stating one
    may carry it ("Clara adopted a dog named Pepper" shares "dog" with the evidence but does not carry
    "labrador"). The overlap scorer applies that per evidence message (a part scores 0 for a message
    whose item it lacks); for other scorers a part must state some item when any message does."""
    scorer = scorer or OverlapScorer()
    best: CarryingPart | None = None
    for var_id, value in values:
        for part, text in value_parts(value):
            stated = states_answer(text, target.gold)
            if target.answer_required and not stated and not getattr(scorer, "per_message_rule", False):
                continue
            support = scorer.score(target, part)
            if best is None or support > best.support:
                best = CarryingPart(text[:PART_CHARS], support, stated, var_id)
    return best


def carrying_part(
    target: Target, values: list[tuple[str | None, Any]], scorer: SupportScorer | None = None
) -> CarryingPart | None:
    """The one rule of "this part carries the needed information", for the flow method, verification
    and the report alike: the best part (`best_part`) when its support reaches the threshold, else None.
    A context holds the information only through such a part, never through words spread over many."""
    scorer = scorer or OverlapScorer()
    best = best_part(target, values, scorer)
    return best if best is not None and best.support >= scorer.threshold else None


class SupportScorer(Protocol):
    threshold: float

    def prepare(
        self, question: str, gold: list[str], evidence: list[tuple[str, str]], speakers: Iterable[str] = ()
    ) -> Target: ...

    def score(self, target: Target, value: Any) -> float: ...

    def score_words(self, target: Target, parts: tuple[frozenset[str], ...]) -> float: ...


class OverlapScorer:
    """Normalised answer-token and evidence-content overlap (the default: fast, no model)."""

    name = "overlap"
    #: This scorer applies the carrying rule per evidence message itself (`best_part` need not).
    per_message_rule = True

    def __init__(self, threshold: float = 0.5) -> None:
        self.threshold = threshold

    def prepare(
        self, question: str, gold: list[str], evidence: list[tuple[str, str]], speakers: Iterable[str] = ()
    ) -> Target:
        """Key words per evidence message: the answer words it states, else its own content words.

        Speaker names (the conversation's `speakers` and the evidence's) and words of the question
        prove nothing about a line's source: every memory of the speaker has them.
        """
        asked = content_stems(question)
        asks_plan = asks_about_plan(question)
        answer = frozenset().union(*(content_stems(g) for g in gold)) - asked if gold else frozenset()
        named = [t.split(": ", 1)[0] for _, t in evidence if ": " in t[:40]]
        people = [*speakers, *named]
        speakers = frozenset().union(*(content_stems(name) for name in people))
        asked_about = asked_about_words(question, people)
        items = tuple(item for g in gold for item in answer_items(g))
        keys, labels, statements = [], [], []
        for label, said in evidence:
            # "Last Sunday" said on 13 June states 11 June; whether a part must state the gold itself
            # (`stated_items` below) is still read from the words the message used.
            text = with_resolved_dates(said)
            body = text.split(": ", 1)[1] if ": " in text[:40] else text
            words = content_stems(body)
            stated = answer & words
            # The answer words this message states, tied to the question words it shares (the
            # "dog" of "what is Clara's dog called"): a stray mention of the answer is not enough.
            linked = asked & words
            keys.append(frozenset(stated | linked) if stated else frozenset(words - asked) or words)
            labels.append(label)
            stating = statements_of(body, answer, speakers, asked, items)
            if asks_plan:  # the question is about a plan or a wish: a part planning it carries it
                stating = tuple(replace(statement, hedged=True) for statement in stating)
            statements.append(stating)
        per_message = [stated_items(gold, text) for _, text in evidence]
        stated = {item for found in per_message for item in found}
        unstated = (what_words(item - asked, speakers) for item in items if item not in stated)
        return Target(
            keys,
            frozenset(answer),
            labels,
            statements,
            tuple(gold),
            any(per_message),
            per_message,
            tuple(words for words in unstated if words),
            asked_about,
            speakers - asked_about,
        )

    def score(self, target: Target, value: Any) -> float:
        return self.score_words(target, value_words(value))

    def score_words(self, target: Target, parts: tuple[frozenset[str], ...]) -> float:
        """The score from a value's precomputed parts (callers cache them per blob): best part, best key.

        A part tagged with a message id only counts for that message: another message repeating the
        answer is a different source, not the evidence surviving. A part with no id must show its
        source by content: an answer word and at least half of the evidence sentence stating it (a
        speaker's name or a date stamp is on every line, so alone it says nothing). When the message
        states no answer word (the answer is inferred), the part must hold half of its content words.
        """
        best = 0.0
        subject = target.asked_about
        tagged, untagged = parts_by_source(parts)
        for row in target.key_rows:
            for words in tagged.get(row.marker, ()) if row.marker else ():
                if target.about_others(words) and _exchange_tagged(words):
                    continue  # a fact drawn from a whole exchange, about the other speaker
                if row.hedged:  # the evidence was a plan: a part planning it carries it
                    words = unplanned(words)
                if row.carries is not None and not row.carries(words):
                    continue
                if (words & row.stated or not row.stated) and not row.stamped:  # not the question alone
                    best = max(best, len(row.about & words) / len(row.about))
                # The tag adds provenance: a tagged part repeating the statement carries it as an
                # untagged one would ("Maria joined a nearby church" of a longer message).
                carried = _untagged_score(row.key, row.stating, words, subject, row.stamp_words)
                best = max(best, carried)
            for words in untagged:
                if target.about_others(words):
                    continue
                if row.hedged:
                    words = unplanned(words)
                if row.carries is None or row.carries(words):
                    carried = _untagged_score(row.key, row.stating, words, subject, row.stamp_words)
                    best = max(best, carried)
        return best

    def carries(self, target: Target, value: Any) -> bool:
        return self.score(target, value) >= self.threshold


def _exchange_tagged(words: frozenset[str]) -> bool:
    """A part tagged with several messages (a fact EverMemOS drew from an exchange): its tag does not
    say which line it restates, so whom it is about is read from its words. A line tagged with its own
    one message is that message, whoever said it."""
    return sum(w.startswith("@") for w in words) > 1


def _carrying_rule(
    target: Target, items_stated: tuple[frozenset[str], ...]
) -> Callable[[frozenset[str]], bool] | None:
    """Which parts may carry one evidence message (None: any part, by its score alone).

    A message stating items of the gold answer is carried only by a part stating one of them ("a dog
    named Pepper" does not carry "labrador"). A message stating none, when others state some, is
    needed only for the items no message states (a paraphrase: "my school event" for "school
    speech"): a part must share a word with one of those, and there is none when every item is stated
    elsewhere ("I bought it in Paris" does not carry "snakes", which another message states).
    """
    if items_stated:
        return lambda words: any(item <= words for item in items_stated)
    if not target.answer_required:
        return None
    unstated = target.unstated_words
    return lambda words: any(item & words for item in unstated)


def answer_counts(gold: Iterable[str]) -> frozenset[str]:
    """The numbers a gold answer counts with ("8 years old", "two dogs"), not those of its dates."""
    return frozenset().union(*(numbers_in(content_stems(strip_dates(g))) for g in gold))


def _counting(
    counted: frozenset[str], carries: Callable[[frozenset[str]], bool] | None
) -> Callable[[frozenset[str]], bool]:
    """A carrying rule that also asks for the number the message states: a count is tied to its noun,
    and a part with the same noun and another number is another fact."""
    return lambda words: bool(counted & numbers_in(words)) and (carries is None or carries(words))


def _untagged_score(
    key: frozenset[str],
    stating: tuple[Statement, ...],
    words: frozenset[str],
    subject: frozenset[str] = frozenset(),
    stamp_words: frozenset[str] = frozenset(),
) -> float:
    """How well a part without a message id carries one evidence message (see `score_words`).

    `stamp_words`: the words of a calendar date that only the message's stamp gives; a part's own
    stamp shares them with every line of that day, so they count for nothing: what happened must be
    shared ("[said on 9 June 2023]" on "friends ... are my rocks" is no "we met up last week")."""
    if not stating:  # a target made without statements: the key's overlap
        return len(key & words) / len(key)
    shared = words - stamp_words
    names_subject = bool(subject & words)
    return max(
        (
            min(1.0, len(s.words & shared) / _needed(s, names_subject))
            for s in stating
            if s.words and (s.answer & words or not s.answer)
        ),
        default=0.0,
    )


#: Month names, stemmed: a stated answer naming one (or a year) is a calendar date, not a duration.
_MONTHS = content_stems(" ".join(calendar.month_name[1:]))


def _stamp_date(stated: frozenset[str]) -> frozenset[str]:
    """The stated words when they are a calendar date ("9 June 2023"), none for a duration ("3 years")."""
    return stated if stated & _MONTHS or any(YEAR.match(w) for w in stated) else frozenset()


#: A part stating the answer about the person asked about shows its source by half of the statement's
#: words, two at most: a long sentence says more than any fact drawn from it ("Pilchard, my old
#: dachshund, is asleep in the van" gives "Fenwick has an elderly dachshund named Pilchard"). A part
#: naming no one, or someone else ("Omar's dog named Pepper"), needs half of them all.
_WORDS_SHOWING_SOURCE = 2


def _needed(statement: Statement, names_subject: bool) -> int:
    """The count of shared words that scores 1.0 (half of it reaches the default threshold)."""
    if statement.answer and names_subject:
        return min(len(statement.words), 2 * _WORDS_SHOWING_SOURCE)
    return len(statement.words)
