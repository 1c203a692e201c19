"""The anatomy of a case in a graph: which operation answered it, from what context, retrieved by
which operation, and from when on the question was being answered (its seq).

Works on memtrace's own runs (an `answer` op reading a `retrieved` list) and on imported graphs
where retrieval links memory entries straight to the query (MemBase's Mem0 instrumentation). When a
case knows its query node, its steps are the ones that read that query: content identity lets many
cases share one prediction node, so "the last producer of the prediction" may be another case's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import NotFoundError
from ...graph import JUDGE_OP_NAME, QUERY_VAR, Case, GraphQueries, Operation, VariableVersion

_CONTEXT_CATEGORIES = {"retrieved", "context", "memory_entry"}
#: Categories of steps that answer: memtrace's `response`, MemBase's question-answering `evaluation`.
_ANSWER_CATEGORIES = ("response", "evaluation")


@dataclass(slots=True)
class CaseAnatomy:
    answer_op: Operation | None
    retrieval_op: Operation | None = None
    context_vars: list[VariableVersion] = field(default_factory=list)
    question_seq: int = 2**62
    problem: str | None = None


def case_anatomy(graph: GraphQueries, case: Case) -> CaseAnatomy:
    """Locate the answer and retrieval operations of a case and the seq its question stage began."""
    query_var = _query_of(graph, case)
    if query_var is not None:
        found = _anatomy_from_query(graph, case, query_var)
        if found is not None:
            return found
    if not case.prediction_var:
        return CaseAnatomy(
            None,
            problem=f"case {case.id} has no prediction variable (record the answer step and pass"
            " case.predict(..., var=...))",
        )
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
    retrieval = _retrieval_of(graph, answer_op, context) or _retrieval_asking(graph, case, answer_op)
    return CaseAnatomy(answer_op, retrieval, context, _question_start(graph, answer_op, retrieval))


def _query_of(graph: GraphQueries, case: Case) -> str | None:
    """The case's query node: as imported, else the query holding its question that one of several
    writers of its (shared) prediction read. None when the prediction alone tells the answer step."""
    known = case.metadata.get(QUERY_VAR)
    if isinstance(known, str) and graph.has_var(known):
        return known
    if not case.prediction_var or not graph.has_var(case.prediction_var):
        return None
    writers = graph.producers(case.prediction_var)
    if len(writers) < 2:
        return None
    for op in writers:
        asked = [v for v in graph.inputs(op.id) if "query" in v.category]
        values = graph.values(asked)
        match = next((v.id for v in asked if values[v.id] == case.question), None)
        if match is not None:
            return match
    return None


def _anatomy_from_query(graph: GraphQueries, case: Case, query_var: str) -> CaseAnatomy | None:
    """The steps that read the case's own query: the answer step among them (the one that wrote the
    prediction when several answered) and the latest retrieval before it. None: no answer reads it."""
    readers = graph.consumers(query_var)
    judges = {op.id for op in readers if _is_judge(graph, op, case)}
    answers = [op for op in readers if op.category in _ANSWER_CATEGORIES and op.id not in judges]
    if not answers:
        return None
    wrote = set()
    if case.prediction_var and graph.has_var(case.prediction_var):
        wrote = {op.id for op in graph.producers(case.prediction_var)}
    answer_op = ([op for op in answers if op.id in wrote] or answers)[-1]
    retrievals = [op for op in readers if op.category == "retrieval" and op.seq < answer_op.seq]
    retrieval = retrievals[-1] if retrievals else _retrieval_asking(graph, case, answer_op)
    context = [v for v in graph.inputs(answer_op.id) if v.category in _CONTEXT_CATEGORIES]
    if not context and retrieval is not None:
        found = [*graph.inputs(retrieval.id), *graph.outputs(retrieval.id)]
        context = [v for v in found if v.category in _CONTEXT_CATEGORIES]
    # the question stage began with the first step that read the question (a first retrieval round)
    asked = [op.seq for op in readers if op.seq < answer_op.seq and op.id not in judges]
    start = min([_question_start(graph, answer_op, retrieval), *asked])
    return CaseAnatomy(answer_op, retrieval, context, start)


def _retrieval_asking(graph: GraphQueries, case: Case, answer_op: Operation) -> Operation | None:
    """The latest retrieval before the answer that read the answer's own query node, or one holding the
    case's question: where a search links memories straight to the query (MemBase) and the answer
    reads those memories itself, or each stage was imported with its own copy of the query node."""
    queries = {v.id for v in graph.inputs(answer_op.id) if "query" in v.category}
    found = None
    for op in graph.ops_by_category("retrieval"):
        if op.seq >= answer_op.seq or (found is not None and op.seq <= found.seq):
            continue
        asked = [v for v in graph.inputs(op.id) if "query" in v.category]
        values = graph.values(asked)
        if any(v.id in queries or str(values[v.id]).strip() == case.question.strip() for v in asked):
            found = op
    return found


def _is_judge(graph: GraphQueries, op: Operation, case: Case) -> bool:
    """A judge reads the question and the prediction; it never answers (MemBase: `llm-judge`)."""
    if op.name == JUDGE_OP_NAME:
        return True
    if op.category != "evaluation" or not case.prediction_var:
        return False
    return any(v.id == case.prediction_var for v in graph.inputs(op.id))


def _question_start(graph: GraphQueries, answer_op: Operation, retrieval: Operation | None) -> int:
    """The seq the question stage began: its retrieval or answer, or the scope holding them."""
    start = min(op.seq for op in (answer_op, retrieval) if op is not None)
    if answer_op.parent_op is not None and graph.has_op(answer_op.parent_op):
        parent = graph.op(answer_op.parent_op)
        if parent.category not in ("response", "retrieval"):  # the scope of the whole question
            start = min(start, parent.seq)
    return start


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
