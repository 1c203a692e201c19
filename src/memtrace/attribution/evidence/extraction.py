"""Where information that never reached memory was dropped: the operation an ExtractionError blames.

The information flows from the evidence messages through construction operations (buffers, fact
extraction, memcells) toward memory units. An operation drops it when it consumed a value carrying
it and none of its outputs carries it on: to a memory unit, or to a value a later construction step
reads. A carrying output nothing reads (EverMemOS's raw memcell, which retrieval never searches) is
a dead end, not a keeper. Of the droppers, the blame goes to one whose job was to write memory (an
extraction, or an operation that wrote memory units), deepest along the flow, then earliest: a
buffer or a boundary decision passing the message along is not where it failed to enter memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...graph import MEMORY_ENTRY, GraphQueries, Operation, VariableVersion

#: Operation categories information flows through during construction (not queries or judges).
CONSTRUCTION = {"construction", "extraction", "update", "deletion", "embedding", "mutation", "operation"}


@dataclass(slots=True)
class Drop:
    """The operation that dropped the information, the value it last had it in, and how deep."""

    op: Operation
    holder: VariableVersion
    depth: int
    writes_memory: bool


def find_dropper(
    graph: GraphQueries, evidence: list[VariableVersion], carries: Callable[[Any], bool], before: int
) -> Drop | None:
    """The operation to blame for information that no memory unit ever held (None if none consumed it)."""
    drops: list[Drop] = []
    kept_by: dict[str, list[VariableVersion]] = {}  # per operation: its outputs that carry it on
    frontier = [(v, 0) for v in evidence]
    seen = {v.id for v in evidence}
    while frontier:
        var, level = frontier.pop(0)
        for op in graph.consumers(var.id):
            if op.seq >= before or op.category not in CONSTRUCTION:
                continue
            if op.id not in kept_by:
                kept_by[op.id] = _carried_on(graph, op, carries, before)
            kept = kept_by[op.id]
            if not kept:
                writes = op.category == "extraction" or any(
                    o.category == MEMORY_ENTRY for o in graph.outputs(op.id)
                )
                drops.append(Drop(op, var, level, writes))
            for out in kept:
                if out.id not in seen:
                    seen.add(out.id)
                    frontier.append((out, level + 1))
    if not drops:
        return None
    writers = [d for d in drops if d.writes_memory] or drops
    return min(writers, key=lambda d: (-d.depth, d.op.seq))


def _carried_on(
    graph: GraphQueries, op: Operation, carries: Callable[[Any], bool], before: int
) -> list[VariableVersion]:
    """The outputs of `op` that carry the information toward memory (a memory unit, or read later)."""
    outputs = graph.outputs(op.id)
    values = graph.values(outputs)
    return [
        out
        for out in outputs
        if carries(values[out.id])
        and (
            out.category == MEMORY_ENTRY
            or any(c.seq < before and c.category in CONSTRUCTION for c in graph.consumers(out.id))
        )
    ]
