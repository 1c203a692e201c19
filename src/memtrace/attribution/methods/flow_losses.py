"""The flow method's verdicts when memory never held the information or lost it: the operation that
dropped it (ExtractionError) and the change that lost it (UpdateError, DeletionError)."""

from __future__ import annotations

from typing import Any

from ...graph import Case, GraphQueries, Operation, VariableVersion
from ...graph.values import display_text
from ...vocabulary import ErrorType
from ..evidence.extraction import find_dropper
from ..evidence.locate import dated_message
from ..evidence.losses import decisive_loss, losses
from ..evidence.support import SupportScorer, Target, best_part, carrying_part, value_parts, value_words
from ..evidence.words import unplanned
from ..model import Attribution, PathRole, PathStep, undetermined


def quote(text: str, width: int = 90) -> str:
    """A text shortened for an explanation, on one line."""
    text = " ".join(text.split())
    return f"'{text if len(text) <= width else text[: width - 1] + '…'}'"


def shown(target: Target | None, value: Any, scorer: SupportScorer) -> str:
    """The part of a value an explanation quotes: the one carrying the information (a window's line,
    a memory's line, not its first), as readable text; the whole value when no part comes close."""
    if target is None:
        return display_text(value)
    part = carrying_part(target, [(None, value)], scorer) or best_part(target, [(None, value)], scorer)
    return display_text(part.text if part is not None and part.support > 0 else value)


def extraction_error(
    graph: GraphQueries,
    case: Case,
    evidence: list[VariableVersion],
    target: Target,
    question_seq: int,
    path: list[PathStep],
    scorer: SupportScorer,
    method: str,
) -> Attribution:
    """No memory unit ever carried it: blame the operation that had it last and dropped it."""

    def carries(value: Any) -> bool:
        return carrying_part(target, [(None, value)], scorer) is not None

    # Only evidence that states what was asked can have been dropped: a message that merely
    # shares the question's topic ("I bought it in Paris") never held the answer ("snakes").
    stating = [v for v in evidence if carries(dated_message(graph, v))] or evidence
    drop = find_dropper(graph, stating, carries, question_seq)
    if drop is None:
        return undetermined(
            graph,
            case,
            method,
            "no memory unit ever carried the evidence, and no construction operation consumed it",
            path=path,
        )
    dropper, holder = drop.op, drop.holder
    path.append(PathStep("var", holder.id, holder.seq, f"last carried here, consumed by {dropper.id}", True))
    path.append(PathStep("op", dropper.id, dropper.seq, "dropped it: no output carries it on", False))
    evidence_names = ", ".join(v.name for v in evidence)
    explanation = (
        f"No memory unit ever held the information of {evidence_names} "
        f"(answer {quote(', '.join(target.gold or case.gold))}). It was last present in {holder.id} "
        f"({quote(shown(target, graph.value(holder.id), scorer))}), which {dropper.name} "
        f"({dropper.id}) consumed "
        "without writing it to memory."
    )
    outdated = outdated_unit(graph, dropper, target) if dropper.category == "update" else None
    if outdated is not None:  # an update step given the new value kept the old one: it failed to update
        # No LAST_CARRIER role: the kept unit never carried the information, so no version of it is
        # the one an Update repair would restore.
        path.append(PathStep("var", outdated.id, outdated.seq, "kept its outdated value", False))
        explanation += (
            f" It read {outdated.name} ({quote(display_text(graph.value(outdated.id)))}), about the same"
            " thing with another value, and kept it instead of updating it."
        )
        return Attribution(
            graph.run.id, case.id, dropper.id, ErrorType.UPDATE, 0.75, explanation, method, path
        )
    return Attribution(
        graph.run.id, case.id, dropper.id, ErrorType.EXTRACTION, 0.8, explanation, method, path
    )


def outdated_unit(graph: GraphQueries, op: Operation, target: Target) -> VariableVersion | None:
    """A one-fact memory unit the update step read that is about what the dropped evidence says (at
    least half of the question's words the evidence shares, plans counted as said) but states none of
    the answer: the unit the step should have updated with the new value ("going to Lyme in March"
    kept when "Whitby" was given)."""
    about = frozenset().union(*target.keys) - target.answer
    if not about:
        return None
    for version in graph.inputs(op.id):
        if not version.is_memory:
            continue
        parts = value_parts(graph.value(version.id))
        if len(parts) != 1:  # a window of many lines is no single outdated fact
            continue
        words = unplanned(frozenset().union(*value_words(parts[0][0])))
        shared = about & words
        fits = shared and 2 * len(shared) >= len(about)
        if fits and not words & target.answer and not target.about_others(words):
            return version
    return None


def loss_error(
    graph: GraphQueries,
    case: Case,
    carrying: dict[str, float],
    question_seq: int,
    path: list[PathStep],
    scorer: SupportScorer,
    method: str,
    per_message: list[dict[str, float]] | None = None,
    target: Target | None = None,
) -> Attribution:
    """Memory held it once and not at question time: the earliest change that lost it.

    With several evidence turns, each turn's own loss counts (a long-context window trims them one
    by one): the earliest of them decides, since repairing it with later operations ideal keeps
    every turn, while the last trim only finished what the first began.
    """
    found = losses(graph, carrying, question_seq)
    loss = decisive_loss(found)
    for message_carrying in per_message or []:
        own = decisive_loss(losses(graph, message_carrying, question_seq))
        if own is not None and (loss is None or own.op.seq < loss.op.seq):
            loss, found = own, [*found, own]
    if loss is None:
        return undetermined(
            graph, case, method, "memory held the information but no loss could be located", path=path
        )
    path.append(
        PathStep(
            "var",
            loss.kept.id,
            loss.kept.seq,
            "last version carrying it",
            True,
            role=PathRole.LAST_CARRIER,
        )
    )
    path.append(PathStep("op", loss.op.id, loss.op.seq, f"lost it ({loss.error_type})", False))
    change = "deleted" if loss.error_type == ErrorType.DELETION else "overwrote"
    explanation = (
        f"{loss.unit} held {quote(shown(target, graph.value(loss.kept.id), scorer))} "
        f"({loss.kept.id}); "
        f"{loss.op.name} ({loss.op.id}) {change} it"
        + (f" with {quote(display_text(loss.after))}" if loss.after is not None else "")
        + " before the question was asked, so the answer could not use it."
    )
    harmless = [other for other in found if other.harmless and other.op.seq < loss.op.seq]
    if harmless:
        explanation += (
            f" Earlier, {harmless[0].op.name} ({harmless[0].op.id}) changed {harmless[0].unit}, but other"
            " memory units still held the information then, so that change is not blamed."
        )
    confidence = 0.85 if len(found) == 1 else 0.75
    return Attribution(
        graph.run.id, case.id, loss.op.id, loss.error_type, confidence, explanation, method, path
    )
