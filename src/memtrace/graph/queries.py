"""Questions asked of one run's graph: lineage, an operation's subgraph, a unit's lifecycle,
the memory state as of a seq, and the diff between two seqs.

`GraphQueries` implements them once over a few primitives; `Graph` answers the primitives with
indexed SQL (large runs, nothing loaded up front) and `GraphView` (view.py) from memory.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ..errors import NotFoundError
from .checkpoints import state_rows_at
from .model import (
    MEMORY_ENTRY,
    LifecycleEntry,
    LineageNode,
    MemoryDiff,
    Operation,
    Run,
    VariableVersion,
)
from .rows import op_from_row, var_from_row
from .store import OP_COLUMNS, VAR_COLUMNS, Store

T = TypeVar("T")

Direction = Literal["up", "down"]


@dataclass(slots=True)
class OpSubgraph:
    """An operation with the variable versions it read and wrote, and the operations nested in it."""

    op: Operation
    inputs: list[VariableVersion]
    outputs: list[VariableVersion]
    children: list[Operation]


class GraphQueries(ABC):
    """Graph questions written once against a handful of primitives."""

    def derived(self, key: Hashable, build: Callable[[], T]) -> T:
        """What an analysis derives once per graph object (an index, word sets): built on first use,
        gone with the graph. A module-level cache keyed by graph would keep every graph alive."""
        cache: dict[Hashable, Any] | None = self.__dict__.get("_derived")
        if cache is None:
            cache = self.__dict__["_derived"] = {}
        if key not in cache:
            cache[key] = build()
        return cache[key]

    run: Run

    # -- primitives ---------------------------------------------------------------------------

    @abstractmethod
    def op(self, op_id: str) -> Operation: ...

    @abstractmethod
    def var(self, var_id: str) -> VariableVersion: ...

    @abstractmethod
    def has_var(self, var_id: str) -> bool: ...

    @abstractmethod
    def has_op(self, op_id: str) -> bool: ...

    @abstractmethod
    def _neighbours(
        self, kind: str, ids: list[str], direction: Direction
    ) -> dict[str, list[tuple[str, int]]]:
        """For each id, the adjacent nodes (id, seq) one hop up (producers/inputs) or down."""

    @abstractmethod
    def versions(self, name: str) -> list[VariableVersion]:
        """Every version of a variable, oldest first."""

    @abstractmethod
    def children(self, op_id: str) -> list[Operation]: ...

    @abstractmethod
    def ops_by_category(self, category: str) -> list[Operation]: ...

    @abstractmethod
    def memory_state_at(self, seq: int | None = None) -> dict[str, VariableVersion]:
        """Every memory unit's latest version with seq <= `seq`, deleted units left out."""

    @abstractmethod
    def _memory_versions_between(self, after: int, upto: int) -> list[VariableVersion]: ...

    @abstractmethod
    def _latest_versions_at(self, names: Iterable[str], seq: int) -> dict[str, VariableVersion]: ...

    @abstractmethod
    def values(self, versions: Iterable[VariableVersion]) -> dict[str, Any]:
        """Values of many versions, keyed by version id."""

    # -- derived queries ----------------------------------------------------------------------

    def value(self, var_id: str) -> Any:
        version = self.var(var_id)
        return self.values([version])[version.id]

    def inputs(self, op_id: str) -> list[VariableVersion]:
        return self._sorted_vars(self._neighbours("op", [self.op(op_id).id], "up").get(op_id, []))

    def outputs(self, op_id: str) -> list[VariableVersion]:
        return self._sorted_vars(self._neighbours("op", [self.op(op_id).id], "down").get(op_id, []))

    def producers(self, var_id: str) -> list[Operation]:
        found = self._neighbours("var", [self.var(var_id).id], "up").get(var_id, [])
        return [self.op(i) for i, _ in sorted(found, key=lambda pair: pair[1])]

    def consumers(self, var_id: str) -> list[Operation]:
        found = self._neighbours("var", [self.var(var_id).id], "down").get(var_id, [])
        return [self.op(i) for i, _ in sorted(found, key=lambda pair: pair[1])]

    def subgraph(self, op_id: str) -> OpSubgraph:
        return OpSubgraph(self.op(op_id), self.inputs(op_id), self.outputs(op_id), self.children(op_id))

    def ancestors(self, node_id: str, depth: int | None = None) -> list[LineageNode]:
        """Everything the node was derived from, nearest first (one hop = var<->op)."""
        return self._walk(node_id, "up", depth)

    def descendants(self, node_id: str, depth: int | None = None) -> list[LineageNode]:
        """Everything derived from the node, nearest first."""
        return self._walk(node_id, "down", depth)

    def lifecycle(self, unit: str, *, values: bool = True) -> list[LifecycleEntry]:
        """The versions of a memory unit (or any variable) with the operations that made them.

        `values=False` leaves every entry's value None: a long-context window with a thousand
        growing versions is cheap to list but costly to decode whole.
        """
        versions = self.versions(unit)
        if not versions:
            raise NotFoundError(f"run {self.run.id}: no variable {unit!r}")
        decoded = self.values(versions) if values else {}
        producers = self._neighbours("var", [v.id for v in versions], "up")
        makers = {
            version.id: min(producers[version.id], key=lambda pair: pair[1])[0]
            for version in versions
            if producers.get(version.id)
        }
        ops = self.ops_by_id(set(makers.values()))
        entries = []
        for i, version in enumerate(versions):
            op = ops.get(makers[version.id]) if version.id in makers else None
            change = "delete" if version.deleted else ("create" if i == 0 else "update")
            entries.append(LifecycleEntry(version, op, decoded.get(version.id), change))
        return entries

    def ops_by_id(self, op_ids: Iterable[str]) -> dict[str, Operation]:
        """Many operations by id (ids naming no operation are left out)."""
        found = {}
        for op_id in op_ids:
            if self.has_op(op_id):
                found[op_id] = self.op(op_id)
        return found

    def memory_values_at(self, seq: int | None = None) -> dict[str, Any]:
        """The memory state as of a seq, as unit name -> value."""
        state = self.memory_state_at(seq)
        values = self.values(state.values())
        return {name: values[version.id] for name, version in state.items()}

    def diff(self, seq_a: int, seq_b: int) -> MemoryDiff:
        """What memory units did between two seqs: created, changed (old, new), deleted."""
        if seq_b < seq_a:
            seq_a, seq_b = seq_b, seq_a
        touched = {v.name for v in self._memory_versions_between(seq_a, seq_b)}
        before = self._latest_versions_at(touched, seq_a)
        after = self._latest_versions_at(touched, seq_b)
        values = self.values([*before.values(), *after.values()])
        diff = MemoryDiff()
        for name in sorted(touched):
            old, new = before.get(name), after.get(name)
            old_live = old is not None and not old.deleted
            new_live = new is not None and not new.deleted
            if new_live and not old_live:
                diff.created[name] = values[new.id]
            elif old_live and not new_live:
                diff.deleted[name] = values[old.id]
            elif old_live and new_live and old.blob != new.blob:
                diff.changed[name] = (values[old.id], values[new.id])
        return diff

    def memory_units(self) -> list[str]:
        """Names of every memory unit ever created in the run."""
        return sorted({v.name for v in self._memory_versions_between(-1, 2**62)})

    # -- helpers ------------------------------------------------------------------------------

    def _kind_of(self, node_id: str) -> str:
        if self.has_var(node_id):
            return "var"
        if self.has_op(node_id):
            return "op"
        raise NotFoundError(f"run {self.run.id}: no operation or variable {node_id!r}")

    def _walk(self, node_id: str, direction: Direction, depth: int | None) -> list[LineageNode]:
        """Breadth-first over var<->op hops; each level in seq order, so results are deterministic."""
        kind = self._kind_of(node_id)
        seen = {node_id}
        frontier = [node_id]
        found: list[LineageNode] = []
        level = 0
        while frontier and (depth is None or level < depth):
            level += 1
            next_kind = "op" if kind == "var" else "var"
            adjacent = self._neighbours(kind, frontier, direction)
            reached: dict[str, int] = {}
            for pairs in adjacent.values():
                for other, seq in pairs:
                    if other not in seen:
                        reached[other] = seq
            seen.update(reached)
            ordered = sorted(reached.items(), key=lambda item: item[1])
            found.extend(LineageNode(next_kind, other, level, seq) for other, seq in ordered)
            frontier = [other for other, _ in ordered]
            kind = next_kind
        return found

    def _sorted_vars(self, pairs: list[tuple[str, int]]) -> list[VariableVersion]:
        return [self.var(i) for i, _ in sorted(pairs, key=lambda pair: pair[1])]


