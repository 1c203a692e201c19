"""Baselines to compare attributors against: always the answer step, or a seeded random pick."""

from __future__ import annotations

import hashlib
import json
import random
import time
from typing import Any

from ...graph import Case, GraphQueries, Operation, Run
from ...vocabulary import MEMORY_ERROR_TYPES, ErrorType
from ..evidence.anatomy import case_anatomy
from ..model import Attribution, Cost, undetermined

_TYPE_OF_CATEGORY = {
    "extraction": ErrorType.EXTRACTION,
    "update": ErrorType.UPDATE,
    "deletion": ErrorType.DELETION,
    "retrieval": ErrorType.RETRIEVAL,
    "response": ErrorType.RESPONSE,
}


def type_of_step(op: Operation, answer_op: Operation) -> ErrorType | None:
    """The error type a step's category stands for; the case's answer step is a ResponseError
    whatever its category (MemBase files question-answering under `evaluation`)."""
    return ErrorType.RESPONSE if op.id == answer_op.id else _TYPE_OF_CATEGORY.get(op.category)


def run_identity(run: Run) -> str:
    """What names a run across recordings: run ids are fresh each time (a replay's too), so a seeded
    pick keyed by them would change from one benchmark to the next. A replay adds its patches."""
    patches = (run.metadata.get("replay") or {}).get("patches")
    return json.dumps([run.name, run.system, run.conversation, patches], sort_keys=True, default=str)


class LastOpMethod:
    """Always ResponseError at the answer operation: what blaming the last step gets right."""

    name = "last-op"

    def settings(self) -> dict[str, Any]:
        return {}

    def attribute(self, graph: GraphQueries, case: Case) -> Attribution:
        anatomy = case_anatomy(graph, case)
        if anatomy.answer_op is None:
            return undetermined(graph, case, self.name, anatomy.problem or "no answer operation")
        op = anatomy.answer_op
        return Attribution(
            graph.run.id,
            case.id,
            op.id,
            ErrorType.RESPONSE,
            0.0,
            f"baseline: the answer step {op.id}",
            self.name,
        )


class RandomMethod:
    """A seeded random memory operation before the answer, typed by its category: chance level."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def settings(self) -> dict[str, Any]:
        return {"seed": self.seed}

    def attribute(self, graph: GraphQueries, case: Case) -> Attribution:
        started = time.perf_counter()
        anatomy = case_anatomy(graph, case)
        if anatomy.answer_op is None:
            return undetermined(graph, case, self.name, anatomy.problem or "no answer operation")
        answer_op = anatomy.answer_op
        candidates = {
            op.id: op
            for category in _TYPE_OF_CATEGORY
            for op in graph.ops_by_category(category)
            if op.seq < answer_op.seq
        }
        candidates[answer_op.id] = answer_op  # an `evaluation` answer step (MemBase) is a candidate too
        identity = f"{self.seed}:{run_identity(graph.run)}:{case.id}"
        digest = hashlib.blake2b(identity.encode(), digest_size=8).digest()
        rng = random.Random(int.from_bytes(digest, "big"))
        op = rng.choice(sorted(candidates.values(), key=lambda o: o.seq))
        fallback = rng.choice(MEMORY_ERROR_TYPES)  # drawn always, so native runs keep their earlier picks
        error_type = type_of_step(op, answer_op) or fallback
        return Attribution(
            graph.run.id,
            case.id,
            op.id,
            error_type,
            0.0,
            f"baseline: random pick {op.id}",
            self.name,
            cost=Cost(seconds=time.perf_counter() - started),
        )
