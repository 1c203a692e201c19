"""Replaying a repair with the operations after it behaving ideally, as DESIGN's criterion assumes.

A plain repair replay runs every later operation for real, and some of them lose the restored
evidence again: a window's next trim drops the oldest line once more, a second retrieval round that
fuses rankings pushes the repaired first round's evidence out. Then the repair is replayed once
more with just those later operations idealised for this evidence (later trims keep the restored
lines; the final retrieval round ranks the evidence first), everything else running for real, and
the verdict says so. The plain replay's outcome is reported beside it.
"""

from __future__ import annotations

from typing import Any

from ...errors import MemtraceError, UntrustedSnapshotError
from ...graph import Case, GraphQueries, Workspace
from ...systems.replay import replay
from ...text import untag
from ...vocabulary import Verdict
from ..evidence.anatomy import case_anatomy
from ..evidence.support import Target, carrying_part
from ..model import Attribution, PathRole
from .ideal_retrieval import ideal_context
from .inherited import inherited_patches_lost
from .items import carriers_of_missing, check_for, item_line, stating_turns
from .oracle import answer_step_fault, memory_as_context
from .verdicts import Verification, placed_turns_only

#: The plain replay's shortfalls that idealising later operations addresses, and how.
_HOW = {
    "loss-recurs": ("kept-by-later-trims", "later trims of the unit keeping the restored line(s)"),
    "repair-overridden": ("kept-by-later-rounds", "the final retrieval round ranking the evidence first"),
    # The repair reached the context but a later round pushed out another item of the answer.
    "items-still-lacking": ("kept-by-later-rounds", "the final retrieval round ranking the evidence first"),
    "retrieval-missed-restored": (
        "kept-by-later-retrieval",
        "the retrieval ranking the restored fact first (an ideal retrieval)",
    ),
}


def later_ops_ideal_patch(
    graph: GraphQueries,
    case: Case,
    attribution: Attribution,
    patch: dict[str, Any],
    why: str,
    replayed: tuple[GraphQueries, Case] | None = None,
) -> dict[str, Any] | None:
    """The repair patch extended so the later operations that lost the evidence keep it; None if none.

    `replayed` (the plain repair's replay) addresses the later operations when the repair added outputs,
    which moves every later operation's id: the same operations, re-executed, carry those ids."""
    op_id = attribution.op_id
    if op_id is None or why not in _HOW:
        return None
    if why == "loss-recurs":
        step = attribution.step(PathRole.LAST_CARRIER)
        value = graph.value(step.id) if step is not None else None
        if step is None or not isinstance(value, list):
            return None
        wanted = {s.id.rsplit("@", 1)[0] for s in attribution.steps(PathRole.EVIDENCE)}
        wanted |= stating_turns(check_for(graph, case))  # every item's turn, not only the repaired one
        lines = [item for item in value if untag(str(item))[0] in wanted]
        if not lines:
            return None
        return {**patch, op_id: {**patch[op_id], "keep": {step.id.rsplit("@", 1)[0]: lines}}}
    recorded = graph
    if why == "retrieval-missed-restored" and replayed is not None:
        graph, case = replayed  # later operations as the repaired run executes them
    final = case_anatomy(graph, case).retrieval_op
    if final is None or final.id == op_id:
        return None
    outputs = [v for v in graph.outputs(final.id) if v.category == "retrieved"]
    if not outputs:
        return None
    items = list(graph.value(outputs[-1].id) or [])
    if why == "retrieval-missed-restored":  # the facts the extraction repair added, ranked first
        memories = [str(fact) for fact in _added_facts(recorded, op_id, patch.get(op_id, {}))]
    else:
        held = attribution.step(PathRole.LIVE_AT_QUESTION)
        wanted = [graph.value(held.id)] if held is not None else []
        wanted += carriers_of_missing(graph, case, check_for(graph, case))
        memories = list(dict.fromkeys(memory_as_context(value) for value in wanted))
    if not memories:
        return None
    repaired = ideal_context(items, memories, check_for(graph, case))
    ideal = {**patch, final.id: {"outputs": {outputs[-1].name: repaired}}}
    # An ideal round that found the evidence is enough: a sufficiency check after it (EverMemOS's)
    # would otherwise call a second round that fuses rankings and may push the evidence out again.
    answer = case_anatomy(graph, case).answer_op
    for op in graph.ops_by_category("retrieval"):
        if final.seq < op.seq and (answer is None or op.seq < answer.seq):
            decided = [v for v in graph.outputs(op.id) if v.name == "sufficiency"]
            if decided:
                enough = {"sufficient": True, "reason": "ideal: the evidence was retrieved"}
                ideal[op.id] = {"outputs": {decided[0].name: enough}}
    return ideal


def _added_facts(graph: GraphQueries, op_id: str, repair: dict[str, Any]) -> list[Any]:
    """What an extraction repair added to an operation's outputs (each list grown past its recording)."""
    recorded = {v.name: graph.value(v.id) for v in graph.outputs(op_id)}
    added: list[Any] = []
    for name, value in (repair.get("outputs") or {}).items():
        before = recorded.get(name)
        if not isinstance(value, list) or not isinstance(before, list):
            continue
        for fact in value[len(before) :]:
            added.append(fact.get("text") if isinstance(fact, dict) else fact)
    return [fact for fact in added if fact]


