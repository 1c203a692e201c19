"""The journal sink: a run's events appended to its journal file, indexed into the workspace's SQLite store.

It implements trace/'s `Sink` protocol and its row fast path `RowSink` (structurally: graph/ imports
nothing above it), so the recorder hands it row tuples and builds no model object for it. Recording
only appends row tuples to lists; every `flush_every` rows, and when the run closes, a batch goes to
`<workspace>/journal/<run>.jnl` (journal.py), and the next `Store` opened on the workspace moves the
frames into the tables. A run that ends without closing keeps what was flushed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from .journal import JournalWriter, journal_path
from .model import Case, Edge, Operation, Run, VariableVersion
from .rows import case_row, dumps_or_none, edge_row, op_row, var_row
from .store import OP_COLUMNS, Store

#: Rows buffered before a batch is appended to the journal.
DEFAULT_FLUSH_EVERY = 4096

_OP_WIDTH = len(OP_COLUMNS.split(","))


class JournalSink:
    """Writes one run into a workspace store through its journal; holds the journal's lock while open."""

    def __init__(
        self, store: Store, *, insert_run: bool = True, flush_every: int = DEFAULT_FLUSH_EVERY
    ) -> None:
        """`insert_run=False` when the run row is already in the store (a replay registers it together
        with the prefix it copies from its parent, in one transaction)."""
        self.store = store
        self.flush_every = flush_every
        self._insert_run = insert_run
        self._journal: JournalWriter | None = None
        # Rows are kept flat, each table's values end to end, as the journal's frames hold them
        # (journal_shape.py): indexing them then takes no Python step per row.
        self._ops: list[object] = []
        self._vars: list[object] = []
        self._edges: list[object] = []
        self._blobs: list[object] = []
        self._dirty_cases: dict[str, Case] = {}
        self._pending = 0
        #: Operations appended to the journal so far (a replay reports how many it re-ran).
        self.ops_written = 0
        self._flush_lock = threading.Lock()
        # RowSink: an edge or a blob needs no bookkeeping, so the list's own extend is the whole
        # method (one C call per event). `_take` empties the lists in place, so these stay bound.
        self.add_edge_row = self._edges.extend
        self.add_blob_row = self._blobs.extend

    def run_started(self, run: Run) -> None:
        if self._insert_run:
            self.store.insert_run(run)
        self._journal = JournalWriter(journal_path(self.store.path.parent, run.id))

    # -- RowSink: what the recorder calls (add_edge_row and add_blob_row are bound in __init__) --

    def add_var_row(self, row: tuple) -> None:
        self._vars.extend(row)
        self._pending += 2  # the version and, nearly always, its edge
        if self._pending >= self.flush_every:
            self.flush()

    def add_op_row(self, row: tuple) -> None:
        self._ops.extend(row)
        self._pending += 1
        if self._pending >= self.flush_every:
            self.flush()

    # -- Sink: the same events as model objects, for a caller that hands it those ---------------

    def op_started(self, op: Operation) -> None:
        return None  # the row is written once, when the operation ends

    def blob_added(self, digest: str, encoding: str, data: bytes) -> None:
        self.add_blob_row((digest, encoding, data))

    def version_written(self, version: VariableVersion, value: Any) -> None:
        self.add_var_row(var_row(version))

    def edge_added(self, edge: Edge) -> None:
        self.add_edge_row(edge_row(edge))

    def op_ended(self, op: Operation, inputs: Sequence[str], outputs: Sequence[str]) -> None:
        self.add_op_row(op_row(op))

    def case_updated(self, case: Case) -> None:
        self._dirty_cases[case.id] = case

    def flush(self) -> None:
        """Append the buffered rows to the journal as one frame."""
        if self._journal is None:
            return
        with self._flush_lock:
            # Take a prefix and delete it (each step atomic) rather than swapping lists: another
            # thread may hold the list it is about to append to.
            ops, variables = _take(self._ops), _take(self._vars)
            edges, blobs = _take(self._edges), _take(self._blobs)
            dirty, self._dirty_cases = self._dirty_cases, {}
            self._pending = 0
            cases = [case_row(case) for case in dirty.values()]
            self.ops_written += len(ops) // _OP_WIDTH
            if ops or variables or edges or blobs or cases:
                self._journal.append_rows(ops, variables, edges, blobs, cases)

    def run_ended(self, run: Run) -> None:
        """Write the closing frame (status, error, end time, final metadata) and release the journal."""
        if self._journal is None:
            return
        try:
            self.flush()
        finally:
            self._journal.close(run.status, run.error, run.finished_at or 0.0, dumps_or_none(run.metadata))
            self._journal = None


def _take(rows: list[object]) -> list[object]:
    """Remove and return the rows present now; rows added meanwhile stay for the next flush (each
    row is added by one `extend`, atomic, so only whole rows are taken)."""
    n = len(rows)
    taken = rows[:n]
    del rows[:n]
    return taken
