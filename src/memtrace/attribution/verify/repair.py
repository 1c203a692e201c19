"""The repair a claim's error type implies, as a replay patch: what an ideal operation would have done.

ExtractionError adds the evidence-bearing fact to what the operation produced (as ideal_facts.py
writes it); UpdateError keeps the unit's previous version; DeletionError cancels the deletion;
RetrievalError ranks the evidence-bearing memories first, as an ideal retrieval returns them
(ideal_retrieval.py).
"""

from __future__ import annotations

from typing import Any

from ...graph import GraphQueries, VariableVersion, Workspace
from ...graph.values import value_text
from ...systems.replay import CANCEL
from ...vocabulary import ErrorType
from ..evidence.support import carrying_part
from ..evidence.target import evidence_target
from ..model import Attribution, PathRole
from .ideal_facts import ideal_fact
from .ideal_retrieval import ideal_context
from .items import carriers_of_missing, check_for
from .oracle import memory_as_context


def build_repair(ws: Workspace, attribution: Attribution) -> tuple[dict[str, Any] | None, str]:
    """The patch its error type implies, or None with the reason when none can be built."""
    graph = ws.cached_view(attribution.run_id)
    op_id = attribution.op_id
    if op_id is None or not graph.has_op(op_id):
        return None, "no operation to repair"
    kind = attribution.error_type
    if kind in (ErrorType.UPDATE, ErrorType.DELETION):
        kept = attribution.step(PathRole.LAST_CARRIER)
        if kept is None:
            return None, "the path names no unit version to keep"
        return {op_id: {"memory": {kept.id.rsplit("@", 1)[0]: CANCEL}}}, "keep the previous version"
    if kind == ErrorType.EXTRACTION:
        evidence = [graph.var(s.id) for s in attribution.steps(PathRole.EVIDENCE) if graph.has_var(s.id)]
        produced = [v for v in graph.outputs(op_id) if isinstance(graph.value(v.id), list)]
        if not evidence or not produced:
            return None, "the operation produced no list to add the evidence fact to"
        target = produced[0]
        # What this operation read of the evidence: a later message is no fact it could have written.
        read = {v.id for v in graph.inputs(op_id)}
        facts = [ideal_fact(graph, v, read) for v in ([v for v in evidence if v.id in read] or evidence)]
        if target.category == "update_events":  # a memory decision: the ideal one adds the fact
            kept = _carried_inputs(ws, graph, attribution, op_id) or facts
            added = [{"id": None, "text": text, "event": "ADD"} for text in kept]
            return {op_id: {"outputs": {target.name: [*graph.value(target.id), *added]}}}, (
                f"add the fact it dropped to {target.name}"
            )
        outputs = {target.name: [*graph.value(target.id), *facts]}
        # A text the operation wrote restating its facts line by line (EverMemOS's episode summary)
        # restates the restored fact too: an ideal extraction writes it into every memory it makes.
        restating = _restating_texts(graph, op_id, [str(f) for f in graph.value(target.id)])
        outputs.update({v.name: "\n".join([graph.value(v.id), *facts]) for v in restating})
        where = ", ".join([target.name, *(v.name for v in restating)])
        return {op_id: {"outputs": outputs}}, (
            f"add the evidence, as an ideal extraction writes it, to {where}"
        )
    if kind == ErrorType.RETRIEVAL:
        held = attribution.step(PathRole.LIVE_AT_QUESTION)
        context = [v for v in graph.outputs(op_id) if v.category == "retrieved"]
        if held is None or not context:
            return None, "no evidence-bearing memory or retrieved context to repair"
        items = list(graph.value(context[-1].id) or [])
        case = ws.case(attribution.run_id, attribution.case_id)
        # What an ideal retrieval returns: the named memory and one holding each other missing item,
        # first (a later round fusing ranks, as EverMemOS does, keeps them then), beside the items kept.
        check = check_for(graph, case)
        wanted = [graph.value(held.id), *carriers_of_missing(graph, case, check)]
        memories = list(dict.fromkeys(memory_as_context(value) for value in wanted))
        repaired = ideal_context(items, memories, check)
        return {op_id: {"outputs": {context[-1].name: repaired}}}, (
            "rank the evidence-bearing memories first, drop as many items holding none of the answer"
        )
    return None, f"no repair for {kind}"


def _restating_texts(graph: GraphQueries, op_id: str, facts: list[str]) -> list[VariableVersion]:
    """The operation's text outputs made of its `facts`, one per line (a summary restating several of
    them); an output holding a single fact is that fact's own memory, not a summary."""
    found = []
    for out in graph.outputs(op_id):
        value = graph.value(out.id)
        lines = value.split("\n") if isinstance(value, str) else []
        if len(lines) > 1 and set(lines) <= set(facts):
            found.append(out)
    return found


def _carried_inputs(ws: Workspace, graph: GraphQueries, attribution: Attribution, op_id: str) -> list[str]:
    """The texts of the operation's inputs that carry the evidence (the facts a decision dropped)."""
    case = ws.case(attribution.run_id, attribution.case_id)
    target = evidence_target(graph, case, attribution)
    if target is None:
        return []
    inputs = [v for v in graph.inputs(op_id) if v.category not in ("prompt", "retrieved")]
    values = graph.values(inputs)
    return [
        value_text(values[v.id]) for v in inputs if carrying_part(target, [(v.id, values[v.id])]) is not None
    ]
