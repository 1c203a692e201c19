"""Route an attribution to the tunables its blamed operation uses, with the direction it argues for.

Two sources, merged: the prompt variables recorded as inputs of the blamed operation or of the
`llm` calls nested in it (an LLM engine records the prompt it used, so its name is the config field),
and the routes the system declares (`MemorySystem.routes`, systems/tunable_routes.py: the settings that
govern an operation for an error type and which way to move them).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..eval import is_unanswerable, says_unanswerable
from ..graph import Case, GraphQueries, Operation
from ..systems.registry import system_routes
from ..systems.tunable_routes import (
    ANSWER_ROUTES,
    ANY,
    CASE,
    CATEGORY_ROUTES,
    EXTRACTION,
    RESPONSE,
    RETRIEVAL,
    UPDATE,
    Route,
    routes_for,
)
from ..vocabulary import ErrorType

__all__ = [
    "ANSWER_ROUTES",
    "ANY",
    "CASE",
    "CATEGORY_ROUTES",
    "EXTRACTION",
    "RESPONSE",
    "RETRIEVAL",
    "UPDATE",
    "Route",
    "Signal",
    "answer_direction",
    "prompt_inputs",
    "route",
]


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
    system: str, graph: GraphQueries, op: Operation, error_type: ErrorType, case: Case, fields: set[str]
) -> list[Signal]:
    """The tunables (config fields of `fields`) an attribution at `op` with `error_type` points at."""
    signals: dict[str, Signal] = {}
    for name in prompt_inputs(graph, op):
        if name in fields:
            signals[name] = Signal(name, 0, f"{op.name} read this prompt")
    for r in routes_for(system_routes(system), op.name, op.category, error_type):
        if r.tunable not in fields or r.tunable in signals:
            continue
        direction = answer_direction(case) if r.direction == CASE else r.direction
        if r.direction == CASE and direction == 0:
            continue  # a wrong span: no threshold fixes it
        signals[r.tunable] = Signal(r.tunable, direction, r.why)
    return list(signals.values())