def replay_with_ideal_later_ops(
    ws: Workspace,
    graph: GraphQueries,
    attribution: Attribution,
    case: Case,
    target: Target,
    patch: dict[str, Any],
    llm: Any,
    shortfall: str | None = None,
) -> Verification | None:
    """Replay `patch` (from `later_ops_ideal_patch` for the plain replay's `shortfall`); a verdict when
    the evidence arrives (not verifiable when it is an inferred answer's turns these ideal operations
    placed and the answer did not flip), else None."""
    why, how = _HOW[shortfall or _kind(patch, attribution)]
    try:
        result = replay(ws, attribution.run_id, patch, cases=[case.id], llm=llm)
    except UntrustedSnapshotError:
        raise  # a tampered workspace stops verification: it is not one unverifiable claim
    except MemtraceError:
        return None
    if not set(patch) <= set(result.patched) | {attribution.op_id}:
        return None  # an idealised operation did not run as addressed: nothing is shown
    if inherited_patches_lost(ws, attribution, result.patched):
        return None  # the run's own patches (an injected fault) were not applied again
    answered = result.case(case.id)
    delivered = carrying_part(target, [(None, answered.context)])
    check = check_for(graph, case)
    replayed = list(answered.context)
    # Confirmed only when the judge's rule finds every item too (flow's own rule confirms nothing).
    if delivered is None or not check.has_items or check.lacking(replayed):
        return None
    placebo = _placebo(ws, graph, attribution, case, patch, llm) if why == "kept-by-later-trims" else None
    if placebo is not None:
        return placebo
    checked = [
        f"repair replayed again with {how} (ideal later operations); replayed {result.run_id}",
        f"the replayed context carries the evidence: {delivered.text!r} (support {delivered.support:.2f});"
        f" {item_line(check, replayed)}",
        f"replayed answer {answered.prediction!r}: {'correct' if answered.correct else 'still wrong'}",
    ]
    outcome = Verification(
        attribution,
        Verdict.ANSWER_CONFIRMED if answered.correct else Verdict.FLOW_CONFIRMED,
        f"with {how}, the evidence reaches the answer's context"
        + ("; the answer flips" if answered.correct else "; the answer step still fails"),
        result.run_id,
        answered.prediction,
        flow_confirmed=True,
        answer_confirmed=answered.correct,
        checked=checked,
        why=why,
    )
    answer_op = case_anatomy(graph, case).answer_op
    if not answered.correct and answer_op is not None:
        outcome.second_faults.append(
            answer_step_fault(answer_op.id, answered.prediction, result.run_id, "repair replay")
        )
    if check.turns and not answered.correct:  # the idealised operations placed the turns themselves
        return placed_turns_only(outcome)
    return outcome


def _placebo(
    ws: Workspace,
    graph: GraphQueries,
    attribution: Attribution,
    case: Case,
    patch: dict[str, Any],
    llm: Any,
) -> Verification | None:
    """The same ideal later trims without the repair: when they alone deliver every item, the claimed
    trim lost nothing the answer needed (another line still held it), so it was not decisive."""
    op_id = attribution.op_id or ""
    keep = patch.get(op_id, {}).get("keep") or {}
    check = check_for(graph, case)
    if not keep or not check.complete:  # "every item" needs every part of the answer checkable
        return None
    unit = next(iter(keep))
    claimed = graph.op(op_id)
    later = next(
        (
            op
            for version in graph.versions(unit)
            if version.seq > claimed.seq
            for op in graph.producers(version.id)
            if op.name == claimed.name and op.seq > claimed.seq
        ),
        None,
    )
    if later is None:
        return None
    try:
        result = replay(ws, attribution.run_id, {later.id: {"keep": keep}}, cases=[case.id], llm=llm)
    except UntrustedSnapshotError:
        raise
    except MemtraceError:
        return None
    replayed = list(result.case(case.id).context)
    if check.lacking(replayed):
        return None  # without the repair some item is lost: the claimed trim was needed
    return Verification(
        attribution,
        Verdict.REFUTED,
        f"placebo: with the claimed {op_id} left as recorded and only the later trims ideal, every item"
        " still reaches the answer's context, so the claimed trim lost nothing the answer needed",
        result.run_id,
        result.case(case.id).prediction,
        checked=[
            f"placebo replay {result.run_id}: {op_id} as recorded, later trims from {later.id} keeping the"
            f" same lines; {item_line(check, replayed)}"
        ],
        why="placebo-delivers",
    )


def _kind(patch: dict[str, Any], attribution: Attribution) -> str:
    """Which idealisation a patch carries: kept lines on the repaired op, or another op patched."""
    return "loss-recurs" if "keep" in patch.get(attribution.op_id or "", {}) else "repair-overridden"
