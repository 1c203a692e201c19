"""A case's story in one structure: evidence, memory evolution lanes, context, answer, attribution,
replay and human labels. The case page and `/api/.../cases/{id}` both render it.

Lanes are the memory units that ever carried the evidence (scored the way the flow method scores
them) or were read by the question's retrieval, each with every change from creation to deletion.
The context is shown part by part (a retrieved item, a window's line); a part is marked as carrying the
evidence only when the attribution's path names it (a step "in context"), never for mentioning the gold.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..attribution.evidence.anatomy import CaseAnatomy, case_anatomy
from ..attribution.evidence.locate import Evidence, dated_message, locate_evidence
from ..attribution.evidence.support import OverlapScorer, value_parts
from ..attribution.methods.flow_verdicts import confidence_after_verify
from ..attribution.model import Attribution, PathRole, load_attributions
from ..graph import MEMORY_ENTRY, Case, NotFoundError, Workspace
from ..vocabulary import ErrorType
from .context import RunContext
from .runs import PREFERRED_METHOD
from .text import display_text, shorten

#: Lanes drawn at most: carrying units first, then retrieved ones in retrieval order.
MAX_LANES = 24
#: Operation-variable hops from an evidence message within which memory versions may carry it.
EVIDENCE_HOPS = 6
#: Versions of one unit drawn at most (a long-context window grows by one version per message):
#: a longer lane keeps its first and last change and an even sample between.
MAX_CHANGES = 120
#: A lane's change texts (tooltips) are read only when it has at most this many changes.
MAX_TEXT_CHANGES = 40


def case_story(ws: Workspace, ctx: RunContext, case_id: str) -> dict[str, Any]:
    """Everything the case page shows, as plain JSON-ready data."""
    graph = ctx.graph
    case = ws.store.case(graph.run.id, case_id)
    anatomy = case_anatomy(graph, case)
    evidence = locate_evidence(graph, case)
    attributions = [a for a in load_attributions(ws.store, graph.run.id) if a.case_id == case.id]
    attributions.sort(key=lambda a: a.method != PREFERRED_METHOD)
    carrying = _carrying_units(ctx, case, evidence, anatomy)
    retrieved = _retrieved_units(ctx, anatomy)
    lanes = _lanes(ctx, carrying, retrieved)
    return {
        "run": _run_dict(ctx),
        "neighbours": _failed_neighbours(ws, graph.run.id, case.id),
        "case": {
            "id": case.id,
            "question": case.question,
            "gold": case.gold,
            "prediction": case.prediction,
            "verdict": case.verdict,
            "score": case.score,
            "category": case.category,
            "evidence_ids": case.evidence,
        },
        "evidence": {
            "source": evidence.source,
            "problem": evidence.problem,
            "messages": [
                {"id": v.id, "name": v.name, "seq": v.seq, "text": dated_message(graph, v)}
                for v in evidence.versions
            ],
        },
        "steps": _steps(anatomy),
        "context": _context(ctx, anatomy, attributions[0] if attributions else None),
        "timeline": {
            "max_seq": ctx.max_seq,
            "question_seq": None if anatomy.answer_op is None else anatomy.question_seq,
            "sessions": [asdict(s) for s in ctx.sessions],
            "lanes": lanes,
        },
        "attributions": [_attribution_dict(a, graph.run.system) for a in attributions],
        "annotations": [
            {
                "id": a.id,
                "error_type": a.error_type,
                "op_id": a.op_id,
                "note": a.note,
                "author": a.author,
                "created_at": a.created_at,
            }
            for a in ws.store.annotations(graph.run.id, case.id)
        ],
    }


def _failed_neighbours(ws: Workspace, run_id: str, case_id: str) -> dict[str, str | None]:
    """The failed cases before and after this one in the run's order, for stepping through failures."""
    order = [c.id for c in ws.store.cases(run_id) if c.failed or c.id == case_id]
    at = order.index(case_id)
    return {
        "previous": order[at - 1] if at > 0 else None,
        "next": order[at + 1] if at + 1 < len(order) else None,
    }


def _run_dict(ctx: RunContext) -> dict[str, Any]:
    run = ctx.graph.run
    return {"id": run.id, "name": run.name, "system": run.system, "dataset": run.dataset}


def _steps(anatomy: CaseAnatomy) -> dict[str, Any]:
    return {
        "answer_op": None if anatomy.answer_op is None else anatomy.answer_op.id,
        "retrieval_op": None if anatomy.retrieval_op is None else anatomy.retrieval_op.id,
        "problem": anatomy.problem,
    }


