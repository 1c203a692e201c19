"""The checks verification makes on its own, not trusting the attributor: which part of a context
carries the evidence, and whether a replayed context or memory does.

All of them score against the same target the flow method builds (the evidence messages and gold
answer of the case), one part at a time: a line of a window, an item of a retrieved list. A context
"holds the information" only through a part that carries it, never through words spread over many.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..graph import Case, GraphQueries, Workspace
from ..graph.journal import ingest_journal, journal_path
from ..graph.values import value_text
from .anatomy import case_anatomy
from .evidence import dated_message
from .model import Attribution
from .support import OverlapScorer, SupportScorer, Target, content_stems

#: How many characters of a carrying part are kept in a path step and a verdict.
PART_CHARS = 400


@dataclass(slots=True)
class CarryingPart:
    """The part of a value that carries the evidence best, its support, and whether it states the answer."""

    text: str
    support: float
    states_answer: bool
    var_id: str | None = None


def evidence_target(
    graph: GraphQueries, case: Case, attribution: Attribution, scorer: SupportScorer | None = None
) -> Target | None:
    """The case's critical information as the attribution's path names it; None without evidence."""
    scorer = scorer or OverlapScorer()
    steps = [s for s in attribution.path if s.kind == "var" and s.note.startswith("evidence")]
    versions = [graph.var(s.id) for s in steps if graph.has_var(s.id)]
    if not versions:
        return None
    target = scorer.prepare(case.question, case.gold, [(v.name, dated_message(graph, v)) for v in versions])
    return None if target.empty else target


def parts_of(value: Any) -> list[str]:
    """A value as the parts that can carry information on their own: list items, text lines."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [part for item in value for part in parts_of(item)]
    if isinstance(value, dict) and isinstance(value.get("memory"), str):
        return [value["memory"]]
    text = value_text(value)
    return [line for line in text.split("\n") if line.strip()]


def answer_in_evidence(graph: GraphQueries, case: Case, attribution: Attribution) -> bool:
    """Whether an evidence message states the gold answer outright (then a carrying part must too).

    When it does not (a date resolved from "yesterday", a paraphrase), carrying the evidence
    message's content is what a part can do.
    """
    steps = [s for s in attribution.path if s.kind == "var" and s.note.startswith("evidence")]
    return any(
        graph.has_var(s.id) and states_answer(dated_message(graph, graph.var(s.id)), case.gold) for s in steps
    )


def carrying_part(
    target: Target,
    values: list[tuple[str | None, Any]],
    gold: list[str],
    scorer: SupportScorer | None = None,
    *,
    require_answer: bool = False,
) -> CarryingPart | None:
    """The best-supported part among `(var id, value)` pairs when it reaches the threshold, else None.

    With `require_answer`, only parts stating the gold answer count: "Clara adopted a dog named
    Pepper" shares "dog" with the evidence but does not carry "labrador".
    """
    scorer = scorer or OverlapScorer()
    best: CarryingPart | None = None
    for var_id, value in values:
        raw = value if isinstance(value, (list, tuple)) else [value]
        for item in raw:
            for part in parts_of(item):
                if require_answer and not states_answer(part, gold):
                    continue
                support = scorer.score(target, item if isinstance(item, dict) else part)
                if best is None or support > best.support:
                    best = CarryingPart(part[:PART_CHARS], support, states_answer(part, gold), var_id)
    return best if best is not None and best.support >= scorer.threshold else None


def states_answer(text: str, gold: list[str]) -> bool:
    """Whether a text holds every content word of some gold answer (stemmed)."""
    words = content_stems(text)
    return any(content_stems(g) and content_stems(g) <= words for g in gold)


def context_part(
    graph: GraphQueries,
    case: Case,
    target: Target,
    scorer: SupportScorer | None = None,
    *,
    require_answer: bool = False,
) -> CarryingPart | None:
    """The part of the answer step's context (in the recorded run) that carries the evidence."""
    anatomy = case_anatomy(graph, case)
    values = graph.values(anatomy.context_vars)
    pairs = [(v.id, values[v.id]) for v in anatomy.context_vars]
    return carrying_part(target, pairs, case.gold, scorer, require_answer=require_answer)


def memory_carries_at_question(
    ws: Workspace,
    replay_run: str,
    case_id: str,
    target: Target,
    scorer: SupportScorer | None = None,
    *,
    gold: list[str] | None = None,
) -> bool | None:
    """Whether a replayed run's memory carried the evidence when the question was asked.

    Indexes the replay's journal first (replays are indexed lazily); None when the case is missing.
    """
    scorer = scorer or OverlapScorer()
    ingest_journal(ws.store, journal_path(ws.store.path.parent, replay_run))
    graph = ws.graph(replay_run)
    case = next((c for c in ws.cases(replay_run) if c.id == case_id), None)
    if case is None:
        return None
    question_seq = case_anatomy(graph, case).question_seq
    values = graph.memory_values_at(question_seq - 1)
    if gold is not None:  # the answer must be stated by the carrying part
        return carrying_part(target, list(values.items()), gold, scorer, require_answer=True) is not None
    return any(scorer.score(target, value) >= scorer.threshold for value in values.values())
