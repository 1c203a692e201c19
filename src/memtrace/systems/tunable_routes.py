"""Which tunable of a system governs an operation that failed with an error type, and which way to move it.

The declared table per system (`ROUTES`) names, for an operation and an error type, the settings and
prompts that govern it; operations the table does not name fall back on their category (a `response`
operation is answered like `answer`, a `retrieval` one moves `top_k`). The optimiser (optimize/routing.py)
acts on these routes and the report (report/patterns.py) names them as what to change next, so the table
lives here, with the systems whose configs it names.

Directions: +1 asks for a larger value (wider retrieval, a larger budget, a stricter threshold),
-1 for a smaller one, 0 for either; `CASE` decides per case (the answer-support threshold is raised
by an answer to an unanswerable question and lowered by a wrong abstention).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..vocabulary import ErrorType

CASE = 2  # direction decided per case by `answer_direction`

EXTRACTION = frozenset({ErrorType.EXTRACTION})
UPDATE = frozenset({ErrorType.UPDATE, ErrorType.DELETION})
RETRIEVAL = frozenset({ErrorType.RETRIEVAL})
RESPONSE = frozenset({ErrorType.RESPONSE})
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


def routes_for(system: str, op_name: str, op_category: str | None, error_type: ErrorType) -> list[Route]:
    """The routes of `system` for an attribution at an operation named `op_name` with `error_type`."""
    routes = [r for r in ROUTES.get(system, ()) if op_name in r.ops]
    if not routes:
        routes = list(CATEGORY_ROUTES.get(op_category or "", ()))
    return [r for r in routes if error_type in r.errors]
