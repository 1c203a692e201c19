"""The `Sink` protocol: where a recorder sends every event of a run, as it happens.

Recording is split the way OpenTelemetry splits its API and SDK: `trace/` decides what happened
(seqs, versions, content hashes, replay patches) and hands each event to the sinks attached to the
run; sinks decide where it goes. graph/ supplies the journal sink (the workspace's SQLite store),
`InMemorySink` keeps a run in memory for tests and embedding, and an exporter such as OpenTelemetry
is one more module implementing these methods. Several sinks can be attached to one run.

Events arrive in recording order from the threads that record, so a sink shared by threads guards
its own state. Payloads are the graph model's dataclasses; a sink must not mutate them, and an
object passed twice (an operation at its start and end, a case as it is answered and judged) is
the same object updated in place.

A sink that stores rows anyway (the workspace journal) can also implement `RowSink`: the recorder
then hands it row tuples directly and builds no model object for it, which is what keeps recording
as cheap as writing the rows inline. Model objects are built only when some attached sink is a
plain `Sink`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ..graph.model import Case, Edge, Operation, Run, VariableVersion

__all__ = ["OP_RUNNING", "RowSink", "Sink"]

#: The status an operation carries in `op_started`, before it ends "ok", "error" or "unfinished".
OP_RUNNING = "running"


@runtime_checkable
class Sink(Protocol):
    """Receives a run's events live; implement every method (a no-op body is fine)."""

    def run_started(self, run: Run) -> None:
        """The run opened: its id, name, system, config and metadata (status "running")."""

    def op_started(self, op: Operation) -> None:
        """An operation opened: id, seq, parent, name, category, start time (status OP_RUNNING)."""

    def blob_added(self, digest: str, encoding: str, data: bytes) -> None:
        """A value's content seen for the first time in this run: its hash and stored encoding."""

    def version_written(self, version: VariableVersion, value: Any) -> None:
        """A new version of a variable (memory units included); `value` is None for a deletion.

        `value` is the live Python object, which the pipeline may go on mutating: keep
        `version.blob` (decoded with graph.values) or a copy rather than the object.
        """

    def edge_added(self, edge: Edge) -> None:
        """An operation read (role "in") or wrote (role "out") a variable version."""

    def op_ended(self, op: Operation, inputs: Sequence[str], outputs: Sequence[str]) -> None:
        """An operation closed with its status, end time and metadata, and the version ids it read
        and wrote while open (edges added after it closed arrive only as `edge_added`)."""

    def case_updated(self, case: Case) -> None:
        """A question was registered, predicted or judged (the same `Case` object each time)."""

    def flush(self) -> None:
        """Write out what is buffered: the recorder asks at its flush points and before closing."""

    def run_ended(self, run: Run) -> None:
        """The run closed: status "complete", or "incomplete" with `run.error`; the last event."""


@runtime_checkable
class RowSink(Sink, Protocol):
    """A `Sink` that takes row tuples (graph/rows.py's column order) for the frequent events.

    For a sink implementing these four methods the recorder calls them instead of `op_started`,
    `version_written`, `edge_added`, `op_ended` and `blob_added`, with the tuples `op_row`,
    `var_row` and `edge_row` would make of the model objects (and `(digest, encoding, data)` for a
    blob): an operation's row once, when it ends, and nothing when it starts. `run_started`,
    `case_updated`, `flush` and `run_ended` arrive as for any sink. Rows must not be mutated.
    """

    def add_op_row(self, row: tuple) -> None:
        """An operation ended: its row, with status, end time and metadata JSON."""

    def add_var_row(self, row: tuple) -> None:
        """A variable version was written (the value itself is only in its blob)."""

    def add_edge_row(self, row: tuple) -> None:
        """An operation read or wrote a variable version."""

    def add_blob_row(self, row: tuple[str, str, bytes]) -> None:
        """A value's content seen for the first time in this run: (hash, encoding, payload)."""
