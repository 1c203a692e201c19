"""Which tunable of a system governs an operation that failed with an error type, and which way to move it.

Each system declares its routes next to its config (`MemorySystem.routes`): for an operation and an
error type, the settings and prompts that govern it; operations its routes do not name fall back on
their category (a `response` operation is answered like `answer`, a `retrieval` one moves `top_k`).
The optimiser (optimize/routing.py) acts on these routes and the report (report/patterns.py) names
them as what to change next.

Directions: +1 asks for a larger value (wider retrieval, a larger budget, a stricter threshold),
-1 for a smaller one, 0 for either; `CASE` decides per case (the answer-support threshold is raised
by an answer to an unanswerable question and lowered by a wrong abstention).
"""

from __future__ import annotations

from collections.abc import Sequence
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


def on(ops: str, errors: frozenset[str], tunable: str, direction: int, why: str) -> Route:
    """A route from the space-separated operation names `ops` (`*`: any) to `tunable`."""
    return Route(frozenset(ops.split()), errors, tunable, direction, why)


#: The answer step every system shares (answering.py).
ANSWER_ROUTES = (
    on("answer", RESPONSE, "min_answer_support", CASE, "abstain on what the context does not support"),
    on("answer", RESPONSE, "answer_prompt", 0, "the answer prompt misread a context that held the answer"),
)
#: Operations no table names: routed by their category.
CATEGORY_ROUTES: dict[str, tuple[Route, ...]] = {
    "response": ANSWER_ROUTES,
    "retrieval": (on("*", RETRIEVAL, "top_k", +1, "retrieve more"),),
}


def routes_for(
    declared: Sequence[Route], op_name: str, op_category: str | None, error_type: ErrorType
) -> list[Route]:
    """The routes among a system's `declared` ones for an attribution at `op_name` with `error_type`."""
    routes = [r for r in declared if op_name in r.ops]
    if not routes:
        routes = list(CATEGORY_ROUTES.get(op_category or "", ()))
    return [r for r in routes if error_type in r.errors]
