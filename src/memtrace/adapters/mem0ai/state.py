"""What the mem0ai tracer keeps while it records: the add() in progress, the last search, and the
writes (memory units, history rows) its wrappers share with the decision that caused them."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...graph.values import encode_value
from ...trace import OpScope
from ...trace.context import active_run, current_op_var
from .parts import Pipeline


@dataclass(slots=True)
class SearchRecord:
    """The last search in this context: its query and `retrieved` variables, for the answer step."""

    query_var: str | None
    retrieved_var: str | None
    memories: list[dict[str, Any]]


@dataclass(slots=True)
class AddStep:
    """What one add() has recorded so far (lives in a contextvar of the thread doing the work)."""

    add_op: OpScope
    message_vars: list[str]
    extracted: bool = False
    fact_vars: dict[str, str] = field(default_factory=dict)  # fact text -> its variable
    candidate_vars: list[str] = field(default_factory=list)
    candidate_ids: list[str] = field(default_factory=list)  # in the order the searches returned
    facts: list[str] = field(default_factory=list)  # the extracted facts, in mem0's order
    hits: dict[str, list[str]] = field(default_factory=dict)  # search query -> memory ids found
    decision: OpScope | None = None
    events_var: str | None = None

    def shown_ids(self) -> list[str]:
        """The memory ids in the order mem0 numbers them for the update decision ("0", "1", ...).

        mem0 collects each fact's hits in fact order, keeping an id where it first appears; its async
        pipeline searches all facts at once, so the order the searches finished in is not that order.
        """
        ordered = dict.fromkeys(i for fact in self.facts for i in self.hits.get(fact, ()))
        ordered.update(dict.fromkeys(self.candidate_ids))
        return list(ordered)


add_step: contextvars.ContextVar[AddStep | None] = contextvars.ContextVar("memtrace_mem0_add", default=None)
last_search_var: contextvars.ContextVar[SearchRecord | None] = contextvars.ContextVar(
    "memtrace_mem0_search", default=None
)


def content_key(value: Any) -> str:
    """A value's content hash, to find the version holding it without buffering a blob for it."""
    return encode_value(value)[0]


@contextlib.contextmanager
def under_open_decision() -> Iterator[None]:
    """Nest what starts here in the add()'s open update decision when it would land on the add itself.

    The classic sync pipeline writes inside the decision's context; the async one decides in a worker
    thread and writes from tasks of its own, so the decision is made their parent here.
    """
    step = add_step.get()
    if step is None or step.decision is None or current_op_var.get() is not step.add_op:
        yield
        return
    token = current_op_var.set(step.decision)
    try:
        yield
    finally:
        current_op_var.reset(token)


def new_op(name: str, category: str, **metadata: Any) -> OpScope:
    """An operation of the run recording now (the wrappers run only while one is)."""
    run = active_run()
    if run is None:
        raise RuntimeError("memtrace: the run closed while mem0 was still working")
    return OpScope(run, name, category, metadata)


#: The operations that write memory units (and, inside them, mem0's history rows).
WRITES = frozenset({"create_memory", "update_memory", "delete_memory", "insert_memories"})


