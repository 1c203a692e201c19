"""The context oracle: when a repair is refuted, test the answer step itself.

DESIGN's decisive operation is the earliest one whose repair alone rescues the answer. When the
blamed operation's repair does not, the case is replayed once more with the evidence placed
straight into the context the answer step reads. If that answer is still wrong, no upstream repair
can rescue it (each acts on the answer only by bringing the evidence into that context), so the
answer step is the earliest decisive operation: the attribution is revised to a ResponseError
verified by elimination, and the refuted claim is kept in `revised_from`. If the oracle does
rescue the answer, the claim stays refuted: the loss recurs after the repair (the next trim drops
the line again), so no single operation is decisive, and the verdict says so.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ..graph import Case, GraphQueries, MemtraceError, Workspace
from ..graph.values import value_text
from ..systems.replay import replay
from ..systems.rules import untag
from ..systems.signing import UntrustedSnapshotError
from .anatomy import case_anatomy
from .evidence import dated_message
from .model import Attribution, PathStep
from .verdicts import BY_ELIMINATION, Verification

_STAMPED = re.compile(r"\[(?:said )?on [^\]]+\]\s*$")

#: Path notes (flow's) of memory versions that carried the information, best first.
_CARRIERS = (
    "in memory at question time",
    "last version carrying it",
    "first memory unit version carrying it",
)


def oracle_patch(graph: GraphQueries, case: Case, attribution: Attribution) -> tuple[dict | None, str]:
    """The patch that puts the evidence into the answer's context, or None with the reason."""
    anatomy = case_anatomy(graph, case)
    if anatomy.retrieval_op is None:
        return None, "no retrieval operation feeds the answer"
    produced = {v.id for v in graph.outputs(anatomy.retrieval_op.id)}
    context = [v for v in anatomy.context_vars if v.id in produced]
    if not context:
        return None, "the answer's context was not produced by a retrieval operation"
    texts = evidence_texts(graph, attribution)
    if not texts:
        return None, "the attribution's path names no evidence to place in the context"
    items = graph.value(context[-1].id)
    items = list(items) if isinstance(items, list) else ([items] if items else [])
    kept = items[: max(0, len(items) - len(texts))]
    return {anatomy.retrieval_op.id: {"outputs": {context[-1].name: [*kept, *texts]}}}, ""


def evidence_texts(graph: GraphQueries, attribution: Attribution) -> list[str]:
    """The evidence as the system's memory wrote it, plus dated messages for evidence it does not cover."""
    evidence = [s for s in attribution.path if s.kind == "var" and s.note.startswith("evidence")]
    wanted = {s.id.rsplit("@", 1)[0] for s in evidence}
    texts: list[str] = []
    covered: set[str] = set()
    for note in _CARRIERS:
        step = next((s for s in attribution.path if s.kind == "var" and s.note == note), None)
        if step is not None:
            texts, covered = _carried(graph.value(step.id), wanted)
            if texts:
                break
    texts += [_dated_message(graph, s.id) for s in evidence if s.id.rsplit("@", 1)[0] not in covered]
    return texts


def memory_as_context(value: Any) -> str:
    """A memory value as a context item: its text, date-stamped when it is not already."""
    if isinstance(value, dict) and "memory" in value:
        text, stamp = str(value["memory"]), value.get("timestamp")
        return f"{text} [said on {stamp}]" if stamp and not _STAMPED.search(text) else text
    if isinstance(value, list):
        return "\n".join(value_text(v) for v in value)
    return value_text(value)


def revise(ws: Workspace, attribution: Attribution, claim: Verification, *, llm: Any = None) -> Verification:
    """Given a refuted or unverifiable claim, run the oracle and revise the attribution if it fails.

    Returns the claim unchanged (with the oracle's finding in its reason) or a new Verification of
    the revised attribution.
    """
    graph = ws.cached_view(attribution.run_id)
    case = ws.case(attribution.run_id, attribution.case_id)
    anatomy = case_anatomy(graph, case)
    if anatomy.answer_op is None:
        return claim
    blamed_retrieval = anatomy.retrieval_op is not None and attribution.op_id == anatomy.retrieval_op.id
    if blamed_retrieval and claim.replay_run is not None:
        oracle_run, wrong = claim.replay_run, claim.answer  # the repair already was the oracle
    else:
        patch, problem = oracle_patch(graph, case, attribution)
        if patch is None:
            claim.reason += f"; no context oracle: {problem}"
            return claim
        try:
            result = replay(ws, attribution.run_id, patch, cases=[case.id], llm=llm)
        except UntrustedSnapshotError:
            raise  # a tampered workspace stops verification: it is not one failed oracle
        except MemtraceError as exc:
            claim.reason += f"; context oracle failed: {exc}"
            return claim
        answered = result.case(case.id)
        if answered.correct:
            claim.reason += (
                f"; with the evidence in the answer's context it is right (replay {result.run_id}): "
                "the loss recurs after the repair, so no single operation is decisive"
            )
            return claim
        oracle_run, wrong = result.run_id, answered.prediction
    answer_op = anatomy.answer_op
    explanation = (
        f"{attribution.op_id} ({attribution.error_type}) lost the evidence, "
        f"but repairing it alone does not rescue the answer ({claim.reason}). With the evidence placed in "
        f"its context, {answer_op.name} ({answer_op.id}) still answered {wrong!r} (replay {oracle_run}), "
        "so the answer step is the earliest decisive operation."
    )
    revised = replace(
        attribution,
        op_id=answer_op.id,
        error_type="ResponseError",
        confidence=round(min(attribution.confidence, 0.7), 2),
        explanation=explanation,
        path=[
            *attribution.path,
            PathStep("op", answer_op.id, answer_op.seq, "wrong even with the evidence in its context", None),
        ],
        verified=BY_ELIMINATION,
        replay_run=oracle_run,
        revised_from={
            "op_id": attribution.op_id,
            "error_type": attribution.error_type,
            "verified": claim.verdict,
            "replay_run": claim.replay_run,
            "reason": claim.reason,
        },
    )
    reason = f"revised from {attribution.error_type}: wrong even with the evidence in the context"
    return Verification(revised, BY_ELIMINATION, reason, oracle_run, wrong)


def _carried(value: Any, wanted: set[str]) -> tuple[list[str], set[str]]:
    """A carrying memory as context items, and the evidence ids they cover (by provenance).

    A list memory (a window of tagged lines) gives its evidence lines; a memory with `sources`
    covers those messages; any other memory is taken to cover all the evidence.
    """
    if isinstance(value, list):
        lines = [str(item) for item in value if untag(str(item))[0] in wanted]
        return lines, {untag(line)[0] or "" for line in lines}
    if value is None:
        return [], set()
    sources = value.get("sources") if isinstance(value, dict) else None
    covered = set(sources) & wanted if isinstance(sources, list) else set(wanted)
    return [memory_as_context(value)], covered


def _dated_message(graph: GraphQueries, var_id: str) -> str:
    """A message as a memory line, '[D1:7] Speaker: text [said on 8 May 2023]' when its date is known."""
    version = graph.var(var_id)
    return f"[{version.name}] {dated_message(graph, version)}"
