"""A test double of a user's own attribution method, in one module: blame the retrieval the answer read.

Nothing in memtrace names it: the tests register it with `register_attributor()` or through a
`memtrace.attributors` entry point and call it with `memtrace attribute --method retrieval-blame`.
"""

from __future__ import annotations

from typing import Any

from memtrace.attribution import Attribution
from memtrace.graph import Case, GraphQueries


class RetrievalBlame:
    """RetrievalError at the operation that produced the `retrieved` context the answer step read."""

    name = "retrieval-blame"

    def __init__(self, confidence: float = 0.5) -> None:
        self.confidence = confidence

    def settings(self) -> dict[str, Any]:
        return {"confidence": self.confidence}

    def attribute(self, graph: GraphQueries, case: Case) -> Attribution:
        answer = graph.producers(case.prediction_var)[-1] if case.prediction_var else None
        read = [v for v in graph.inputs(answer.id) if v.category == "retrieved"] if answer else []
        if not read:
            return Attribution(graph.run.id, case.id, None, "Undetermined", 0.0, "no context", self.name)
        (retrieval,) = graph.producers(read[-1].id)[-1:]
        why = f"the answer read {read[-1].name} from {retrieval.name}"
        return Attribution(
            graph.run.id, case.id, retrieval.id, "RetrievalError", self.confidence, why, self.name
        )