class Graph(GraphQueries):
    """Queries answered straight from the SQLite store: nothing is loaded up front."""

    def __init__(self, store: Store, run: Run) -> None:
        self.store = store
        self.run = run
        self._conn = store.conn

    def op(self, op_id: str) -> Operation:
        row = self._conn.execute(
            f"SELECT {OP_COLUMNS} FROM ops WHERE run=? AND id=?", (self.run.id, op_id)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"run {self.run.id}: no operation {op_id!r}")
        return op_from_row(row)

    def ops_by_id(self, op_ids: Iterable[str]) -> dict[str, Operation]:
        """Many operations in few queries (a long-context window's thousand versions each have one)."""
        wanted = list(op_ids)
        found: dict[str, Operation] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for op in self.store.ops(self.run.id, f"AND id IN ({marks})", chunk):
                found[op.id] = op
        return found

    def var(self, var_id: str) -> VariableVersion:
        row = self._conn.execute(
            f"SELECT {VAR_COLUMNS} FROM vars WHERE run=? AND id=?", (self.run.id, var_id)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"run {self.run.id}: no variable version {var_id!r}")
        return var_from_row(row)

    def has_var(self, var_id: str) -> bool:
        sql = "SELECT 1 FROM vars WHERE run=? AND id=?"
        return self._conn.execute(sql, (self.run.id, var_id)).fetchone() is not None

    def has_op(self, op_id: str) -> bool:
        sql = "SELECT 1 FROM ops WHERE run=? AND id=?"
        return self._conn.execute(sql, (self.run.id, op_id)).fetchone() is not None

    def _neighbours(
        self, kind: str, ids: list[str], direction: Direction
    ) -> dict[str, list[tuple[str, int]]]:
        # var up -> producing ops (role out); var down -> consuming ops (role in);
        # op up -> input vars (role in); op down -> output vars (role out).
        if kind == "var":
            key, other, role, table = "var", "op", "out" if direction == "up" else "in", "ops"
        else:
            key, other, role, table = "op", "var", "in" if direction == "up" else "out", "vars"
        out: dict[str, list[tuple[str, int]]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            # The planner, without statistics, may scan a whole run through the other index.
            sql = (
                f"SELECT DISTINCT e.{key}, e.{other}, n.seq FROM edges e INDEXED BY edges_{key}"
                f" JOIN {table} n ON n.run = e.run AND n.id = e.{other}"
                f" WHERE e.run=? AND e.{key} IN ({marks}) AND e.role=?"
            )
            for node, adjacent, seq in self._conn.execute(sql, (self.run.id, *chunk, role)):
                out.setdefault(node, []).append((adjacent, seq))
        return out

    def versions(self, name: str) -> list[VariableVersion]:
        rows = self._conn.execute(
            f"SELECT {VAR_COLUMNS} FROM vars INDEXED BY vars_name WHERE run=? AND name=? ORDER BY version",
            (self.run.id, name),
        ).fetchall()
        return [var_from_row(row) for row in rows]

    def children(self, op_id: str) -> list[Operation]:
        rows = self._conn.execute(
            f"SELECT {OP_COLUMNS} FROM ops INDEXED BY ops_parent"
            " WHERE run=? AND parent_op=? AND parent_op IS NOT NULL ORDER BY seq",
            (self.run.id, op_id),
        ).fetchall()
        return [op_from_row(row) for row in rows]

    def ops_by_category(self, category: str) -> list[Operation]:
        return self.store.ops(self.run.id, "AND category=?", (category,))

    def memory_state_at(self, seq: int | None = None) -> dict[str, VariableVersion]:
        self.store.fresh_checkpoints(self.run.id)
        rows = state_rows_at(self._conn, self.run.id, 2**62 if seq is None else seq)
        return {row[2]: var_from_row(row) for row in rows}

    def _memory_versions_between(self, after: int, upto: int) -> list[VariableVersion]:
        return self.store.variables(
            self.run.id, f"AND category='{MEMORY_ENTRY}' AND seq>? AND seq<=?", (after, upto)
        )

    def _latest_versions_at(self, names: Iterable[str], seq: int) -> dict[str, VariableVersion]:
        out: dict[str, VariableVersion] = {}
        sql = (
            f"SELECT {VAR_COLUMNS} FROM vars INDEXED BY vars_name"
            " WHERE run=? AND name=? AND seq<=? ORDER BY version DESC LIMIT 1"
        )
        for name in names:
            row = self._conn.execute(sql, (self.run.id, name, seq)).fetchone()
            if row is not None:
                out[name] = var_from_row(row)
        return out

    def values(self, versions: Iterable[VariableVersion]) -> dict[str, Any]:
        versions = list(versions)
        blobs = self.store.blob_values(v.blob for v in versions if v.blob)
        return {v.id: blobs.get(v.blob) if v.blob else None for v in versions}
