"""Operation scopes: `with memtrace.op(name, category=...) as op:` records one step of a pipeline.

An operation takes its seq when it starts and nests inside the operation that is current then
(contextvars), like a span. The no-op scope handed out when nothing records costs almost nothing.
"""

from __future__ import annotations

import sys
import time
import traceback
from typing import TYPE_CHECKING, Any

from ..graph.model import Edge, Operation
from ..graph.rows import dumps_or_none
from .context import current_op_var
from .sink import OP_RUNNING

if TYPE_CHECKING:
    from .ports import RunRecorder

_now = time.time  # bound once: read at every operation's start and end


class OpScope:
    """One recorded operation; inputs, outputs and mutations become variable versions and edges."""

    __slots__ = (
        "_token",
        "category",
        "ended",
        "id",
        "inputs",
        "metadata",
        "name",
        "operation",
        "outputs",
        "parent_id",
        "recorder",
        "seq",
        "started_at",
    )

    def __init__(self, recorder: RunRecorder, name: str, category: str, metadata: dict[str, Any]) -> None:
        self.recorder = recorder
        self.name = name
        self.category = category
        self.metadata = metadata
        self.ended = False

    def __enter__(self) -> OpScope:
        recorder = self.recorder
        self.seq = recorder.next_seq()
        self.id = f"{self.name}#{self.seq}"
        parent = current_op_var.get()
        self.parent_id = parent.id if parent is not None and parent.recorder is recorder else None
        self.started_at = _now()
        if recorder.capture_source:
            frame = sys._getframe(1)
            self.metadata["source"] = f"{frame.f_code.co_filename}:{frame.f_lineno}"
        self._token = current_op_var.set(self)
        if recorder._on_op_started is not None:  # a plain sink is attached: it gets model objects
            #: Version ids read and written while open, in order (handed to plain sinks at the end).
            self.inputs: list[str] = []
            self.outputs: list[str] = []
            self.operation = Operation(
                recorder.id,
                self.id,
                self.seq,
                self.name,
                self.category,
                self.parent_id,
                self.started_at,
                None,
                OP_RUNNING,
                self.metadata,
            )
            recorder._on_op_started(self.operation)
        recorder._open_ops[self.id] = self
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: object) -> None:
        try:  # noqa: SIM105 (contextlib.suppress costs a context manager on every operation)
            current_op_var.reset(self._token)
        except ValueError:  # entered in another context (a worker thread's copy): nothing to restore here
            pass
        if exc is None:
            self._finish("ok")
        else:
            self.metadata["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self._finish("error")

    def _finish(self, status: str) -> None:
        if self.ended:
            return
        self.ended = True
        recorder = self.recorder
        recorder._open_ops.pop(self.id, None)
        ended_at = _now()
        if recorder._op_row is not None:
            metadata = self.metadata
            recorder._op_row(
                (
                    recorder.id,
                    self.id,
                    self.seq,
                    self.parent_id,
                    self.name,
                    self.category,
                    self.started_at,
                    ended_at,
                    status,
                    dumps_or_none(metadata) if metadata else None,
                )
            )
        if recorder._on_op_ended is not None:
            operation = self.operation
            operation.ended_at = ended_at
            operation.status = status
            recorder._on_op_ended(operation, self.inputs, self.outputs)

    def abandon(self, reason: str) -> None:
        """Record an operation that never finished (its run closed first)."""
        self.metadata["error"] = reason
        self._finish("unfinished")

    def input(self, name: str, value: Any, category: str = "value", **metadata: Any) -> str:
        """Record that this operation read `value` as variable `name`; returns the version id.

        The latest version is reused when its content is identical, so a value read many times is one node.
        """
        recorder = self.recorder
        blob = recorder.blob_for(value)
        latest = recorder._latest.get(name)
        if latest is not None and latest[1] == blob and not latest[3]:
            var_id = latest[2]
        else:
            var_id = recorder.new_version(name, blob, category, metadata=metadata or None, value=value)
        if recorder._edge_row is not None:
            recorder._edge_row((recorder.id, self.id, var_id, "in", None, None))
        if recorder._on_edge is not None:
            self.inputs.append(var_id)
            recorder._on_edge(Edge(recorder.id, self.id, var_id, "in"))
        return var_id

    def use(self, var_id: str) -> str:
        """Record that this operation read an existing variable version (an id returned earlier)."""
        self.recorder.edge(self.id, var_id, "in")
        return var_id

    def output(self, name: str, value: Any, category: str = "value", **metadata: Any) -> str:
        """Record that this operation wrote `value` as a new version of variable `name`."""
        recorder = self.recorder
        var_id = recorder.new_version(
            name, recorder.blob_for(value), category, metadata=metadata or None, value=value
        )
        if recorder._edge_row is not None:
            recorder._edge_row((recorder.id, self.id, var_id, "out", None, None))
        if recorder._on_edge is not None:
            self.outputs.append(var_id)
            recorder._on_edge(Edge(recorder.id, self.id, var_id, "out"))
        return var_id

    def produce(self, name: str, value: Any, category: str = "value", **metadata: Any) -> tuple[Any, str]:
        """Record an output the pipeline goes on to use, and return (the value to use, its id).

        During a replay a patch may replace the value: the pipeline must carry on with the returned
        one, which is what makes a recorded run re-executable with one operation changed.
        """
        patch = self.recorder.patch_for(self.id)
        if patch is not None and name in patch.outputs:
            value = patch.outputs[name]
        return value, self.output(name, value, category, **metadata)

    def mutated(self, obj: Any, name: str | None = None, category: str = "value") -> str:
        """Record an in-place change of a Python object as a new version of its variable.

        The previous version becomes an input, so lineage runs through the mutation.
        """
        recorder = self.recorder
        name = name or recorder.tracked_name(obj)
        if name is None:
            raise ValueError(
                "op.mutated(obj) needs a name: pass name=... or register the object with memtrace.track()"
            )
        recorder.track(obj, name)
        previous = recorder.latest(name)
        if previous is not None and not previous[3]:
            recorder.edge(self.id, previous[2], "in")
        var_id = recorder.new_version(
            name, recorder.blob_for(obj), category, metadata={"mutation": True}, value=obj
        )
        recorder.edge(self.id, var_id, "out")
        return var_id

    def set(self, **metadata: Any) -> None:
        """Attach metadata (settings, scores, counts) to the operation."""
        self.metadata.update(metadata)

    def __repr__(self) -> str:
        return f"<memtrace op {getattr(self, 'id', self.name)} category={self.category!r}>"


class NoopOp:
    """What `memtrace.op(...)` returns when nothing records: every method does nothing, fast."""

    __slots__ = ()
    id = None
    name = None
    category = None

    def __enter__(self) -> NoopOp:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def input(self, name: str, value: Any, category: str = "value", **metadata: Any) -> None:
        return None

    def use(self, var_id: str) -> None:
        return None

    def output(self, name: str, value: Any, category: str = "value", **metadata: Any) -> None:
        return None

    def produce(self, name: str, value: Any, category: str = "value", **metadata: Any) -> tuple[Any, None]:
        return value, None

    def mutated(self, obj: Any, name: str | None = None, category: str = "value") -> None:
        return None

    def set(self, **metadata: Any) -> None:
        return None


NOOP_OP = NoopOp()
