"""How the flow method decides a list answer from its items, and the cases it keeps out of a system's counts.

Each item of a list answer ("a dog named Pepper and a cat named Whiskers") is traced on its own. The
context holds the answer only when it holds every item; one holding some is a partial carrier, and
the first operation that lost a missing item decides (with the later operations ideal, repairing it
lets every item through). A gold answer the conversation does not support is a suspected
`AnnotationError`: it says why, and blames no operation.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...graph import Case, GraphQueries, VariableVersion
from ...vocabulary import ErrorType
from ..evidence.anatomy import CaseAnatomy
from ..evidence.needs import AnswerNeeds, ItemNeed
from ..model import Attribution, PathRole, PathStep, undetermined
from .flow_losses import quote


def _names(versions: Sequence[VariableVersion]) -> str:
    return ", ".join(v.name for v in versions)


def elsewhere_note(need: ItemNeed, annotated: Sequence[VariableVersion]) -> str:
    """Why the traced turns are not the annotated ones."""
    where = "the same session" if need.where == "session" else "the conversation"
    return (
        f"The annotated evidence ({_names(annotated)}) does not state {quote(need.label)}; "
        f"{_names(need.messages)}, found in {where}, does, and is what was traced."
    )


def suspected_annotation_error(
    graph: GraphQueries, case: Case, method: str, needs: AnswerNeeds, annotated: Sequence[VariableVersion]
) -> Attribution:
    """The gold answer is not supported by the conversation: an annotation error, kept out of the
    system's error counts, with the reason."""
    reason = needs.unsupported or "no turn states the gold answer"
    path = [PathStep("var", v.id, v.seq, "evidence (gold)", None, role=PathRole.EVIDENCE) for v in annotated]
    explanation = (
        f"Suspected annotation error: {reason}, so no memory operation could have delivered "
        f"{quote(', '.join(case.gold))}. The case is left out of the system's error counts."
    )
    return Attribution(graph.run.id, case.id, None, ErrorType.ANNOTATION, 0.5, explanation, method, path)


def _op_seq(graph: GraphQueries, attribution: Attribution) -> int:
    return graph.op(attribution.op_id).seq if attribution.op_id else 2**62


def combine_items(
    graph: GraphQueries,
    case: Case,
    anatomy: CaseAnatomy,
    traced: list[tuple[ItemNeed, Attribution]],
    method: str,
    unstated: Sequence[str] = (),
    loose: Sequence[str] = (),
) -> Attribution:
    """One decision from the items' traces: every item in the context is a ResponseError; else the
    earliest operation that lost a missing item, with the items held and missing named. `unstated`
    items no turn states as worded are named, not traced; `loose` ones are traced through the
    annotated turns naming a word of them."""
    decided = _combine(graph, case, anatomy, traced, method)
    notes = []
    if unstated:
        names = ", ".join(quote(item, 40) for item in unstated)
        notes.append(f"No turn states {names} as worded; the items turns state were traced.")
    if loose:
        names = ", ".join(quote(item, 40) for item in loose)
        either = " either" if unstated else ""
        notes.append(
            f"No turn states {names} as worded{either}; the annotated turns naming a word of"
            f" {'it' if len(loose) == 1 else 'each'} were traced in its place."
        )
    if notes:
        decided.explanation = f"{' '.join(notes)} {decided.explanation}"
    return decided


def _combine(
    graph: GraphQueries,
    case: Case,
    anatomy: CaseAnatomy,
    traced: list[tuple[ItemNeed, Attribution]],
    method: str,
) -> Attribution:
    held = [(need, a) for need, a in traced if a.error_type == ErrorType.RESPONSE]
    lost = [(need, a) for need, a in traced if a.determined and a.error_type != ErrorType.RESPONSE]
    open_ = [(need, a) for need, a in traced if not a.determined]
    items = ", ".join(quote(need.label, 40) for need, _ in traced)
    noun = "items" if traced[0][0].item is not None else "turns"
    if not lost and not open_:
        return _all_held(graph, case, anatomy, held, method)
    if not lost:
        reasons = "; ".join(f"{quote(need.label, 40)}: {a.explanation}" for need, a in open_)
        return undetermined(graph, case, method, f"The answer needs {noun} {items}. {reasons}")
    need, decisive = min(lost, key=lambda pair: _op_seq(graph, pair[1]))
    missing = ", ".join(quote(n.label, 40) for n, _ in lost + open_)
    if held:
        intro = (
            f"The answer needs {len(traced)} {noun} ({items}); the context held only "
            f"{', '.join(quote(n.label, 40) for n, _ in held)}, a partial carrier, and missed {missing}."
        )
    elif len(traced) == 1:
        intro = f"The answer needs {items}; the context did not hold it."
    else:
        intro = f"The answer needs {len(traced)} {noun} ({items}); the context held none of them."
    later = [a for n, a in lost if a is not decisive and a.op_id != decisive.op_id]
    explanation = f"{intro} For {quote(need.label, 40)}: {decisive.explanation}"
    if later:
        explanation += " Later losses of other items: " + "; ".join(
            f"{a.op_id} ({a.error_type})" for a in sorted(later, key=lambda a: _op_seq(graph, a))
        )
    path = [*decisive.path]
    return Attribution(
        graph.run.id,
        case.id,
        decisive.op_id,
        decisive.error_type,
        decisive.confidence,
        explanation,
        method,
        path,
    )


def _all_held(
    graph: GraphQueries,
    case: Case,
    anatomy: CaseAnatomy,
    held: list[tuple[ItemNeed, Attribution]],
    method: str,
) -> Attribution:
    """Every item was in the context: the answer step failed, and each item's carrying part is named."""
    answer_op = anatomy.answer_op
    assert answer_op is not None
    path: list[PathStep] = []
    seen: set[tuple[str, str | None, str | None]] = set()
    shown = []
    for need, attribution in held:
        for step in attribution.path:
            if step.role == PathRole.IN_CONTEXT and step.part:
                shown.append(f"{quote(need.label, 40)} in {quote(step.part, 70)}")
                break
        for step in attribution.path:
            if step.kind == "var" and (step.id, step.role, step.part) not in seen:  # one part per item
                seen.add((step.id, step.role, step.part))
                path.append(step)
    path.append(PathStep("op", answer_op.id, answer_op.seq, "answered wrong from a context holding it", None))
    prediction = case.prediction if case.prediction is not None else "?"
    explanation = (
        f"The context given to {answer_op.name} ({answer_op.id}) held every item of the answer: "
        f"{'; '.join(shown)}; yet it answered {quote(prediction)} instead of {quote(', '.join(case.gold))}."
    )
    confidence = min(a.confidence for _, a in held)
    return Attribution(
        graph.run.id, case.id, answer_op.id, ErrorType.RESPONSE, confidence, explanation, method, path
    )
