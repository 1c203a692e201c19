"""What a claim must be for its repair to mean anything, read from the graph and the case alone.

A claim is an operation and an error type; the path an attributor adds is its own reasoning, which a
verifier must not take on trust (a baseline's or an imported claim has none). So the operation is
placed against the case first (an answer step is this case's, a retrieval ran for this question, a
memory operation ran before it) and the steps a repair needs are found in the graph when the path does
not name them: the unit version an update replaced, the turns an extraction read, the live memory a
retrieval left out. A claim whose operation never touched the information is refuted, not repaired:
an ideal extraction of anything would add the fact, so the repair alone proves nothing.
"""

from __future__ import annotations

from dataclasses import replace

from ...graph import Case, GraphQueries, Operation, VariableVersion
from ...vocabulary import ErrorType
from ..evidence.anatomy import case_anatomy
from ..evidence.target import annotated_turns
from ..model import Attribution, PathRole, PathStep
from .items import ItemCheck, carrier_versions

#: Categories of the variables that are memory units (an update's or a deletion's work).
_UNIT_CATEGORIES = ("memory_entry",)


def out_of_place(graph: GraphQueries, case: Case, attribution: Attribution) -> tuple[str, str] | None:
    """(why, reason) when the claimed operation cannot be where this case went wrong, by when it ran."""
    anatomy = case_anatomy(graph, case)
    answer = anatomy.answer_op
    if answer is None or attribution.op_id is None or not graph.has_op(attribution.op_id):
        return None
    op = graph.op(attribution.op_id)
    kind = attribution.error_type
    if kind == ErrorType.RESPONSE and op.id != answer.id:
        return "not-the-answer-step", f"{op.id} is not this case's answer step ({answer.id})"
    if kind == ErrorType.RETRIEVAL and not anatomy.question_seq <= op.seq < answer.seq:
        return (
            "not-this-question",
            f"{op.id} did not retrieve for this question (it ran outside seqs {anatomy.question_seq}"
            f"-{answer.seq})",
        )
    # After the retrieval that fed the answer (or the answer itself), not after `question_seq`: an
    # outer operation wrapping a whole conversation makes the question stage look like it began early.
    read_at = (anatomy.retrieval_op or answer).seq
    memory_work = (ErrorType.EXTRACTION, ErrorType.UPDATE, ErrorType.DELETION)
    if kind in memory_work and op.seq >= read_at:
        return "after-the-question", f"{op.id} ran after memory was read for this question ({read_at})"
    return None


def with_derived_path(
    graph: GraphQueries, case: Case, attribution: Attribution, check: ItemCheck, *, keep_own: bool = True
) -> Attribution | None:
    """A copy of a claim carrying the steps its repair needs as the graph shows them (the case's
    annotated turns as evidence, and by type the replaced unit version, the turns the operation read,
    or a live memory the context lacks); None when the claim has a path of its own and `keep_own`."""
    if (attribution.path and keep_own) or attribution.op_id is None or not graph.has_op(attribution.op_id):
        return None
    op = graph.op(attribution.op_id)
    kind = attribution.error_type
    path = []
    if kind == ErrorType.EXTRACTION:
        evidence = _read_evidence(graph, case, op, check)
    else:  # read once per case: the run's messages are sorted out of all its variables
        key = ("annotated-turns", case.run_id, case.id)
        evidence = graph.derived(key, lambda: annotated_turns(graph, case))
    if kind in (ErrorType.UPDATE, ErrorType.DELETION):
        kept = _replaced_unit(graph, op, check)
        if kept is not None:
            path.append(_step(kept, f"the unit version it replaced {_FOUND}", PathRole.LAST_CARRIER))
    elif kind == ErrorType.RETRIEVAL:
        held = _live_carrier(graph, case, check)
        if held is not None:
            path.append(_step(held, f"live at question time {_FOUND}", PathRole.LIVE_AT_QUESTION))
    path[:0] = [_step(v, f"evidence {_FOUND}", PathRole.EVIDENCE) for v in evidence]
    return replace(attribution, path=path)


#: The note every step found in the graph carries (what tells a derived path from an attributor's).
_FOUND = "(found in the graph)"


def derived_path(attribution: Attribution) -> bool:
    """Whether the claim's path was found in the graph by `with_derived_path`, not made by its attributor."""
    return bool(attribution.path) and all(step.note.endswith(_FOUND) for step in attribution.path)


