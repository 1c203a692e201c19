"""The context oracle: replay with the evidence placed straight into the context the answer step reads.

When a repair did not deliver the evidence to the answer step, the oracle tells whether the answer
step would fail even with it. That is a second, later fault, recorded beside the claim: DESIGN's
decisive criterion assumes every operation after the blamed one behaves ideally, so the answer
step's own failure is never a reason to move the blame downstream.
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import MemtraceError, UntrustedSnapshotError
from ...graph import Case, GraphQueries, Workspace
from ...graph.values import value_text
from ...systems.replay import replay
from ...text import untag
from ...vocabulary import ErrorType
from ..evidence.anatomy import case_anatomy
from ..evidence.locate import dated_message
from ..model import Attribution, PathRole

_STAMPED = re.compile(r"\[(?:said )?on [^\]]+\]\s*$")

#: Path roles of memory versions that carried the information, best first.
_CARRIERS = (PathRole.LIVE_AT_QUESTION, PathRole.LAST_CARRIER, PathRole.FIRST_CARRIER)


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
    evidence = [s for s in attribution.steps(PathRole.EVIDENCE) if s.kind == "var"]
    wanted = {s.id.rsplit("@", 1)[0] for s in evidence}
    texts: list[str] = []
    covered: set[str] = set()
    for role in _CARRIERS:
        step = next((s for s in attribution.steps(role) if s.kind == "var"), None)
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


def probe_answer_step(
    ws: Workspace, graph: GraphQueries, case: Case, attribution: Attribution, *, llm: Any = None
) -> dict[str, Any] | None:
    """Replay with the evidence placed in the answer's context: a second fault when it is still wrong.

    Only ever reports the answer step's own failure beside the claim; the claim is never moved to it
    (DESIGN's criterion assumes the operations after the blamed one behave ideally). None when the
    probe cannot run or the answer comes out right.
    """
    anatomy = case_anatomy(graph, case)
    if anatomy.answer_op is None:
        return None
    patch, _problem = oracle_patch(graph, case, attribution)
    if patch is None:
        return None
    try:
        result = replay(ws, attribution.run_id, patch, cases=[case.id], llm=llm)
    except UntrustedSnapshotError:
        raise  # a tampered workspace stops verification: it is not one unverifiable claim
    except MemtraceError:
        return None
    answered = result.case(case.id)
    if answered.correct:
        return None
    return answer_step_fault(anatomy.answer_op.id, answered.prediction, result.run_id, "context oracle")


def answer_step_fault(op_id: str, answer: str, replay_run: str, how: str) -> dict[str, Any]:
    """The answer step's failure with the evidence in its context, as a second fault beside a claim."""
    return {
        "op_id": op_id,
        "error_type": ErrorType.RESPONSE,
        "how": how,
        "replay_run": replay_run,
        "answer": answer,
        "reason": f"answered {answer!r} with the evidence in its context ({how}, replay {replay_run})",
    }


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