def _context(ctx: RunContext, anatomy: CaseAnatomy, shown: Attribution | None) -> list[dict[str, Any]]:
    """What the answer step read: each context variable's text and its parts, each part marked as
    carrying only when the shown attribution's path names it (a step "in context" with that part)."""
    values = ctx.graph.values(anatomy.context_vars)
    named = {(s.id, s.part) for s in shown.steps(PathRole.IN_CONTEXT)} if shown is not None else set()
    return [
        {
            "id": v.id,
            "category": v.category,
            "text": display_text(values[v.id]),
            "items": [
                {"text": text, "carries": (v.id, text) in named} for _, text in value_parts(values[v.id])
            ],
        }
        for v in anatomy.context_vars
    ]


def _carrying_units(
    ctx: RunContext, case: Case, evidence: Evidence, anatomy: CaseAnatomy
) -> dict[str, float]:
    """Memory unit name -> best support of its versions derived from the evidence before the question.

    Candidates are the memory versions within EVIDENCE_HOPS of an evidence message (message ->
    extraction -> facts -> update -> unit), scored the way the flow method scores memory: cheap on
    any run, where scoring every version of a large run is not.
    """
    if not evidence.versions:
        return {}
    scorer = OverlapScorer()
    target = scorer.prepare(
        case.question, case.gold, [(v.name, dated_message(ctx.graph, v)) for v in evidence.versions]
    )
    if target.empty:
        return {}
    reached = {
        node.id
        for message in evidence.versions
        for node in ctx.graph.descendants(message.id, depth=EVIDENCE_HOPS)
        if node.kind == "var" and node.seq < anatomy.question_seq
    }
    candidates = [v for v in (ctx.graph.var(i) for i in sorted(reached)) if v.category == MEMORY_ENTRY]
    words = ctx.words_of(candidates)
    best: dict[str, float] = {}
    for version in candidates:
        score = scorer.score_words(target, words[version.id])
        if score >= scorer.threshold and score > best.get(version.name, 0.0):
            best[version.name] = score
    return best


def _retrieved_units(ctx: RunContext, anatomy: CaseAnatomy) -> list[str]:
    """Memory units the question's retrieval read, in the order it read them."""
    if anatomy.retrieval_op is None:
        return []
    return [v.name for v in ctx.graph.inputs(anatomy.retrieval_op.id) if v.category == MEMORY_ENTRY]


def _lanes(ctx: RunContext, carrying: dict[str, float], retrieved: list[str]) -> list[dict[str, Any]]:
    order = sorted(carrying, key=lambda name: -carrying[name]) + [u for u in retrieved if u not in carrying]
    lanes = []
    for name in order[:MAX_LANES]:
        try:
            entries = ctx.graph.lifecycle(name, values=False)
        except NotFoundError:
            continue
        shown = _sample(entries, MAX_CHANGES)
        # Values only for short lanes: a long-context window's thousand versions are the transcript
        # again and again, too costly to decode and useless as a tooltip.
        texts = ctx.graph.values([e.version for e in shown]) if len(shown) <= MAX_TEXT_CHANGES else {}
        changes = [
            {
                "version": e.version.id,
                "seq": e.version.seq,
                "change": e.change,
                "op_id": None if e.op is None else e.op.id,
                "op_name": None if e.op is None else e.op.name,
                "text": shorten(display_text(texts[e.version.id]), 240) if e.version.id in texts else "",
            }
            for e in shown
        ]
        lanes.append(
            {
                "unit": name,
                "carries": name in carrying,
                "support": round(carrying.get(name, 0.0), 2),
                "retrieved": name in retrieved,
                "changes": changes,
                "omitted": len(entries) - len(shown),
            }
        )
    return lanes


def _sample[T](items: list[T], most: int) -> list[T]:
    """At most `most` items: the first, the last and evenly spaced ones between, in order."""
    if len(items) <= most:
        return items
    step = (len(items) - 1) / (most - 1)
    return [items[round(i * step)] for i in range(most)]


def _attribution_dict(a: Attribution, system: str | None) -> dict[str, Any]:
    verification = a.verification or {}
    return {
        "method": a.method,
        "op_id": a.op_id,
        "error_type": a.error_type,
        "confidence": a.confidence,
        "confidence_after_verify": confidence_after_verify(a, system),
        "explanation": a.explanation,
        # The gold answer is not supported by the conversation: no memory fault, shown apart.
        "suspected_annotation": a.error_type == ErrorType.ANNOTATION,
        "path": [asdict(step) for step in a.path],
        "verified": a.verified,
        "verdict_stale": a.verdict_stale,
        "flow_confirmed": a.flow_confirmed,
        "answer_confirmed": a.answer_confirmed,
        "replay_run": a.replay_run,
        "replay": {
            "reason": verification.get("reason"),
            "repair": next(
                (
                    line.split(":", 1)[1].strip()
                    for line in verification.get("checked", [])
                    if line.startswith("repair")
                ),
                None,
            ),
            "checked": verification.get("checked", []),
            "answer": verification.get("replayed_answer"),
            "second_faults": verification.get("second_faults", []),
        }
        if a.verification
        else None,
        "cost": asdict(a.cost),
    }