def never_touched(
    graph: GraphQueries, case: Case, attribution: Attribution, check: ItemCheck
) -> tuple[str, str] | None:
    """(why, reason) when, by the graph (a derived path), the claimed operation never had the
    information to lose."""
    if not check.complete:  # "held none of it" cannot be said when a part of the answer is unchecked
        return None
    op_id, kind = attribution.op_id, attribution.error_type
    if kind == ErrorType.EXTRACTION and not attribution.steps(PathRole.EVIDENCE):
        return (
            "never-read-it",
            f"{op_id} read no turn the case annotates and nothing holding an item of the answer:"
            " it had nothing of it to extract",
        )
    # A memory splits a turn into facts: a turn not found whole in a unit proves nothing of what it held.
    turns_only = check.turns
    if kind in (ErrorType.UPDATE, ErrorType.DELETION) and not turns_only and op_id and graph.has_op(op_id):
        had, lost = _what_it_lost(graph, graph.op(op_id), check)
        if not had:
            return (
                "changed-no-holder",
                f"neither what {op_id} read nor any memory unit it changed held an item of the answer",
            )
        if lost is not None and not lost:
            return (
                "lost-nothing",
                f"every memory unit {op_id} changed still holds, after it, every item it held before:"
                " the operation lost nothing of the answer",
            )
    unplaced = attribution.step(PathRole.LIVE_AT_QUESTION) is None
    if kind == ErrorType.RETRIEVAL and unplaced and not check.turns:
        anatomy = case_anatomy(graph, case)
        read_at = (anatomy.retrieval_op or anatomy.answer_op).seq if anatomy.answer_op else None
        memory = list(graph.memory_values_at(read_at - 1).values()) if read_at is not None else []
        if memory and set(check.status(memory).values()) == {"missing"}:
            return (
                "memory-lacked-it",
                "no live memory at question time held any item of the answer: no retrieval could return it",
            )
    return None


def _step(version: VariableVersion, note: str, role: PathRole) -> PathStep:
    return PathStep("var", version.id, version.seq, note, True, role=role)


def _replaced_unit(graph: GraphQueries, op: Operation, check: ItemCheck) -> VariableVersion | None:
    """The previous version of a unit the operation wrote that held an item of the answer (either rule)."""
    for written in graph.outputs(op.id):
        if written.category not in _UNIT_CATEGORIES or written.version <= 0:
            continue
        before = [v for v in graph.versions(written.name) if v.version < written.version]
        if not before:
            continue
        previous = before[-1]
        if set(check.status([graph.value(previous.id)]).values()) - {"missing"}:
            return previous
    return None


def _what_it_lost(graph: GraphQueries, op: Operation, check: ItemCheck) -> tuple[bool, set[str] | None]:
    """(whether what the operation read or the units it changed held an item by either rule, the items
    its units held by either rule before it and no longer hold by both after it; None when it changed
    no unit holding an item, or held it only in what it read: a lost input is not a kept unit)."""
    had = any(set(check.status([graph.value(v.id)]).values()) - {"missing"} for v in graph.inputs(op.id))
    before: set[str] = set()
    after: set[str] = set()
    for written in graph.outputs(op.id):
        if written.category not in _UNIT_CATEGORIES:
            continue
        previous = [v for v in graph.versions(written.name) if v.version < written.version]
        if not previous:
            continue
        states = check.status([graph.value(previous[-1].id)])
        had = had or bool(set(states.values()) - {"missing"})
        # Found before by either rule, held after by both: a paraphrase only one rule sees before the
        # update is not lost for nothing, and one only one rule sees after it is not kept.
        before |= {item for item, state in states.items() if state != "missing"}
        if not written.deleted:
            after |= set(check.held([graph.value(written.id)]))
    return had, (before - after if before else None)


def _read_evidence(graph: GraphQueries, case: Case, op: Operation, check: ItemCheck) -> list[VariableVersion]:
    """What the operation read that is an annotated turn or holds an item of the answer (either rule)."""
    annotated = {str(e).split("@")[0] for e in case.evidence}
    return [
        version
        for version in graph.inputs(op.id)
        if version.name in annotated or set(check.status([graph.value(version.id)]).values()) - {"missing"}
    ]


def _live_carrier(graph: GraphQueries, case: Case, check: ItemCheck) -> VariableVersion | None:
    """A memory unit live at question time that holds an item the answer's context lacks (both rules)."""
    carriers = carrier_versions(graph, case, check)
    return carriers[0][0] if carriers else None
