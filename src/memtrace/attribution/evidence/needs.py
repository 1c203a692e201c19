"""What a failed question needs: each item of its gold answer and the turns that state it.

The annotated evidence turn often does not state the answer (a bare "Yeah, good idea!", the other
speaker's question, a plan that a later turn says came true). So each item of the gold answer is
looked for in the annotated turns first, then in their sessions, then in the whole conversation
before the question; the turns found are what the flow method traces. A list answer needs every
item: a context holding some of them is a partial carrier. A gold answer that names something no
turn mentions is suspected to be an annotation error (LoCoMo has some), never a memory failure.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...graph import Case, GraphQueries, VariableVersion
from ...text import porter_stem, tokenize
from .dated_turns import turns_naming_date
from .locate import message_text, message_versions, run_speakers, session_of, turn_speakers
from .paraphrased import paraphrasing_turns
from .unsupported import unmentioned_name
from .words import (
    IRREGULAR_FORMS,
    STAMP,
    answer_item_texts,
    answer_items,
    asks_about_plan,
    content_stems,
    numbers_in,
    people_asked_about,
    plan_aware_stems,
    unplanned,
)

_NUMBER_WORDS = frozenset(
    re.findall(
        r"\w+", "one two three four five six seven eight nine ten eleven twelve once twice first second third"
    )
)


@dataclass(frozen=True, slots=True)
class ItemNeed:
    """One thing the answer needs and the turns that state it (`where`: annotated, session, conversation).

    `item` is an item of the gold answer; None when the answer is inferred from several turns and the
    need is one of those turns (`label` names it either way).
    """

    label: str
    item: str | None
    words: frozenset[str]
    messages: tuple[VariableVersion, ...]
    where: str
    #: Found by a relative date the turns say ("last month"), not by the item's words.
    by_date: bool = False
    #: Said in other words by each of `messages` (paraphrased.py): lost only when the last goes.
    paraphrased: bool = False


@dataclass(slots=True)
class AnswerNeeds:
    """The items of a gold answer that turns state, those none states, and why the gold looks unsupported."""

    items: list[ItemNeed] = field(default_factory=list)
    unstated: list[str] = field(default_factory=list)
    #: Items of `unstated` that only another speaker's question names: mentioned, but not stated.
    only_asked: list[str] = field(default_factory=list)
    #: Items no turn states as worded, traced through the annotated turns naming a word of them.
    loosely_stated: list[str] = field(default_factory=list)
    #: Set when the gold answer names something no turn of the conversation mentions.
    unsupported: str | None = None

    @property
    def messages(self) -> list[VariableVersion]:
        """Every turn stating an item, once, in seq order."""
        seen = {v.id: v for need in self.items for v in need.messages}
        return sorted(seen.values(), key=lambda v: v.seq)

    @property
    def found_elsewhere(self) -> bool:
        """Whether some item is stated only by turns the dataset did not annotate."""
        return any(need.where != "annotated" for need in self.items)


def _turn_words(graph: GraphQueries) -> list[tuple[VariableVersion, frozenset[str]]]:
    """Every turn of the run with its content words (no '[said on ...]' stamp), cached per graph."""

    def build() -> list[tuple[VariableVersion, frozenset[str]]]:
        turns = message_versions(graph)
        values = graph.values(turns)
        return [(v, plan_aware_stems(STAMP.sub("", message_text(values[v.id])))) for v in turns]

    return graph.derived("turn-words", build)


def copy_states(item: str, text: str) -> bool:
    """Whether a turn restates the item itself, not only its words: a phrase as written ("the support
    group has...") or a name as a name ("Melbourne"); "inspired by Witcher 3" is no copy of "inspired"."""
    words = item.split()
    if len(content_stems(item)) > 1:
        return phrase_of(item) in phrase_of(text)
    named = {t.strip(".,!?;:'\"()").casefold() for t in text.split()[1:] if t[:1].isupper()}
    return bool(words) and {w.casefold() for w in words if w[:1].isalpha()} <= named


def phrase_of(text: str, names: frozenset[str] = frozenset()) -> str:
    """The text's content words, stemmed as `content_stems` stems them, in order (a phrase of an item
    must appear as written); without the stems of `names` ("losing Jon's job" says "lose job")."""
    stems = (porter_stem(IRREGULAR_FORMS.get(t, t)) for t in tokenize(text, stopwords=True))
    return " " + " ".join(s for s in stems if s not in names) + " "


def _is_count(words: frozenset[str]) -> bool:
    """A bare number ("3", "two"): it counts something and any line may hold the word, so only the
    annotated turns can show where it comes from."""
    return all(w.isdigit() or w in _NUMBER_WORDS for w in words)


def answer_needs(
    graph: GraphQueries, case: Case, annotated: list[VariableVersion], question_seq: int
) -> AnswerNeeds:
    """Each gold item with every turn stating it, the annotated ones first, then their sessions', then
    any turn before the question that also shares a word of the question (the relation asked about).

    An item of several words that no turn states whole is looked for as a paraphrase, in the annotated
    turns and their sessions only: half its words, two at least.
    """
    turns = [(v, words) for v, words in _turn_words(graph) if v.seq < question_seq]
    asked = content_stems(case.question)
    annotated_ids = {v.id for v in annotated}
    sessions = {s for s in (session_of(v) for v in annotated) if s is not None}
    near = [(v, w) for v, w in turns if v.id in annotated_ids or session_of(v) in sessions]
    needs = AnswerNeeds()
    # A question about a plan or a wish ("what does John want to teach...") is answered by the plan.
    done_first = not asks_about_plan(case.question)
    subjects = people_asked_about(case.question, set(turn_speakers(graph).values()))
    for gold in case.gold:
        for text, words in answer_item_texts(gold):
            if any(other.words == words for other in needs.items):
                continue

            stating = functools.partial(
                _stating,
                text,
                words,
                turns,
                near,
                annotated_ids,
                sessions,
                asked,
                done_first,
                turn_speakers(graph),
                lambda v: message_text(graph.value(v.id)),
            )
            need = stating(subjects)
            if need is None and subjects and stating(frozenset()) is not None:
                needs.only_asked.append(text)
            if need is None or need.where != "annotated":
                dated = turns_naming_date(graph, text, turns, annotated_ids, sessions, asked)
                if dated is not None and dated[0] == "annotated":
                    # The annotated turns say it by a relative date ("next month" for "August"): they
                    # are traced, as for an answer no turn states, not a later turn naming the word.
                    need = None
                elif need is None and dated is not None:
                    where, picked = dated
                    need = ItemNeed(text, text, content_stems(text), tuple(picked), where, by_date=True)
            if need is None:
                needs.unstated.append(text)
            else:
                needs.items.append(need)
    if case.category != "open-domain":  # open-domain questions are answered from world knowledge
        needs.unsupported = unmentioned_name(
            case, [w for _, w in turns], len(needs.items) + len(needs.only_asked)
        ) or _about_another_person(graph, case, annotated, needs.items)
    if needs.items and needs.unstated and needs.unsupported is None:
        # An item said in other words is traced through the annotated turns naming part of it; it
        # counts as stated for nothing above (a paraphrase does not make a gold name supported).
        used = {v.id for need in needs.items for v in need.messages}
        near_annotated = [(v, w) for v, w in turns if v.id in annotated_ids]
        for text, naming in paraphrasing_turns(needs.unstated, near_annotated, used, asked):
            names = ", ".join(v.name for v in naming)
            needs.items.append(
                ItemNeed(f"{text} ({names})", None, frozenset(), naming, "annotated", paraphrased=True)
            )
            needs.unstated.remove(text)
            needs.loosely_stated.append(text)
            if text in needs.only_asked:
                needs.only_asked.remove(text)
    return needs


def _stating(
    text: str,
    words: frozenset[str],
    turns: list[tuple[VariableVersion, frozenset[str]]],
    near: list[tuple[VariableVersion, frozenset[str]]],
    annotated: set[str],
    sessions: set[str],
    asked: frozenset[str],
    done_first: bool = True,
    speakers: dict[str, str] | None = None,
    texts: Callable[[VariableVersion], str] = lambda v: "",
    subjects: frozenset[str] = frozenset(),
) -> ItemNeed | None:
    """The turns stating one item: the annotated ones, else their sessions', else the conversation's;
    None if none does. Beyond the annotated turns, another speaker asking about it ("Have you read
    all of George R. R. Martin's books?", asked about Tim) states nothing."""
    speakers = speakers or {}
    stating = [(v, w) for v, w in turns if words <= unplanned(w)]
    done_ids = {v.id for v, w in stating if words <= w}  # said as done, not only planned

    def states(v: VariableVersion) -> bool:
        return not subjects or speakers.get(v.id) in subjects or not asks_only(texts(v), words)

    found: dict[str, tuple[VariableVersion, str]] = {}
    stages = [("annotated", [v for v, _ in stating if v.id in annotated])]
    if not _is_count(words):  # a bare number is on many lines: only the annotated turns show its source
        stages.append(("session", [v for v, _ in stating if session_of(v) in sessions and states(v)]))
        stages.append(("conversation", [v for v, w in stating if (w - words) & asked and states(v)]))
    # The nearest turns that state it (a later look-alike is another event); a plan ("thinking about
    # kayaking") gives way to a turn saying it happened, wherever that turn is.
    for done in (True, False) if done_first else (False,):
        for index, (where, chosen) in enumerate(stages):
            picked = [v for v in chosen if not done or v.id in done_ids]
            if picked:
                found = {v.id: (v, where) for v in picked}
                if where == "annotated" and len(stages) > 1:
                    # The same speaker saying it again in those sessions is a copy of the same fact:
                    # the item is lost only when the last copy goes (a trim drops one line, not both).
                    # The other speaker echoing it ("Kickboxing is a great way...") is a reply.
                    said_by = {speakers.get(v.id) for v in picked}
                    copies = [
                        v
                        for v in stages[index + 1][1]
                        if (not done or v.id in done_ids)
                        and speakers.get(v.id) in said_by
                        and copy_states(text, texts(v))
                    ]
                    found.update({v.id: (v, where) for v in copies if v.id not in found})
                break
        if found:
            break
    if not found and len(words) >= 3:  # a paraphrase of a longer item, near the annotated turns
        least = max(2, (len(words) + 1) // 2)
        counts = numbers_in(words)  # "Max is 8 years old" paraphrases no "Luna is 5 years old"
        for v, w in near:
            if len(words & w) >= least and counts <= numbers_in(w):
                found.setdefault(v.id, (v, "annotated" if v.id in annotated else "session"))
    if not found:
        return None
    ordered = list(found.values())
    return ItemNeed(text, text, words, tuple(v for v, _ in ordered), ordered[0][1])


#: Where a sentence ends: not after an initial ("George R. R. Martin").
_SENTENCE_END = re.compile(r"(?<![\s.][A-Z])(?<!^[A-Z])[.!?]+(?=\s|$)")
_BRACKETED = re.compile(r"\s*\[[^\]]*\]")


def _sentences(text: str) -> list[str]:
    """A turn's sentences, without its bracketed captions and stamps."""
    body = _BRACKETED.sub("", text)
    ends = [*(m.end() for m in _SENTENCE_END.finditer(body)), len(body)]
    return [s for s in (body[start:end].strip() for start, end in itertools.pairwise([0, *ends])) if s]


def asks_only(text: str, words: frozenset[str]) -> bool:
    """Whether every sentence of a turn holding all of an item's words is a question."""
    holding = [s for s in _sentences(text) if words <= unplanned(plan_aware_stems(s))]
    return bool(holding) and all(sentence.endswith("?") for sentence in holding)


def _addresses(body: str, gold: frozenset[str], handed_back: Callable[[], bool]) -> bool:
    """Whether a turn speaks of the one it addresses: "you" in a statement, or in a question about
    the answer ("How was your hike at Yosemite?"). A question handing the talk back ("Do you have any
    study tricks?") says nothing of them when `handed_back()` (their reply told something else); the
    reply is looked up only for such a question."""
    return any(
        _SECOND_PERSON.search(s) and (not s.endswith("?") or content_stems(s) & gold or not handed_back())
        for s in _sentences(body)
    )


def _reply_states(
    graph: GraphQueries, turn: VariableVersion, person: str, items: list[frozenset[str]]
) -> bool:
    """Whether the next turn of `person` after `turn` states an item of the gold ("Seven years now"
    for "7 years"): the annotated turn then handed them the question they answered."""
    said_by = turn_speakers(graph)
    later = sorted((v for v in message_versions(graph) if v.seq > turn.seq), key=lambda v: v.seq)
    reply = next((v for v in later if said_by.get(v.id) == person), None)
    if reply is None:
        return False
    words = _as_digits(content_stems(message_text(graph.value(reply.id))))
    return any(_as_digits(item) <= words for item in items)


def _as_digits(words: frozenset[str]) -> frozenset[str]:
    """The words with number words as digits ("seven years" as "7 years")."""
    return frozenset(min(numbers_in(frozenset({w})), default=w) for w in words)


_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|my|me|mine|we|our|us)\b", re.IGNORECASE)
_PLURAL_FIRST_PERSON = re.compile(r"\b(?:we|we're|we've|our|us|ours)\b", re.IGNORECASE)
_SECOND_PERSON = re.compile(r"\b(?:you|your|you're|you've|yours)\b", re.IGNORECASE)


def _about_another_person(
    graph: GraphQueries,
    case: Case,
    annotated: list[VariableVersion],
    stated: Sequence[ItemNeed] = (),
) -> str | None:
    """The question asks about one speaker, and every annotated turn is the other speaker talking about
    themself (first person, neither naming the one asked about nor addressing them): the gold answer is
    that other person's fact, unless a turn of the one asked about states it (a need of `stated`, by
    its words or its date; a paraphrase is no such statement)."""
    speakers = {name for name in run_speakers(graph) if name}
    asked = content_stems(case.question)
    named = {name for name in speakers if content_stems(name) & asked}
    # Naming both, the question asks about the one it names first ("Why did Jolene reschedule their
    # meeting with Deborah?" asks about Jolene), or about both when it joins them ("Deborah and Jolene").
    asked_about = people_asked_about(case.question, named)
    if len(asked_about) != 1 or not annotated:
        return None
    (subject,) = asked_about
    said_by = turn_speakers(graph)
    words_of = {v.id: words for v, words in _turn_words(graph)} if stated else {}
    for need in stated:  # their own turn says it: the annotation points at the wrong turn
        own = [v for v in need.messages if said_by.get(v.id) == subject]
        if any(need.by_date or need.words <= words_of.get(v.id, frozenset()) for v in own):
            return None
    values = graph.values(annotated)
    gold = frozenset().union(*(content_stems(g) for g in case.gold)) - asked
    items = [words for g in case.gold for words in answer_items(g)]  # none for a bare yes or no
    others = set()
    for version in annotated:
        speaker, _, body = message_text(values[version.id]).partition(": ")
        if speaker not in speakers or speaker == subject:
            return None

        def handed_back(version: VariableVersion = version) -> bool:
            return bool(items) and not _reply_states(graph, version, subject, items)

        if content_stems(subject) & content_stems(body) or _addresses(body, gold, handed_back):
            return None
        if not _FIRST_PERSON.search(body):
            return None
        if len(named) > 1 and _PLURAL_FIRST_PERSON.search(body):  # "we can try it together": both
            return None
        others.add(speaker)
    names = ", ".join(v.name for v in annotated)
    return (
        f"the question asks about {subject}, but the evidence ({names}) is {' and '.join(sorted(others))}"
        " speaking about themself"
    )
