"""The recorder behind `memtrace.run(...)`: gives out seqs and versions and hands every event to its sinks.

What happens is decided here (seqs, version ids, content hashes, replay patches); where it goes is the
sinks' business (trace/sink.py): a workspace gets graph/'s journal sink, and any number of other
sinks (`InMemorySink`, an exporter) can be attached to the same run. A run that fails or is
interrupted keeps what was recorded and is marked incomplete with the error text.
"""

from __future__ import annotations

import atexit
import itertools
import threading
import time
import traceback
import uuid
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..graph.journal_sink import DEFAULT_FLUSH_EVERY, JournalSink
from ..graph.model import (
    RUN_COMPLETE,
    RUN_INCOMPLETE,
    RUN_RUNNING,
    Case,
    Edge,
    Run,
    VariableVersion,
)
from ..graph.rows import dumps_or_none
from ..graph.store import Store
from ..graph.values import encode_value
from .context import current_run_var, open_runs
from .patch import Patch, PatchPolicy
from .sink import RowSink, Sink

if TYPE_CHECKING:
    from .cases import CaseHandle
    from .memory import MemoryUnit
    from .scope import OpScope

__all__ = ["DEFAULT_FLUSH_EVERY", "Recorder", "interrupted_runs"]


class Recorder:
    """One recorded run: the run context returned by `memtrace.run(...)`."""

    def __init__(
        self,
        workspace: str | Path | Store | None,
        *,
        name: str,
        system: str | None = None,
        dataset: str | None = None,
        conversation: str | None = None,
        config: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        parent_run: str | None = None,
        capture_source: bool = False,
        sinks: Sequence[Sink] = (),
        patch_policy: PatchPolicy | None = None,
        run_id: str | None = None,
    ) -> None:
        """Record into `workspace` (a folder, or an open Store to share), into `sinks`, or both.

        With `workspace=None` nothing touches the disk: the run lives only in its sinks. A replay passes
        a `patch_policy` (and a workspace holding the run it resumes from). `run_id` fixes the run's id
        (a parallel `memtrace run` derives it, so results do not depend on the executor); else random.
        """
        if workspace is None and not sinks:
            raise ValueError(
                "a run records into a workspace or into sinks: pass a workspace folder or sinks=[...]"
            )
        self.policy = patch_policy if patch_policy is not None else PatchPolicy()
        resume_from = self.policy.resume_from
        if resume_from is not None and workspace is None:
            raise ValueError("a replay resumes from a run in a workspace: pass the workspace")
        self.capture_source = capture_source
        self.run = Run(
            id=run_id or uuid.uuid4().hex[:12],
            name=name,
            system=system,
            dataset=dataset,
            conversation=conversation,
            parent_run=resume_from[0] if resume_from is not None else parent_run,
            status=RUN_RUNNING,
            config=dict(config or {}),
            metadata=dict(metadata or {}),
            created_at=time.time(),
        )
        self.id = self.run.id
        replay = self.policy.describe()
        if replay:
            self.run.metadata["replay"] = replay
        # name -> (latest version, its content hash, its id, deleted?)
        self._latest: dict[str, tuple[int, str | None, str, bool]] = {}
        self._by_blob: dict[str, str] = {}
        self.store: Store | None = None
        self._owns_store = False
        self._journal: JournalSink | None = None
        start_seq = 1
        if workspace is not None:
            self._owns_store = not isinstance(workspace, Store)
            self.store = (
                workspace
                if isinstance(workspace, Store)
                else Store(workspace, ingest=resume_from is not None)
            )
            if resume_from is not None:
                start_seq = self._resume(self.store, *resume_from)
            self._journal = JournalSink(self.store, insert_run=resume_from is None)
        self.sinks: tuple[Sink, ...] = ((self._journal,) if self._journal is not None else ()) + tuple(sinks)
        self.next_seq = itertools.count(start_seq).__next__
        # The sinks' event methods, bound once: recording calls them for every event. A row sink
        # (the journal) gets row tuples; model objects are built only when a plain sink is attached.
        # Each is None when no sink wants that event, the sink's own method when one does.
        row_sinks = [s for s in self.sinks if isinstance(s, RowSink)]
        model_sinks = [s for s in self.sinks if not isinstance(s, RowSink)]
        self._op_row = _fan_out([s.add_op_row for s in row_sinks])
        self._var_row = _fan_out([s.add_var_row for s in row_sinks])
        self._edge_row = _fan_out([s.add_edge_row for s in row_sinks])
        self._blob_row = _fan_out([s.add_blob_row for s in row_sinks])
        self._on_op_started = _fan_out([s.op_started for s in model_sinks])
        self._on_op_ended = _fan_out([s.op_ended for s in model_sinks])
        self._on_version = _fan_out([s.version_written for s in model_sinks])
        self._on_edge = _fan_out([s.edge_added for s in model_sinks])
        self._on_blob = _fan_out([s.blob_added for s in model_sinks])
        self._on_case = _fan_out([s.case_updated for s in self.sinks])
        self._cases: dict[str, Case] = {}
        self._seen_blobs: set[str] = set()
        self._tracked: dict[int, str] = {}
        self._open_ops: dict[str, OpScope] = {}
        self._version_lock = threading.Lock()
        self._token: Any = None
        self._closed = False
        for sink in self.sinks:
            sink.run_started(self.run)
        _live_recorders.add(self)

    def _resume(self, store: Store, parent: str, upto_seq: int) -> int:
        """Start as a copy of run `parent` up to `upto_seq`: its rows and its variables' latest versions.

        Replay re-executes from there; everything before is reused as recorded.
        """
        for latest in store.start_resumed_run(self.run, parent, upto_seq):
            self._latest[latest.name] = (latest.version, latest.blob, latest.id, latest.deleted)
            if latest.blob:
                self._by_blob[latest.blob] = latest.id
        return upto_seq + 1

    @property
    def flush_every(self) -> int:
        """Rows the journal buffers before appending a batch (0 without a workspace)."""
        return self._journal.flush_every if self._journal is not None else 0

    @flush_every.setter
    def flush_every(self, rows: int) -> None:
        if self._journal is not None:
            self._journal.flush_every = rows

    @property
    def patched(self) -> list[str]:
        """The patched operations that actually ran (a replay's), in the order they ran."""
        return self.policy.applied

    def patch_for(self, op_id: str | None) -> Patch | None:
        """The patch registered for an operation (None when it runs as recorded)."""
        return self.policy.patch_for(op_id)

    def kept(self, unit_id: str) -> list[Any]:
        """Items of a memory unit that later changes must not drop, asked by the patches applied so far.

        A replay that verifies a repair under DESIGN's criterion (the operations after the repaired
        one behave ideally) keeps the restored evidence this way; systems that trim a unit honour it.
        """
        return self.policy.kept(unit_id)

    # -- recording primitives (used by OpScope, MemoryUnit, CaseHandle) -----------------------

    def blob_for(self, value: Any) -> str:
        """Content-address a value; the sinks get its encoding the first time this hash is seen."""
        encoded = encode_value(value)
        digest = encoded[0]
        if digest not in self._seen_blobs:
            self._seen_blobs.add(digest)
            if self._blob_row is not None:
                self._blob_row(encoded)
            if self._on_blob is not None:
                self._on_blob(*encoded)
        return digest

    def new_version(
        self,
        name: str,
        blob: str | None,
        category: str,
        *,
        deleted: bool = False,
        metadata: dict[str, Any] | None = None,
        value: Any = None,
    ) -> str:
        """Write the next version of variable `name` (holding `value`) and return its id (`name@version`)."""
        with self._version_lock:
            latest = self._latest.get(name)
            version = 1 if latest is None else latest[0] + 1
            var_id = f"{name}@{version}"
            self._latest[name] = (version, blob, var_id, deleted)
            if blob is not None:
                self._by_blob[blob] = var_id
            seq = self.next_seq()
        now = _now()
        if self._var_row is not None:
            self._var_row(
                (
                    self.id,
                    var_id,
                    name,
                    version,
                    seq,
                    category,
                    blob,
                    1 if deleted else 0,
                    now,
                    dumps_or_none(metadata) if metadata else None,
                )
            )
        if self._on_version is not None:
            written = VariableVersion(
                self.id, var_id, name, version, seq, category, blob, deleted, now, metadata or {}
            )
            self._on_version(written, value)
        return var_id

    def latest(self, name: str) -> tuple[int, str | None, str, bool] | None:
        """(version, content hash, id, deleted) of a variable's latest version, or None."""
        return self._latest.get(name)

    def version_with_content(self, blob: str) -> str | None:
        """The latest variable version recorded with this exact content, if any."""
        return self._by_blob.get(blob)

    def edge(self, op_id: str, var_id: str, role: str) -> None:
        """Operation `op_id` read (role "in") or wrote ("out") version `var_id`."""
        if self._edge_row is not None:
            self._edge_row((self.id, op_id, var_id, role, None, None))
        if self._on_edge is not None:
            scope = self._open_ops.get(op_id)
            if scope is not None:
                (scope.inputs if role == "in" else scope.outputs).append(var_id)
            self._on_edge(Edge(self.id, op_id, var_id, role))  # type: ignore[arg-type]

    def track(self, obj: object, name: str) -> None:
        """Remember which variable an object is, so `op.mutated(obj)` needs no name."""
        self._tracked[id(obj)] = name

    def tracked_name(self, obj: object) -> str | None:
        return self._tracked.get(id(obj))

    # -- public API ---------------------------------------------------------------------------

    def memory(self, unit_id: str) -> MemoryUnit:
        """A handle on memory unit `unit_id`: `.create(value, by=op)`, `.update(...)`, `.delete(...)`."""
        from .memory import MemoryUnit

        return MemoryUnit(self, unit_id)

    def case(
        self,
        question: str,
        *,
        gold: list[str] | str | None = None,
        evidence: list[str] | None = None,
        category: str | None = None,
        id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> CaseHandle:
        """Register a question of this run; predict and judge it through the returned handle."""
        from .cases import CaseHandle

        case_id = id or f"q{len(self._cases) + 1}"
        golds = [gold] if isinstance(gold, str) else list(gold or [])
        case = Case(
            run_id=self.id,
            id=case_id,
            question=question,
            gold=golds,
            evidence=list(evidence or []),
            category=category,
            metadata=dict(metadata or {}),
        )
        self._cases[case_id] = case
        self.mark_case_dirty(case_id)
        return CaseHandle(self, case)

    def mark_case_dirty(self, case_id: str) -> None:
        """A case was registered, predicted or judged: the sinks hear of it now."""
        if self._on_case is not None:
            self._on_case(self._cases[case_id])

    @property
    def ops_recorded(self) -> int:
        """Operations this run wrote to its workspace so far (flushed ones): what a replay re-ran."""
        return self._journal.ops_written if self._journal is not None else 0

    def flush(self) -> None:
        """Ask every sink to write out what it buffers."""
        for sink in self.sinks:
            sink.flush()

    def close(self, error: BaseException | None = None) -> None:
        """Flush everything and mark the run complete, or incomplete with the error text."""
        if self._closed:
            return
        self._closed = True
        for scope in list(self._open_ops.values()):
            scope.abandon("run closed while the operation was still open")
        status, text = RUN_COMPLETE, None
        if error is not None:
            status = RUN_INCOMPLETE
            if isinstance(error, KeyboardInterrupt):
                text = "interrupted (KeyboardInterrupt)"
                _interrupted.append(self.run)
            else:
                text = "".join(traceback.format_exception_only(type(error), error)).strip()
        self.run.status, self.run.error = status, text
        self.run.finished_at = time.time()
        try:
            self._end_sinks()
        finally:
            if self in open_runs:
                open_runs.remove(self)
            _live_recorders.discard(self)
            if self._owns_store and self.store is not None:
                self.store.close()

    def _end_sinks(self) -> None:
        """Every sink hears the run end, even when an earlier one fails; the first failure is raised."""
        failure: BaseException | None = None
        for sink in self.sinks:
            try:
                sink.run_ended(self.run)
            except BaseException as exc:
                failure = failure or exc
        if failure is not None:
            raise failure

    def __enter__(self) -> Recorder:
        self._token = current_run_var.set(self)
        open_runs.append(self)
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: object) -> None:
        try:
            self.close(exc)
        finally:
            if self._token is not None:
                current_run_var.reset(self._token)
                self._token = None

    def __repr__(self) -> str:
        return f"<memtrace run {self.id} {self.run.name!r} system={self.run.system!r}>"


_now = time.time


def _fan_out[**P](methods: Sequence[Callable[P, None]]) -> Callable[P, None] | None:
    """One callable for an event: None when no sink takes it, the method itself for one sink."""
    if not methods:
        return None
    if len(methods) == 1:
        return methods[0]
    every = tuple(methods)

    def emit(*args: P.args, **kwargs: P.kwargs) -> None:
        for method in every:
            method(*args, **kwargs)

    return emit


_live_recorders: weakref.WeakSet[Recorder] = weakref.WeakSet()
_interrupted: list[Run] = []


def interrupted_runs() -> list[Run]:
    """Runs this process closed because of Ctrl-C: kept, marked incomplete, worth naming to the user."""
    return list(_interrupted)


@atexit.register
def _close_abandoned_runs() -> None:
    """A process that exits with runs still open keeps their data and marks them incomplete."""
    for recorder in list(_live_recorders):
        try:
            recorder.close(RuntimeError("process exited before the run was closed"))
        except Exception as exc:
            print(f"memtrace: could not close run {recorder.id}: {exc}")
