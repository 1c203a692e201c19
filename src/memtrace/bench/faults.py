"""Fault injection: labelled failures made by replaying correct runs with one operation broken.

For each correctly answered case, one injector per error type patches one operation through
replay: drop the evidence from an extraction's output (ExtractionError), degrade the memory in an
update (UpdateError), turn that update into a deletion (DeletionError), drop the evidence-bearing
items from the retrieved context (RetrievalError), or make the answer step answer another span
(ResponseError). When no update touched the one memory holding the answer (Mem0 often merges
nothing into it), a later memory decision is made to degrade or delete it instead, so every type
a system can make is injected. Only injections that flip the verdict to wrong are kept; the
injected operation and type are the ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..attribution.evidence.anatomy import case_anatomy
from ..attribution.evidence.locate import dated_message, locate_evidence
from ..attribution.evidence.support import OverlapScorer, Target
from ..datasets import NOT_MENTIONED
from ..graph import MEMORY_ENTRY, Case, GraphView, VariableVersion
from ..systems.replay import CANCEL, DELETE
from ..vocabulary import ErrorType

_WRITES_MEMORY = ("extraction", "construction", "update")
_DECISION_EVENTS = "update_events"  # the events a memory decision (Mem0) plans, then carries out
_FORGOTTEN = "(details forgotten)"


@dataclass(slots=True)
class Injection:
    """One planned fault: which operation, which type, and the patch that causes it."""

    run_id: str
    case_id: str
    error_type: ErrorType
    op_id: str
    patch: dict[str, Any]
    description: str
    replay_run: str | None = None
    flipped: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


class Injector:
    """Plans injections for the cases of one run (one in-memory graph)."""

    def __init__(self, graph: GraphView) -> None:
        self.graph = graph
        self.scorer = OverlapScorer()

    def plan(self, case: Case) -> list[Injection]:
        if not case.gold or NOT_MENTIONED in case.gold:
            return []  # an unanswerable question carries no information to lose
        found = locate_evidence(self.graph, case, method="gold")
        anatomy = case_anatomy(self.graph, case)
        if not found.versions or anatomy.answer_op is None:
            return []
        target = self.scorer.prepare(
            case.question, case.gold, [(v.name, dated_message(self.graph, v)) for v in found.versions]
        )
        if target.empty:
            return []
        planned = [
            self._extraction(case, found.versions, target, anatomy.question_seq),
            *self._update_and_deletion(case, target, anatomy.question_seq),
            self._retrieval(case, target, anatomy),
            self._response(case, target, anatomy),
        ]
        return [p for p in planned if p is not None]

    # -- the injectors --------------------------------------------------------------------------

    def _carries(self, target: Target, value: Any) -> bool:
        return self.scorer.score(target, value) >= self.scorer.threshold

    def _strip(self, target: Target, value: Any) -> Any:
        """The value with its evidence-bearing parts removed (None when nothing would be left)."""
        if isinstance(value, list):
            kept = [item for item in value if not self._carries(target, item)]
            return kept if len(kept) < len(value) else None
        if isinstance(value, str) and "\n" in value:
            lines = [line for line in value.split("\n") if not self._carries(target, line)]
            return "\n".join(lines) if lines else None
        return None

    def _extraction(
        self, case: Case, evidence: list[VariableVersion], target: Target, before: int
    ) -> Injection | None:
        """The first operation that took the evidence in: its outputs lose the evidence."""
        graph = self.graph
        readers = sorted(
            {op.id: op for v in evidence for op in graph.consumers(v.id)}.values(), key=lambda op: op.seq
        )
        for op in readers:
            if op.seq >= before or op.category not in _WRITES_MEMORY:
                continue
            outputs = graph.outputs(op.id)
            values = graph.values(outputs)
            patch: dict[str, Any] = {}
            for out in outputs:
                value = values[out.id]
                if not self._carries(target, value):
                    continue
                if out.category == MEMORY_ENTRY:
                    stripped = self._strip(target, value)
                    patch.setdefault("memory", {})[out.name] = CANCEL if stripped is None else stripped
                elif isinstance(value, list):
                    stripped = self._strip(target, value)
                    patch.setdefault("outputs", {})[out.name] = stripped or []
            if patch:
                return Injection(
                    graph.run.id, case.id, ErrorType.EXTRACTION, op.id, {op.id: patch}, "drop the evidence"
                )
        return None

    def _update_and_deletion(self, case: Case, target: Target, before: int) -> list[Injection]:
        """An update after the evidence entered a unit: degrade the unit there, or delete it there.

        Only when that unit is the one memory holding it at question time: losing one of several
        holders loses nothing (the others still answer), so the label would not be the decisive fault.
        """
        graph = self.graph
        state = graph.memory_state_at(before - 1)
        live = [v for v in state.values() if self._carries(target, graph.value(v.id))]
        if len(live) != 1:
            return []
        for unit in live:
            versions = [v for v in graph.versions(unit.name) if v.seq < before]
            first = next(
                (i for i, v in enumerate(versions) if self._carries(target, graph.value(v.id))), None
            )
            updates = [
                (later, producers[-1])
                for later in versions[first + 1 :]
                if first is not None
                and (producers := graph.producers(later.id))
                and producers[-1].category == "update"
            ]
            if not updates:
                if first is not None:
                    return self._by_a_later_decision(case, unit, versions[first], before)
                continue
            later, op = updates[0]
            value = graph.value(later.id)
            degraded = self._strip(target, value)
            if degraded is None and isinstance(value, dict) and "memory" in value:
                degraded = {**value, "memory": _FORGOTTEN}
            planned = [
                Injection(
                    graph.run.id,
                    case.id,
                    ErrorType.DELETION,
                    op.id,
                    {op.id: {"memory": {unit.name: DELETE}}},
                    "delete",
                )
            ]
            if degraded is not None:
                planned.append(
                    Injection(
                        graph.run.id,
                        case.id,
                        ErrorType.UPDATE,
                        op.id,
                        {op.id: {"memory": {unit.name: degraded}}},
                        "degrade the memory",
                    )
                )
            return planned
        return []

    def _by_a_later_decision(
        self, case: Case, unit: VariableVersion, holder: VariableVersion, before: int
    ) -> list[Injection]:
        """No update touched the unit: a later memory decision (Mem0's `update_events`, about another
        fact) is made to also UPDATE it to nothing of the evidence, or DELETE it, as a confused memory
        manager does. The deletion happens in the `delete_memory` step the replay records inside that
        decision, so its label is moved there once replayed (`meta["deleted_unit"]`)."""
        graph = self.graph
        for op in graph.ops_by_category("update"):
            if not holder.seq < op.seq < before:
                continue
            events = next((v for v in graph.outputs(op.id) if v.name == _DECISION_EVENTS), None)
            planned = graph.value(events.id) if events is not None else None
            if not isinstance(planned, list) or any(
                isinstance(e, dict) and e.get("id") == unit.name for e in planned
            ):
                continue
            old = graph.value(holder.id)
            old_text = old.get("memory") if isinstance(old, dict) else old
            change = {"id": unit.name, "old_memory": old_text}
            forgotten = {**change, "event": "UPDATE", "text": _FORGOTTEN}
            deleted = {**change, "event": "DELETE", "text": old_text}
            return [
                Injection(
                    graph.run.id,
                    case.id,
                    ErrorType.UPDATE,
                    op.id,
                    {op.id: {"outputs": {_DECISION_EVENTS: [*planned, forgotten]}}},
                    "a later decision degrades the memory",
                ),
                Injection(
                    graph.run.id,
                    case.id,
                    ErrorType.DELETION,
                    op.id,
                    {op.id: {"outputs": {_DECISION_EVENTS: [*planned, deleted]}}},
                    "a later decision deletes the memory",
                    meta={"deleted_unit": unit.name},
                ),
            ]
        return []

    def _retrieval(self, case: Case, target: Target, anatomy: Any) -> Injection | None:
        op = anatomy.retrieval_op
        context = [v for v in anatomy.context_vars if v.category == "retrieved"]
        if op is None or not context:
            return None
        value = self.graph.value(context[-1].id)
        stripped = self._strip(target, value) if isinstance(value, list) else None
        if stripped is None:
            return None
        patch = {op.id: {"outputs": {context[-1].name: stripped}}}
        return Injection(self.graph.run.id, case.id, ErrorType.RETRIEVAL, op.id, patch, "demote the evidence")

    def _response(self, case: Case, target: Target, anatomy: Any) -> Injection | None:
        op = anatomy.answer_op
        wrong = NOT_MENTIONED if NOT_MENTIONED not in case.gold else "yes"
        patch = {op.id: {"outputs": {"prediction": wrong}}}
        return Injection(
            self.graph.run.id, case.id, ErrorType.RESPONSE, op.id, patch, "answer something else"
        )
