"""An item said again elsewhere: the traced turns' copy was lost, but another part still states it.

Flow traces an item through the turns that state it. When every memory carrying those turns is gone
by question time, a part of the answer's context (the answer step then failed for this item) or a
memory live at question time (the retrieval missed it) may still state the item in other words of
the same fact: "James started introducing Max, Daisy and the new pup Ned" for the dogs of D1:14.
Only a part that states the whole item as written and is tied to the question counts, so a
look-alike ("created a world inspired by Witcher 3" for "excited and inspired") does not.
"""

from __future__ import annotations

from collections.abc import Callable

from ...graph import Case, GraphQueries, VariableVersion
from ...vocabulary import ErrorType
from ..evidence.anatomy import CaseAnatomy
from ..evidence.needs import copy_states, phrase_of
from ..evidence.statements import WHEN_WORDS
from ..evidence.support import SupportScorer, Target, carrying_part, exchange_joins, value_parts
from ..evidence.words import (
    answer_item_texts,
    asked_about_words,
    asks_about_plan,
    content_stems,
    plan_aware_stems,
)
from ..model import Attribution, PathRole, PathStep
from .flow_losses import quote

WordsOf = Callable[[GraphQueries, list[VariableVersion]], dict[str, tuple[frozenset[str], ...]]]


def stated_elsewhere(
    graph: GraphQueries,
    case: Case,
    anatomy: CaseAnatomy,
    item: str,
    live: dict[str, VariableVersion],
    words_of: WordsOf,
    speakers: frozenset[str],
) -> tuple[VariableVersion, str] | None:
    """A part of the answer's context, else of a memory live at question time, stating the item and
    tied to the question: the name of whom it asks about when it names one, and words of its topic
    (for an item that is itself a name, a pet or a place, one such word or another item beside it)."""
    words = content_stems(item)
    asked = content_stems(case.question) - words
    siblings = [
        stems for gold in case.gold for _, stems in answer_item_texts(gold) if stems and stems != words
    ]
    if not words or not asked:
        return None
    names = frozenset().union(*(content_stems(name) for name in speakers))
    # When it was said is no tie: every line is stamped with a date ("October 2022").
    topical = frozenset(w for w in asked - names if w not in WHEN_WORDS and not w.isdigit())
    subject = asked_about_words(case.question, speakers) & asked
    phrase = phrase_of(item, names)
    asks_plan = asks_about_plan(case.question)

    def stating(versions: list[VariableVersion]) -> tuple[VariableVersion, str] | None:
        parts = words_of(graph, versions)
        for version in sorted(versions, key=lambda v: v.seq):
            texts: list[str] | None = None  # the parts' texts, read once a part may state the item
            for index, part in enumerate(parts[version.id]):
                if not words <= part or not part & asked:
                    continue
                if texts is None:
                    texts = [t for _, t in value_parts(graph.value(version.id))]
                text = next((t for t in texts if words <= content_stems(t)), None)
                if text is None or (len(words) > 1 and phrase not in phrase_of(text, names)):
                    continue  # "an activist group ... support" is not "support group"
                if subject and not part & subject:
                    continue  # said of someone else, or of no one the question names
                # A phrase needs a word of the question's topic; a single common word ("inspired")
                # two, since one ("gaming") is a look-alike's too; a name ("Pepper and I have been
                # exploring") one, or another item of the same answer beside it ("Max, Daisy and Ned").
                # Only what the line says was done ties it: "hoping to get it on the big screen"
                # is no script shown on the big screen.
                said = part if asks_plan else part & plan_aware_stems(text)
                named = copy_states(item, text) and (
                    said & topical or any(other <= said for other in siblings)
                )
                if named or len(said & topical) >= (1 if len(words) > 1 else 2):
                    # Quote the line that matched: the first line naming the item may be another
                    # (John's "RPG games" beside James's "what makes RPGs so fun").
                    own = len(texts) == len(parts[version.id])
                    return version, texts[index] if own else text
        return None

    inside = {v.id for v in anatomy.context_vars}
    return stating(anatomy.context_vars) or stating([v for v in live.values() if v.id not in inside])


def held_in_context(
    graph: GraphQueries,
    case: Case,
    anatomy: CaseAnatomy,
    item: str,
    part_of: VariableVersion,
    text: str,
    path: list[PathStep],
    method: str,
) -> Attribution:
    """The item is stated in a part of the answer's context: for this item, the answer step failed."""
    answer_op = anatomy.answer_op
    assert answer_op is not None
    path.append(
        PathStep("var", part_of.id, part_of.seq, "in the answer's context", True, text, PathRole.IN_CONTEXT)
    )
    path.append(PathStep("op", answer_op.id, answer_op.seq, "answered wrong from a context holding it", None))
    explanation = (
        f"The context given to {answer_op.name} ({answer_op.id}) stated {quote(item)} in {quote(text)}"
        f" ({part_of.id}), yet it answered {quote(case.prediction or '?')}."
    )
    return Attribution(
        graph.run.id, case.id, answer_op.id, ErrorType.RESPONSE, 0.7, explanation, method, path
    )


def held_jointly_in_context(
    graph: GraphQueries,
    case: Case,
    anatomy: CaseAnatomy,
    target: Target,
    item: str,
    scorer: SupportScorer,
    path: list[PathStep],
    method: str,
) -> Attribution | None:
    """No memory unit holds it alone, but facts of one exchange in the answer's context do together
    (mem0 split "workshops with local schools" and "engineers as guest speakers" out of one turn):
    nothing was lost before the answer step. None when no such facts carry it."""
    if anatomy.answer_op is None:
        return None
    values = graph.values(anatomy.context_vars)
    for version in anatomy.context_vars:
        value = values[version.id]
        joins = exchange_joins(value) if isinstance(value, list) else []
        held = carrying_part(target, [(version.id, text) for text in joins], scorer)
        if held is not None:
            return held_in_context(graph, case, anatomy, item, version, held.text, path, method)
    return None


def held_jointly_in_memory(
    graph: GraphQueries,
    evidence: list[VariableVersion],
    live: dict[str, VariableVersion],
    target: Target,
    scorer: SupportScorer,
    words_of: WordsOf,
) -> list[VariableVersion]:
    """No memory unit holds the item alone, but units drawn from its turn do together, at question
    time (mem0 wrote "a couch that can sit multiple people ... really fluffy" and "a blanket that has a
    little bit of weight" as two facts of one turn, for "fluffy blanket"). Empty when none do."""
    if not hasattr(scorer, "score_words"):
        return []
    live_by_id = {v.id: v for v in live.values()}
    for turn in evidence:
        drawn = [
            live_by_id[node.id]
            for node in graph.descendants(turn.id, depth=_DRAWN_DEPTH)
            if node.kind == "var" and node.id in live_by_id
        ]
        if len(drawn) < 2:
            continue
        parts = words_of(graph, drawn)
        joined = frozenset().union(*(words for v in drawn for words in parts[v.id]))
        if scorer.score_words(target, (joined,)) >= scorer.threshold:
            return sorted(drawn, key=lambda v: v.seq)
    return []


#: From a turn to the memory written from it: mem0's turn -> extraction -> facts -> decision -> unit
#: is four hops, EverMemOS's buffer and memcell add two.
_DRAWN_DEPTH = 6
