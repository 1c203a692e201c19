"""In memory when asked: the retrieval that missed it, or the answer step that had it and failed.

Split from flow.py: the question-time half of the taxonomy, shared by every path that found a live
carrier (the traced turns' own unit, another statement, units holding an item together).
"""

from __future__ import annotations

from ...graph import MEMORY_ENTRY, Case, GraphQueries, Operation, VariableVersion
from ...vocabulary import ErrorType
from ..evidence.anatomy import CaseAnatomy
from ..evidence.support import SupportScorer, Target, best_part, carrying_part
from ..model import Attribution, PathRole, PathStep, undetermined
from .flow_losses import quote, shown


def question_time_error(
    graph: GraphQueries,
    case: Case,
    anatomy: CaseAnatomy,
    scorer: SupportScorer,
    method: str,
    target: Target,
    held_by: VariableVersion,
    held_score: float,
    path: list[PathStep],
) -> Attribution:
    """In memory when asked: was it in the retrieved context? If so the answer step failed.

    A ResponseError must show the part of the context that carries the information; when no part
    does and no retrieval can be blamed, the method says it cannot decide.
    """
    answer_op = anatomy.answer_op
    assert answer_op is not None
    context = anatomy.context_vars
    context_values = graph.values(context)
    threshold = scorer.threshold
    # One rule for "this part carries it" (support.carrying_part), the one verification checks.
    found = [best_part(target, [(v.id, context_values[v.id])], scorer) for v in context]
    parts = {p.var_id: p for p in found if p is not None}
    context_score = max((p.support for p in parts.values()), default=0.0)
    if context_score < threshold and anatomy.retrieval_op is not None:
        op = first_of_the_misses(graph, anatomy, target, scorer)
        path.append(PathStep("op", op.id, op.seq, "retrieved context misses it", False))
        explanation = (
            f"At question time {held_by.name} held "
            f"{quote(shown(target, graph.value(held_by.id), scorer))} "
            f"({held_by.id}), but {op.name} ({op.id}) did not put it in the context "
            f"(best context support {context_score:.2f} < {threshold})."
        )
        confidence = 0.9 if context_score < threshold / 2 else 0.7
        return Attribution(
            graph.run.id, case.id, op.id, ErrorType.RETRIEVAL, confidence, explanation, method, path
        )
    if context_score < threshold:
        where = "no context was found for it" if not context else "no part of its context carries it"
        return undetermined(
            graph,
            case,
            method,
            f"At question time {held_by.name} held the information ({held_by.id}, support "
            f"{held_score:.2f}), but {where} and no retrieval operation fed {answer_op.name} "
            f"({answer_op.id}): neither a RetrievalError nor a ResponseError can be shown.",
            path=path,
        )
    carrying = [v for v in context if v.id in parts and parts[v.id].support >= threshold]
    path.extend(
        PathStep("var", v.id, v.seq, "in the answer's context", True, parts[v.id].text, PathRole.IN_CONTEXT)
        for v in carrying
    )
    path.append(PathStep("op", answer_op.id, answer_op.seq, "answered wrong from a context holding it", None))
    prediction = case.prediction if case.prediction is not None else "?"
    best = parts[max(carrying, key=lambda v: parts[v.id].support).id]
    explanation = (
        f"The context given to {answer_op.name} ({answer_op.id}) held the information in "
        f"{quote(best.text)} ({best.var_id}, support {context_score:.2f}), yet it answered "
        f"{quote(prediction)} instead of {quote(', '.join(case.gold))}."
    )
    return Attribution(
        graph.run.id, case.id, answer_op.id, ErrorType.RESPONSE, 0.75, explanation, method, path
    )


def first_of_the_misses(
    graph: GraphQueries, anatomy: CaseAnatomy, target: Target, scorer: SupportScorer
) -> Operation:
    """The retrieval that lost it for good: of the case's retrieval rounds (EverMemOS retrieves
    again when the first round looks insufficient), the earliest after which every round missed.

    Repairing that round alone rescues the answer (a sufficient first round ends retrieval),
    while blaming the last round would name a repair that comes too late to be the earliest.
    """
    final = anatomy.retrieval_op
    assert final is not None and anatomy.answer_op is not None
    rounds = [
        op
        for op in graph.ops_by_category("retrieval")
        if anatomy.question_seq <= op.seq <= final.seq and retrieved_outputs(graph, op)
    ]
    blamed = final
    for op in sorted(rounds, key=lambda o: o.seq, reverse=True):
        outputs = retrieved_outputs(graph, op)
        values = graph.values(outputs)
        if carrying_part(target, [(v.id, values[v.id]) for v in outputs], scorer) is not None:
            break
        blamed = op
    return blamed


def retrieved_outputs(graph: GraphQueries, op: Operation) -> list[VariableVersion]:
    """What a retrieval step returned: its `retrieved` outputs, or, in graphs where a search links
    the query to the memories it found (imported as reads), the memory entries it read."""
    returned = [v for v in graph.outputs(op.id) if v.category == "retrieved"]
    return returned or [v for v in graph.inputs(op.id) if v.category == MEMORY_ENTRY]
