"""Route an attribution to the tunables its blamed operation uses, with the direction it argues for.

Two sources, merged: the prompt variables recorded as inputs of the blamed operation or of the
`llm` calls nested in it (an LLM engine records the prompt it used, so its name is the config field),
and a declared table per system (`ROUTES`) naming, for an operation and an error type, the settings
that govern it and which way to move them. Operations the table does not name fall back on their
category (a `response` operation is answered like `answer`, a `retrieval` one moves `top_k`).

Directions: +1 asks for a larger value (wider retrieval, a larger budget, a stricter threshold),
-1 for a smaller one, 0 for either; `CASE` decides per case (the answer-support threshold is raised
by an answer to an unanswerable question and lowered by a wrong abstention).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..eval import is_unanswerable, says_unanswerable
from ..graph import Case, GraphQueries, Operation

CASE = 2  # direction decided per case by `answer_direction`

EXTRACTION = frozenset({"ExtractionError"})
UPDATE = frozenset({"UpdateError", "DeletionError"})
RETRIEVAL = frozenset({"RetrievalError"})
RESPONSE = frozenset({"ResponseError"})
ANY = EXTRACTION | UPDATE | RETRIEVAL | RESPONSE


@dataclass(frozen=True, slots=True)
class Route:
    """Operations and error types -> one tunable, moved in `direction`, because `why`."""

    ops: frozenset[str]
    errors: frozenset[str]
    tunable: str
    direction: int
    why: str


def _r(ops: str, errors: frozenset[str], tunable: str, direction: int, why: str) -> Route:
    return Route(frozenset(ops.split()), errors, tunable, direction, why)


#: The answer step every system shares (answering.py).
ANSWER_ROUTES = (
    _r("answer", RESPONSE, "min_answer_support", CASE, "abstain on what the context does not support"),
    _r("answer", RESPONSE, "answer_prompt", 0, "the answer prompt misread a context that held the answer"),
)
_RETRIEVED = "retrieve retrieve_round1 retrieve_round2"

ROUTES: dict[str, tuple[Route, ...]] = {
    "long_context": (
        *ANSWER_ROUTES,
        _r("trim_memory memory_update", UPDATE, "max_tokens", +1, "trimming dropped it: a larger budget"),
        _r("retrieve", RETRIEVAL, "max_tokens", +1, "the unit handed over no longer held it"),
    ),
    "rag": (
        *ANSWER_ROUTES,
        _r("retrieve", RETRIEVAL, "top_k", +1, "the document ranked below top_k: retrieve more"),
        _r("retrieve", RETRIEVAL, "chunk_tokens", +1, "larger documents carry more around each hit"),
        _r("retrieve", RETRIEVAL, "retrieval", 0, "another ranking"),
        _r("buffer_message add_document", EXTRACTION, "chunk_tokens", 0, "documents cut the evidence"),
        _r("buffer_message add_document", EXTRACTION, "split_sessions", 0, "documents cut the evidence"),
    ),
    "mem0": (
        *ANSWER_ROUTES,
        _r("extract_facts", EXTRACTION, "fact_extraction_prompt", 0, "the extraction prompt missed it"),
        _r("extract_facts", EXTRACTION, "batch_size", 0, "extract from more or less context at once"),
        _r("update_memory_decision", UPDATE, "update_threshold", +1, "a stricter update threshold"),
        _r("update_memory_decision", UPDATE, "duplicate_threshold", +1, "a stricter duplicate threshold"),
        _r("update_memory_decision", UPDATE, "merge_lines", +1, "merged memories keep more lines"),
        _r("update_memory_decision delete_memory", UPDATE, "update_prompt", 0, "the update prompt lost it"),
        _r("search_memories", ANY, "update_search_k", +1, "compare new facts with more memories"),
        _r("search", RETRIEVAL, "top_k", +1, "the memory ranked below top_k: retrieve more"),
        _r("search", RETRIEVAL, "search_method", 0, "another ranking"),
    ),
    "evermemos": (
        *ANSWER_ROUTES,
        _r("extract_memcell", EXTRACTION, "event_log_prompt", 0, "the event log missed the fact"),
        _r("extract_memcell", EXTRACTION, "episode_prompt", 0, "the episode summary missed it"),
        _r("extract_memcell", EXTRACTION, "foresight_prompt", 0, "the plan was not kept"),
        _r("extract_memcell detect_boundary", EXTRACTION, "max_episode_messages", -1, "smaller episodes"),
        _r("extract_memcell detect_boundary", EXTRACTION, "topic_shift_threshold", 0, "other boundaries"),
        _r("detect_boundary", ANY, "boundary_prompt", 0, "the boundary prompt cut the episode badly"),
        _r(_RETRIEVED, RETRIEVAL, "top_k", +1, "the memory ranked below top_k: retrieve more"),
        _r(_RETRIEVED, RETRIEVAL, "candidates", +1, "fuse more candidates per retriever"),
        _r(_RETRIEVED, RETRIEVAL, "sufficiency_threshold", +1, "ask the second round more often"),
        _r(_RETRIEVED, RETRIEVAL, "max_followups", +1, "more follow-up queries in round 2"),
        _r("check_sufficiency", ANY, "sufficiency_threshold", +1, "the check stopped too early"),
        _r("check_sufficiency", ANY, "sufficiency_prompt", 0, "the sufficiency prompt stopped too early"),
    ),
}

#: Operations no table names: routed by their category.
CATEGORY_ROUTES: dict[str, tuple[Route, ...]] = {
    "response": ANSWER_ROUTES,
    "retrieval": (_r("*", RETRIEVAL, "top_k", +1, "retrieve more"),),
}


@dataclass(slots=True)
class Signal:
    """One attribution pointing at one tunable, with the direction it argues for."""

    tunable: str
    direction: int
    why: str


def answer_direction(case: Case) -> int:
    """+1 (abstain more) for an answer to an unanswerable question, -1 for a wrong abstention, else 0."""
    unanswerable = is_unanswerable(case.gold, case.category)
    abstained = says_unanswerable(case.prediction or "")
    if unanswerable and not abstained:
        return +1
    if abstained and not unanswerable:
        return -1
    return 0


def prompt_inputs(graph: GraphQueries, op: Operation) -> list[str]:
    """Names of the prompt variables the operation (or an LLM call nested in it) read."""
    names = [v.name for v in graph.inputs(op.id) if v.category == "prompt"]
    for child in graph.children(op.id):
        names += [v.name for v in graph.inputs(child.id) if v.category == "prompt"]
    return list(dict.fromkeys(names))


def route(
    system: str, graph: GraphQueries, op: Operation, error_type: str, case: Case, fields: set[str]
) -> list[Signal]:
    """The tunables (config fields of `fields`) an attribution at `op` with `error_type` points at."""
    table = ROUTES.get(system, ())
    routes = [r for r in table if op.name in r.ops]
    if not routes:
        routes = list(CATEGORY_ROUTES.get(op.category, ()))
    signals: dict[str, Signal] = {}
    for name in prompt_inputs(graph, op):
        if name in fields:
            signals[name] = Signal(name, 0, f"{op.name} read this prompt")
    for r in routes:
        if error_type not in r.errors or r.tunable not in fields or r.tunable in signals:
            continue
        direction = answer_direction(case) if r.direction == CASE else r.direction
        if r.direction == CASE and direction == 0:
            continue  # a wrong span: no threshold fixes it
        signals[r.tunable] = Signal(r.tunable, direction, r.why)
    return list(signals.values())