class WritesMixin:
    """The tracer's wrappers of mem0's writes: vector-store inserts, create / update / delete, history.

    Each write has a sync wrapper (Memory) and an async one (AsyncMemory) around the same recording.
    """

    pipeline: Pipeline
    #: Whether mem0's vector store is a server (its operations become CLIENT spans) or in-process.
    store_remote: bool

    def _store_op(self, name: str, category: str, **metadata: Any) -> OpScope:
        """An operation that calls mem0's vector store."""
        return new_op(name, category, remote=self.store_remote, **metadata)

    def _store_insert(self, original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        step = add_step.get()
        parent = current_op_var.get()
        inside_write = parent is not None and parent.category != "construction"
        if step is None or self.pipeline != "additive" or inside_write:
            return original(*args, **kwargs)  # classic writes are recorded by _create_memory
        ids = kwargs.get("ids", args[1] if len(args) > 1 else [])
        payloads = kwargs.get("payloads", args[2] if len(args) > 2 else [])
        with self._store_op("insert_memories", "update", pipeline=self.pipeline) as op:
            for payload in payloads or []:
                var = step.fact_vars.get((payload or {}).get("data"))
                if var is not None:
                    op.use(var)
            result = original(*args, **kwargs)
            for memory_id, payload in zip(ids or [], payloads or [], strict=False):
                self._write_unit(op, str(memory_id), (payload or {}).get("data"), "ADD")
            op.set(events=[["ADD", str(i)] for i in ids or []])
            return result

    def _create_memory(self, original: Callable[..., Any], data: Any, *args: Any, **kwargs: Any) -> Any:
        with under_open_decision(), self._store_op("create_memory", "update") as op:
            self._use_source(op, data)
            memory_id = original(data, *args, **kwargs)
            self._write_unit(op, str(memory_id), data, "ADD")
            return memory_id

    async def _create_memory_async(
        self, original: Callable[..., Any], data: Any, *args: Any, **kwargs: Any
    ) -> Any:
        with under_open_decision(), self._store_op("create_memory", "update") as op:
            self._use_source(op, data)
            memory_id = await original(data, *args, **kwargs)
            self._write_unit(op, str(memory_id), data, "ADD")
            return memory_id

    def _update_memory(
        self, original: Callable[..., Any], memory_id: Any, data: Any, *args: Any, **kwargs: Any
    ) -> Any:
        with under_open_decision(), self._store_op("update_memory", "update", memory_id=str(memory_id)) as op:
            self._use_source(op, data)
            result = original(memory_id, data, *args, **kwargs)
            self._write_unit(op, str(memory_id), data, "UPDATE")
            return result

    async def _update_memory_async(
        self, original: Callable[..., Any], memory_id: Any, data: Any, *args: Any, **kwargs: Any
    ) -> Any:
        with under_open_decision(), self._store_op("update_memory", "update", memory_id=str(memory_id)) as op:
            self._use_source(op, data)
            result = await original(memory_id, data, *args, **kwargs)
            self._write_unit(op, str(memory_id), data, "UPDATE")
            return result

    def _delete_memory(self, original: Callable[..., Any], memory_id: Any, *args: Any, **kwargs: Any) -> Any:
        deletion = self._store_op("delete_memory", "deletion", memory_id=str(memory_id))
        with under_open_decision(), deletion as op:
            self._read_events(op)
            result = original(memory_id, *args, **kwargs)
            self._deleted_unit(op, str(memory_id))
            return result

    async def _delete_memory_async(
        self, original: Callable[..., Any], memory_id: Any, *args: Any, **kwargs: Any
    ) -> Any:
        deletion = self._store_op("delete_memory", "deletion", memory_id=str(memory_id))
        with under_open_decision(), deletion as op:
            self._read_events(op)
            result = await original(memory_id, *args, **kwargs)
            self._deleted_unit(op, str(memory_id))
            return result

    @staticmethod
    def _read_events(op: OpScope) -> None:
        step = add_step.get()
        if step is not None and step.events_var is not None:
            op.use(step.events_var)

    @staticmethod
    def _deleted_unit(op: OpScope, memory_id: str) -> None:
        unit = op.recorder.memory(memory_id)
        if unit.exists:
            unit.delete(by=op, event="DELETE")
        else:
            op.set(unknown_unit=True)

    def _use_source(self, op: OpScope, data: Any) -> None:
        """A write reads the decision's events (classic) or the fact it stores, else records `data`."""
        step = add_step.get()
        if step is not None and step.events_var is not None:
            op.use(step.events_var)
        fact = step.fact_vars.get(data) if step is not None else None
        if fact is not None:
            op.use(fact)
        elif step is None or step.events_var is None:
            self._link_or_record(op, data, "data", "value")

    def _write_unit(self, op: OpScope, memory_id: str, text: Any, event: str) -> None:
        unit = op.recorder.memory(memory_id)
        value = {"id": memory_id, "memory": text}
        if unit.exists:
            unit.update(value, by=op, event=event)
        else:
            unit.create(value, by=op, event=event)

    @staticmethod
    def _read_unit(op: OpScope, memory_id: str) -> None:
        latest = op.recorder.latest(memory_id)
        if latest is not None and not latest[3]:
            op.use(latest[2])

    # -- history -------------------------------------------------------------------------------

    def _history(self, original: Callable[..., Any], memory_id: Any, *args: Any, **kwargs: Any) -> Any:
        event = kwargs.get("event", args[2] if len(args) > 2 else None)
        return self._history_rows(original, [[str(memory_id), event]], memory_id, *args, **kwargs)

    def _history_batch(self, original: Callable[..., Any], records: Any, *args: Any, **kwargs: Any) -> Any:
        rows = [[str(r.get("memory_id")), r.get("event")] for r in records or [] if isinstance(r, dict)]
        return self._history_rows(original, rows, records, *args, **kwargs)

    @staticmethod
    def _history_rows(original: Callable[..., Any], rows: list[list[Any]], *args: Any, **kwargs: Any) -> Any:
        """History rows go on the write that made them (`history` metadata); a row written outside
        one (a plugin, a direct call) is an operation `history.add` of its own."""
        writer = current_op_var.get()
        if writer is not None and writer.name in WRITES:
            result = original(*args, **kwargs)
            writer.metadata.setdefault("history", []).extend(rows)
            return result
        with new_op("history.add", "construction", rows=rows):
            return original(*args, **kwargs)

    @staticmethod
    def _link_or_record(op: OpScope, value: Any, name: str, category: str) -> str:
        """Use the version already holding `value` (a runner's message or question), else record it."""
        run = op.recorder
        known = run.version_with_content(content_key(value))
        if known is not None:
            return op.use(known)
        return op.input(f"{op.id}.{name}", value, category=category)
