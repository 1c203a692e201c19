"""`InMemorySink`: a run kept in Python lists, for tests and for embedding memtrace without a workspace."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ..graph.model import Case, Edge, Operation, Run, VariableVersion
from ..graph.values import decode_value

__all__ = ["InMemorySink"]


class InMemorySink:
    """Keeps every event of the runs it is attached to; values are kept encoded, as the store keeps them.

    `events` lists (event name, payload) in arrival order, for tests that check what a sink saw.
    """

    def __init__(self) -> None:
        self.runs: dict[str, Run] = {}
        self.ops: dict[str, Operation] = {}
        self.versions: dict[str, VariableVersion] = {}
        self.edges: list[Edge] = []
        self.cases: dict[str, Case] = {}
        self.op_io: dict[str, tuple[list[str], list[str]]] = {}
        self.events: list[tuple[str, Any]] = []
        self.flushes = 0
        self._blobs: dict[str, tuple[str, bytes]] = {}
        self._lock = threading.Lock()

    # -- the Sink protocol --------------------------------------------------------------------

    def run_started(self, run: Run) -> None:
        with self._lock:
            self.runs[run.id] = run
            self.events.append(("run_started", run))

    def op_started(self, op: Operation) -> None:
        with self._lock:
            self.ops[op.id] = op
            self.events.append(("op_started", op))

    def blob_added(self, digest: str, encoding: str, data: bytes) -> None:
        with self._lock:
            self._blobs[digest] = (encoding, data)

    def version_written(self, version: VariableVersion, value: Any) -> None:
        with self._lock:
            self.versions[version.id] = version
            self.events.append(("version_written", version))

    def edge_added(self, edge: Edge) -> None:
        with self._lock:
            self.edges.append(edge)

    def op_ended(self, op: Operation, inputs: Sequence[str], outputs: Sequence[str]) -> None:
        with self._lock:
            self.ops[op.id] = op
            self.op_io[op.id] = (list(inputs), list(outputs))
            self.events.append(("op_ended", op))

    def case_updated(self, case: Case) -> None:
        with self._lock:
            self.cases[case.id] = case
            self.events.append(("case_updated", case))

    def flush(self) -> None:
        self.flushes += 1

    def run_ended(self, run: Run) -> None:
        with self._lock:
            self.runs[run.id] = run
            self.events.append(("run_ended", run))

    # -- reading what was recorded ------------------------------------------------------------

    def value(self, version_id: str) -> Any:
        """The value a version held when it was written (None for a deletion)."""
        version = self.versions[version_id]
        if version.blob is None:
            return None
        encoding, data = self._blobs[version.blob]
        return decode_value(encoding, data)

    def memory(self) -> dict[str, Any]:
        """The memory state at the end: each live memory unit's latest value."""
        latest: dict[str, VariableVersion] = {}
        for version in self.versions.values():
            if version.is_memory:
                latest[version.name] = version
        return {name: self.value(v.id) for name, v in latest.items() if not v.deleted}

    def event_names(self) -> list[str]:
        return [name for name, _ in self.events]
