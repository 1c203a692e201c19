"""Where memory lost the information a failed question needed: the decisive update or deletion.

Memory held the information once and not at question time. Several units may have held it (Mem0
keeps near-duplicates, EverMemOS an episode beside its facts), so losing one of them while a sibling
still holds it changes nothing the answer could see. The decisive loss is the earliest one after
which no live unit carried the information: restoring it (later operations behaving ideally) puts
the information back in the store, while restoring a harmless earlier loss would not have mattered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...graph import GraphQueries, Operation, VariableVersion
from ...vocabulary import ErrorType


@dataclass(slots=True)
class Loss:
    """Where a memory unit that carried the information stopped carrying it."""

    unit: str
    kept: VariableVersion
    op: Operation
    error_type: ErrorType
    after: Any
    #: After this loss, did any live memory unit still carry the information?
    harmless: bool = False


def live_state(graph: GraphQueries, seq: int) -> dict[str, VariableVersion]:
    """The memory units live just before `seq`: a unit leaves only by its own tombstone version."""
    return graph.memory_state_at(seq - 1)


def losses(graph: GraphQueries, carrying: dict[str, float], before: int) -> list[Loss]:
    """Every loss of the information before seq `before`, in order, each marked harmless or not.

    A unit loses it when a version that carries it is followed by one that does not (an update) or
    by its own tombstone (a deletion); a unit may carry it, lose it, and carry it again. Losses of
    one operation are judged together, after all its changes (an update may move the information to
    another unit). What else the operation did (deleting another unit, writing MemBase's shared
    DELETED node, which names no unit: the importer turns its links into tombstones) deletes nothing.
    """
    events: list[tuple[int, int, str, bool, Loss | None]] = []  # (op seq, seq, unit, carries, loss)
    for unit in sorted({graph.var(i).name for i in carrying}):
        versions = [v for v in graph.versions(unit) if v.seq < before]
        held: VariableVersion | None = None
        for version in versions:
            carries = version.id in carrying and not version.deleted
            op = producer_of(graph, version)
            if held is not None and not carries and op is not None:
                after = None if version.deleted else graph.value(version.id)
                kind = ErrorType.DELETION if version.deleted else ErrorType.UPDATE
                events.append((op.seq, version.seq, unit, False, Loss(unit, held, op, kind, after)))
            elif carries and held is None:
                events.append((op.seq if op else version.seq, version.seq, unit, True, None))
            held = version if carries else None
    found: list[Loss] = []
    live: set[str] = set()
    events.sort(key=lambda e: (e[0], e[1]))
    for index, (op_seq, _, unit, carries, loss) in enumerate(events):
        if carries:
            live.add(unit)
        else:
            live.discard(unit)
        if loss is not None:
            found.append(loss)
        if index + 1 == len(events) or events[index + 1][0] != op_seq:  # the operation's last change
            for pending in found:
                if pending.op.seq == op_seq:
                    pending.harmless = bool(live)
    return found


def producer_of(graph: GraphQueries, version: VariableVersion) -> Operation | None:
    """The operation that wrote a memory version: its earliest writer that is not a retrieval.

    A search that returns a memory can look like one more writer of it (foreign graphs link the
    query to what it found); the change that made the version happened before, in construction.
    """
    producers = graph.producers(version.id)
    writers = [op for op in producers if op.category != "retrieval"]
    return (writers or producers)[0] if producers else None


def decisive_loss(found: list[Loss]) -> Loss | None:
    """The earliest loss that left no unit carrying the information (else the last loss)."""
    harmful = [loss for loss in found if not loss.harmless]
    return harmful[0] if harmful else (found[-1] if found else None)
