"""The role-bearing steps any method's claim needs to be repaired and verified like the flow method's.

Verification reads path steps by role: the evidence messages (what a repair restores), the last
version carrying the information before an update or deletion (what a repair keeps), the memory
live at question time (what a retrieval repair ranks first). An agent or an all-at-once model names
an operation and an error type, not these; `add_roles` finds them for its claim from the flow
method's evidence path, recomputing the last carrier when the claim blames another change.
"""

from __future__ import annotations

from ...graph import MEMORY_ENTRY, Case, GraphQueries, VariableVersion
from ..evidence.support import OverlapScorer
from ..evidence.target import evidence_target
from ..model import Attribution, PathRole, PathStep
from .flow import FlowMethod

#: The roles a claim of each error type needs besides the evidence (ResponseError: verify names the part).
_NEEDED = {
    "UpdateError": (PathRole.LAST_CARRIER,),
    "DeletionError": (PathRole.LAST_CARRIER,),
    "RetrievalError": (PathRole.LIVE_AT_QUESTION,),
}


def add_roles(
    graph: GraphQueries, case: Case, claim: Attribution, seed: Attribution | None = None
) -> Attribution:
    """`claim` with the role steps its repair needs appended (steps it already has keep their place).

    `seed` is a flow attribution of the case when one was made; else flow runs here (no model, a few
    milliseconds). A role that cannot be found is left out, so verification says why it cannot repair.
    """
    if not claim.determined or claim.op_id is None:
        return claim
    flow = (
        seed if seed is not None and seed.method == FlowMethod.name else FlowMethod().attribute(graph, case)
    )
    have = {step.role for step in claim.path if step.role is not None}
    wanted = [PathRole.EVIDENCE, *_NEEDED.get(claim.error_type, ())]
    for role in wanted:
        if role in have:
            continue
        if role == PathRole.LAST_CARRIER and claim.op_id != flow.op_id:
            steps = _last_carrier(graph, case, claim.op_id, flow)
        else:
            steps = [_copy(step) for step in flow.steps(role)]
        claim.path.extend(steps)
    return claim


def _last_carrier(graph: GraphQueries, case: Case, op_id: str, flow: Attribution) -> list[PathStep]:
    """The memory version carrying the information that `op_id` replaced or deleted (best supported)."""
    target = evidence_target(graph, case, flow)
    if target is None or not graph.has_op(op_id):
        return []
    scorer = OverlapScorer()
    candidates: list[VariableVersion] = [v for v in graph.inputs(op_id) if v.category == MEMORY_ENTRY]
    for out in graph.outputs(op_id):
        if out.category == MEMORY_ENTRY:
            earlier = [v for v in graph.versions(out.name) if v.seq < out.seq]
            candidates += earlier[-1:]
    values = graph.values(candidates)
    scored = [(scorer.score(target, values[v.id]), v) for v in candidates]
    carrying = [(score, v) for score, v in scored if score >= scorer.threshold]
    if not carrying:
        return []
    version = max(carrying, key=lambda pair: pair[0])[1]
    return [
        PathStep("var", version.id, version.seq, "last version carrying it", True, role=PathRole.LAST_CARRIER)
    ]


def _copy(step: PathStep) -> PathStep:
    return PathStep(step.kind, step.id, step.seq, step.note, step.carries, step.part, step.role)
