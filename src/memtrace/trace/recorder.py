"""The recorder behind `memtrace.run(...)`: gives out seqs and versions and buffers rows for the store.

Recording only appends tuples to lists; batches of rows go to the run's journal file (every
`flush_every` rows and when the run closes) and reach the SQLite tables the next time the workspace
is opened (see graph/journal.py). A run that fails or is interrupted keeps what was recorded and is marked
incomplete with the error text.
"""

from __future__ import annotations

import atexit
import itertools
import threading
import time
import traceback
import uuid
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..graph.journal import JournalWriter, journal_path
from ..graph.model import RUN_COMPLETE, RUN_INCOMPLETE, RUN_RUNNING, Case, Run
from ..graph.rows import case_row, dumps_or_none
from ..graph.store import Store
from ..graph.values import encode_value
from .context import current_run_var, open_runs

if TYPE_CHECKING:
    from .cases import CaseHandle
    from .memory import MemoryUnit
    from .scope import OpScope

#: Rows buffered before a flush to SQLite.
DEFAULT_FLUSH_EVERY = 4096


class Recorder:
    """One recorded run: the run context returned by `memtrace.run(...)`."""

    def __init__(
        self,
        workspace: str | Path,
        *,
        name: str,
        system: str | None = None,
        dataset: str | None = None,
        conversation: str | None = None,
        config: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        parent_run: str | None = None,
        capture_source: bool = False,
        flush_every: int = DEFAULT_FLUSH_EVERY,
        store: Store | None = None,
        resume_from: tuple[str, int] | None = None,
        patches: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self._resumed_latest: dict[str, tuple[int, str | None, str, bool]] = {}
        self._resumed_by_blob: dict[str, str] = {}
        self.store = store if store is not None else Store(workspace, ingest=resume_from is not None)
        self._owns_store = store is None
        self.capture_source = capture_source
        self.flush_every = flush_every
        self.run = Run(
            id=uuid.uuid4().hex[:12],
            name=name,
            system=system,
            dataset=dataset,
            conversation=conversation,
            parent_run=parent_run,
            status=RUN_RUNNING,
            config=dict(config or {}),
            metadata=dict(metadata or {}),
            created_at=time.time(),
        )
        #: op id -> patch: {"outputs": {name: value}, "memory": {unit: value | CANCEL | DELETE}}
        self.patches: dict[str, dict[str, Any]] = dict(patches or {})
        self.patched: list[str] = []  # the patched operations that actually ran
        if self.patches:
            self.run.metadata.setdefault("replay", {})["patches"] = self.patches
        start_seq = 1
        if resume_from is None:
            self.store.insert_run(self.run)
        else:
            start_seq = self._resume(*resume_from)
        self.id = self.run.id
        self._journal = JournalWriter(journal_path(self.store.path.parent, self.id))
        self.next_seq = itertools.count(start_seq).__next__
        self._ops: list[tuple] = []
        self._vars: list[tuple] = []
        self._edges: list[tuple] = []
        self._blobs: list[tuple] = []
        self._cases: dict[str, Case] = {}
        self._dirty_cases: dict[str, None] = {}
        self._seen_blobs: set[str] = set()
        # name -> (latest version, its content hash, its id, deleted?)
        self._latest: dict[str, tuple[int, str | None, str, bool]] = dict(self._resumed_latest)
        self._by_blob: dict[str, str] = dict(self._resumed_by_blob)
        self._tracked: dict[int, str] = {}
        self._open_ops: dict[str, OpScope] = {}
        self._version_lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._pending = 0
        self._token: Any = None
        self._closed = False
        _live_recorders.add(self)

    def _resume(self, parent: str, upto_seq: int) -> int:
        """Start as a copy of run `parent` up to `upto_seq`: its rows and its variables' latest versions.

        Replay re-executes from there; everything before is reused as recorded.
        """
        from ..graph.copying import defer_prefix, latest_versions

        self.run.parent_run = parent
        self.run.metadata.setdefault("replay", {})["resumed_after_seq"] = upto_seq
        self.store.complete(parent)  # the prefix must come from a complete run
        with self.store.transaction() as conn:
            self.store.insert_run_in(conn, self.run)
            defer_prefix(conn, parent, self.run.id, upto_seq)
            rows = latest_versions(conn, parent, upto_seq)
        self._resumed_latest = {
            name: (version, blob, vid, bool(deleted)) for name, version, blob, vid, deleted, *_ in rows
        }
        self._resumed_by_blob = {blob: vid for _, _, blob, vid, _, *_ in rows if blob}
        return upto_seq + 1

    def patch_for(self, op_id: str | None) -> dict[str, Any] | None:
        """The patch registered for an operation (None when it runs as recorded)."""
        if op_id is None or not self.patches:
            return None
        patch = self.patches.get(op_id)
        if patch is not None and op_id not in self.patched:
            self.patched.append(op_id)
        return patch

    def kept(self, unit_id: str) -> list[Any]:
        """Items of a memory unit that later changes must not drop, asked by the patches applied so far.

        A replay that verifies a repair under DESIGN's criterion (the operations after the repaired
        one behave ideally) keeps the restored evidence this way; systems that trim a unit honour it.
        """
        return [
            item
            for op_id in self.patched
            for item in (self.patches[op_id].get("keep") or {}).get(unit_id, [])
        ]

    # -- recording primitives (used by OpScope, MemoryUnit, CaseHandle) -----------------------

    def blob_for(self, value: Any) -> str:
        """Content-address a value and buffer its blob the first time this hash is seen."""
        digest, encoding, data = encode_value(value)
        if digest not in self._seen_blobs:
            self._seen_blobs.add(digest)
            self._blobs.append((digest, encoding, data))
        return digest

    def new_version(
        self,
        name: str,
        blob: str | None,
        category: str,
        *,
        deleted: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Write the next version of variable `name` and return its id (`name@version`)."""
        with self._version_lock:
            latest = self._latest.get(name)
            version = 1 if latest is None else latest[0] + 1
            var_id = f"{name}@{version}"
            self._latest[name] = (version, blob, var_id, deleted)
            if blob is not None:
                self._by_blob[blob] = var_id
            seq = self.next_seq()
        self._vars.append(
            (
                self.id,
                var_id,
                name,
                version,
                seq,
                category,
                blob,
                1 if deleted else 0,
                _now(),
                dumps_or_none(metadata) if metadata else None,
            )
        )
        self._pending += 2
        if self._pending >= self.flush_every:
            self.flush()
        return var_id

    def latest(self, name: str) -> tuple[int, str | None, str, bool] | None:
        """(version, content hash, id, deleted) of a variable's latest version, or None."""
        return self._latest.get(name)

    def version_with_content(self, blob: str) -> str | None:
        """The latest variable version recorded with this exact content, if any."""
        return self._by_blob.get(blob)

    def edge(self, op_id: str, var_id: str, role: str) -> None:
        self._edges.append((self.id, op_id, var_id, role, None, None))

    def op_finished(self, row: tuple) -> None:
        self._ops.append(row)
        self._pending += 1
        if self._pending >= self.flush_every:
            self.flush()

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
        self._dirty_cases[case_id] = None

    def flush(self) -> None:
        """Write buffered rows to the store in one transaction."""
        with self._flush_lock:
            # Take a prefix and delete it (each step atomic) rather than swapping lists: another
            # thread may hold the list it is about to append to.
            ops, variables = _take(self._ops), _take(self._vars)
            edges, blobs = _take(self._edges), _take(self._blobs)
            dirty, self._dirty_cases = self._dirty_cases, {}
            self._pending = 0
            cases = [case_row(self._cases[c]) for c in dirty]
            if ops or variables or edges or blobs or cases:
                self._journal.append_rows(ops, variables, edges, blobs, cases)

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
            self.flush()
        finally:
            self._journal.close(status, text, self.run.finished_at, dumps_or_none(self.run.metadata))
            if self in open_runs:
                open_runs.remove(self)
            _live_recorders.discard(self)
            if self._owns_store:
                self.store.close()

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


def _take(rows: list[tuple]) -> list[tuple]:
    """Remove and return the rows present now; rows appended meanwhile stay for the next flush."""
    n = len(rows)
    taken = rows[:n]
    del rows[:n]
    return taken


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
