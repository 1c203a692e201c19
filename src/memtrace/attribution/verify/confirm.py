"""The checks verification makes on its own, not trusting the attributor: which part of a context
carries the evidence, and whether a replayed context or memory does.

All of them score against the same target the flow method builds (the evidence messages and gold
answer of the case), one part at a time: a line of a window, an item of a retrieved list. A context
"holds the information" only through a part that carries it, never through words spread over many.
"""

from __future__ import annotations

from ...graph import MEMORY_ENTRY, Case, GraphQueries, Workspace
from ...graph.journal import ingest_journal, journal_path
from ...vocabulary import ErrorType
from ..evidence.anatomy import case_anatomy
from ..evidence.support import CarryingPart, OverlapScorer, SupportScorer, Target, carrying_part


def context_part(
    graph: GraphQueries,
    case: Case,
    target: Target,
    scorer: SupportScorer | None = None,
) -> CarryingPart | None:
    """The part of the answer step's context (in the recorded run) that carries the evidence."""
    anatomy = case_anatomy(graph, case)
    values = graph.values(anatomy.context_vars)
    return carrying_part(target, [(v.id, values[v.id]) for v in anatomy.context_vars], scorer)


def memory_carries_at_question(
    ws: Workspace,
    replay_run: str,
    case_id: str,
    target: Target,
    scorer: SupportScorer | None = None,
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
    return carrying_part(target, list(values.items()), scorer) is not None


def placed_by_construction(graph: GraphQueries, case: Case, kind: str) -> bool:
    """Whether a plain repair of this kind puts what it restores into the answer's context with no
    replayed step choosing it: a retrieval repair writes the context itself; an update or deletion
    repair does when the retrieval hands a memory unit over whole (a long-context window)."""
    if kind == ErrorType.RETRIEVAL:
        return True
    if kind not in (ErrorType.UPDATE, ErrorType.DELETION):
        return False
    retrieval = case_anatomy(graph, case).retrieval_op
    if retrieval is None:
        return False
    returned = [graph.value(v.id) for v in graph.outputs(retrieval.id) if v.category == "retrieved"]
    units = [v for v in graph.inputs(retrieval.id) if v.category == MEMORY_ENTRY]
    return bool(returned) and any(graph.value(unit.id) == returned[-1] for unit in units)
