"""An in-memory view of one run, loaded in one pass, for analyses that walk the graph a lot.

Values are not loaded with the structure; `values()` fetches the blobs it is asked for once and
keeps them, so a walk that touches a few hundred versions reads only those.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ..errors import NotFoundError
from .model import MEMORY_ENTRY, Edge, Operation, Run, VariableVersion
from .queries import Direction, GraphQueries
from .store import Store


class GraphView(GraphQueries):
    """All operations, variable versions and edges of a run held in dictionaries."""

    def __init__(self, store: Store, run: Run) -> None:
        self.store = store
        self.run = run
        self.ops: dict[str, Operation] = {op.id: op for op in store.ops(run.id)}
        self.vars: dict[str, VariableVersion] = {v.id: v for v in store.variables(run.id)}
        self.edges: list[Edge] = store.edges(run.id)
        self._adjacent: dict[tuple[str, str], dict[str, list[str]]] = {
            key: defaultdict(list) for key in (("var", "up"), ("var", "down"), ("op", "up"), ("op", "down"))
        }
        for edge in self.edges:
            if edge.role == "out":
                _add_once(self._adjacent["var", "up"][edge.var_id], edge.op_id)
                _add_once(self._adjacent["op", "down"][edge.op_id], edge.var_id)
            else:
                _add_once(self._adjacent["var", "down"][edge.var_id], edge.op_id)
                _add_once(self._adjacent["op", "up"][edge.op_id], edge.var_id)
        self._versions: dict[str, list[VariableVersion]] = defaultdict(list)
        for version in self.vars.values():  # already in seq order
            self._versions[version.name].append(version)
        for versions in self._versions.values():
            versions.sort(key=lambda v: v.version)
        self._children: dict[str, list[Operation]] = defaultdict(list)
        for op in self.ops.values():
            if op.parent_op is not None:
                self._children[op.parent_op].append(op)
        self._memory = [v for v in self.vars.values() if v.category == MEMORY_ENTRY]
        self._memory_seqs = [v.seq for v in self._memory]
        self._value_cache: dict[str, Any] = {}

    def op(self, op_id: str) -> Operation:
        try:
            return self.ops[op_id]
        except KeyError:
            raise NotFoundError(f"run {self.run.id}: no operation {op_id!r}") from None

    def var(self, var_id: str) -> VariableVersion:
        try:
            return self.vars[var_id]
        except KeyError:
            raise NotFoundError(f"run {self.run.id}: no variable version {var_id!r}") from None

    def has_var(self, var_id: str) -> bool:
        return var_id in self.vars

    def has_op(self, op_id: str) -> bool:
        return op_id in self.ops

    def _neighbours(
        self, kind: str, ids: list[str], direction: Direction
    ) -> dict[str, list[tuple[str, int]]]:
        table = self._adjacent[kind, direction]
        nodes = self.ops if kind == "var" else self.vars
        return {i: [(j, nodes[j].seq) for j in table[i] if j in nodes] for i in ids if i in table}

    def versions(self, name: str) -> list[VariableVersion]:
        return list(self._versions.get(name, []))

    def children(self, op_id: str) -> list[Operation]:
        return list(self._children.get(op_id, []))

    def ops_by_category(self, category: str) -> list[Operation]:
        return [op for op in self.ops.values() if op.category == category]

    def memory_state_at(self, seq: int | None = None) -> dict[str, VariableVersion]:
        end = len(self._memory) if seq is None else bisect_right(self._memory_seqs, seq)
        latest: dict[str, VariableVersion] = {}
        for version in self._memory[:end]:
            latest[version.name] = version
        return {name: v for name, v in latest.items() if not v.deleted}

    def _memory_versions_between(self, after: int, upto: int) -> list[VariableVersion]:
        lo, hi = bisect_right(self._memory_seqs, after), bisect_right(self._memory_seqs, upto)
        return self._memory[lo:hi]

    def _latest_versions_at(self, names: Iterable[str], seq: int) -> dict[str, VariableVersion]:
        out: dict[str, VariableVersion] = {}
        for name in names:
            candidates = [v for v in self._versions.get(name, []) if v.seq <= seq]
            if candidates:
                out[name] = candidates[-1]
        return out

    def values(self, versions: Iterable[VariableVersion]) -> dict[str, Any]:
        versions = list(versions)
        missing = {v.blob for v in versions if v.blob and v.blob not in self._value_cache}
        if missing:
            self._value_cache.update(self.store.blob_values(missing))
        return {v.id: self._value_cache.get(v.blob) if v.blob else None for v in versions}

    def ops_in_order(self) -> list[Operation]:
        return sorted(self.ops.values(), key=lambda o: o.seq)


def _add_once(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)
