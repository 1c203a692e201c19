"""Conversions between the model's dataclasses and the tuples stored in SQLite rows."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..vocabulary import case_verdict_or_none
from .model import Annotation, Case, Edge, Operation, Run, VariableVersion
from .values import fast_json


class LatestVersion(NamedTuple):
    """A variable's latest version at some seq: where a replay resumes it from."""

    name: str
    version: int
    blob: str | None
    id: str
    deleted: bool


@dataclass(slots=True)
class RunRows:
    """A whole run's rows, for `Store.replace_run`: tuples in the store's column orders (see the
    *_row functions below), so that an importer of millions of rows builds no objects twice."""

    ops: list[tuple] = field(default_factory=list)
    variables: list[tuple] = field(default_factory=list)
    edges: list[tuple] = field(default_factory=list)
    blobs: list[tuple] = field(default_factory=list)
    cases: list[tuple] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


@dataclass(slots=True)
class RunCounts:
    """How big a run is, for listings."""

    ops: int = 0
    versions: int = 0
    units: int = 0
    cases: int = 0
    failed: int = 0


def dumps_or_none(value: Any) -> str | None:
    """JSON text for a metadata column; empty containers and None are stored as NULL."""
    if not value:
        return None
    try:
        return fast_json(value)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(value, ensure_ascii=False, default=str)


def loads_or(text: str | None, default: Any) -> Any:
    return json.loads(text) if text else default


def run_from_row(row: Sequence[Any]) -> Run:
    return Run(
        id=row[0],
        name=row[1],
        system=row[2],
        dataset=row[3],
        conversation=row[4],
        parent_run=row[5],
        status=row[6],
        error=row[7],
        config=loads_or(row[8], {}),
        metadata=loads_or(row[9], {}),
        created_at=row[10],
        finished_at=row[11],
    )


def op_from_row(row: Sequence[Any]) -> Operation:
    return Operation(
        run_id=row[0],
        id=row[1],
        seq=row[2],
        parent_op=row[3],
        name=row[4],
        category=row[5],
        started_at=row[6],
        ended_at=row[7],
        status=row[8],
        metadata=loads_or(row[9], {}),
    )


def var_from_row(row: Sequence[Any]) -> VariableVersion:
    # Positional on purpose: this builds tens of thousands of versions per memory-state query.
    return VariableVersion(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7]), row[8], loads_or(row[9], {})
    )


def edge_from_row(row: Sequence[Any]) -> Edge:
    return Edge(
        run_id=row[0],
        op_id=row[1],
        var_id=row[2],
        role=row[3],
        source=row[4],
        metadata=loads_or(row[5], None),
    )


def case_from_row(row: Sequence[Any]) -> Case:
    return Case(
        run_id=row[0],
        id=row[1],
        question=row[2],
        gold=loads_or(row[3], []),
        prediction=row[4],
        prediction_var=row[5],
        verdict=case_verdict_or_none(row[6]),
        score=row[7],
        evidence=loads_or(row[8], []),
        category=row[9],
        metadata=loads_or(row[10], {}),
    )


def case_row(case: Case) -> tuple:
    """The tuple a case is written as."""
    return (
        case.run_id,
        case.id,
        case.question,
        dumps_or_none(case.gold),
        case.prediction,
        case.prediction_var,
        None if case.verdict is None else str(case.verdict),  # a plain str: the journal marshals rows
        case.score,
        dumps_or_none(case.evidence),
        case.category,
        dumps_or_none(case.metadata),
    )


def op_row(op: Operation) -> tuple:
    """The tuple an operation is written as."""
    return (
        op.run_id,
        op.id,
        op.seq,
        op.parent_op,
        op.name,
        op.category,
        op.started_at,
        op.ended_at,
        op.status,
        dumps_or_none(op.metadata),
    )


def var_row(var: VariableVersion) -> tuple:
    """The tuple a variable version is written as."""
    return (
        var.run_id,
        var.id,
        var.name,
        var.version,
        var.seq,
        var.category,
        var.blob,
        int(var.deleted),
        var.created_at,
        dumps_or_none(var.metadata),
    )


def edge_row(edge: Edge) -> tuple:
    """The tuple an edge is written as."""
    return (edge.run_id, edge.op_id, edge.var_id, edge.role, edge.source, dumps_or_none(edge.metadata))
