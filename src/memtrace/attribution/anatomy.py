"""The anatomy of a case in a graph: which operation answered it, from what context, retrieved by
which operation, and from when on the question was being answered (its seq).

Works on memtrace's own runs (an `answer` op reading a `retrieved` list) and on imported graphs
where retrieval links memory entries straight to the query (MemBase's Mem0 instrumentation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..graph import Case, GraphQueries, NotFoundError, Operation, VariableVersion

_CONTEXT_CATEGORIES = {"retrieved", "context", "memory_entry"}


@dataclass(slots=True)
class CaseAnatomy:
    answer_op: Operation | None
    retrieval_op: Operation | None = None
    context_vars: list[VariableVersion] = field(default_factory=list)
    question_seq: int = 2**62
    problem: str | None = None


def case_anatomy(graph: GraphQueries, case: Case) -> CaseAnatomy:
    """Locate the answer and retrieval operations of a case and the seq its question stage began."""
    if not case.prediction_var:
        return CaseAnatomy(None, problem=f"case {case.id} has no prediction variable")
    try:
        producers = graph.producers(case.prediction_var)
    except NotFoundError:
        return CaseAnatomy(None, problem=f"prediction variable {case.prediction_var} is not in the graph")
    if not producers:
        return CaseAnatomy(None, problem=f"no operation produced {case.prediction_var}")
    answers = [op for op in producers if op.category == "response"]
    answer_op = (answers or producers)[-1]
    inputs = graph.inputs(answer_op.id)
    context = [v for v in inputs if v.category in _CONTEXT_CATEGORIES]
    retrieval = _retrieval_of(graph, answer_op, context)
    start = min(op.seq for op in (answer_op, retrieval) if op is not None)
    if answer_op.parent_op is not None and graph.has_op(answer_op.parent_op):
        parent = graph.op(answer_op.parent_op)
        if parent.category not in ("response", "retrieval"):  # the scope of the whole question
            start = min(start, parent.seq)
    return CaseAnatomy(answer_op, retrieval, context, start)


def _retrieval_of(
    graph: GraphQueries, answer_op: Operation, context: list[VariableVersion]
) -> Operation | None:
    """The retrieval operation whose output the answer read (else the nearest one upstream)."""
    made_by = [op for v in context for op in graph.producers(v.id) if op.category == "retrieval"]
    if made_by:
        return max(made_by, key=lambda op: op.seq)
    upstream = [n for n in graph.ancestors(answer_op.id, depth=4) if n.kind == "op"]
    retrievals = [graph.op(n.id) for n in upstream if graph.op(n.id).category == "retrieval"]
    return max(retrievals, key=lambda op: op.seq) if retrievals else None
