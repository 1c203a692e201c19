"""What a task recorded, as bytes: a run's row, its journal, its files (snapshots) and model calls.

A task records into a scratch workspace of its own; `pack_run` reads one run out of it and
`ingest_run` writes it into the user's workspace. Ingest is idempotent per run id: a run already
stored (a retried task, a re-sent result) is left as it is, so nothing is written twice.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..graph.copying import defer_prefix, pending_prefix
from ..graph.journal import JOURNAL_DIR, ingest_journal, journal_path
from ..graph.model import RUN_RUNNING, Run
from ..graph.store import DB_FILENAME, Store
from ..llm.cache import CACHE_FILENAME, add_cache_rows, cache_rows
from .scratch import worker_folder

#: Files of a workspace that are not shipped as files: the database, journals and the model cache.
_NOT_FILES = (DB_FILENAME, JOURNAL_DIR, CACHE_FILENAME)


@dataclass(slots=True)
class RunRecord:
    """One run a task recorded: enough for the driver to rebuild it exactly in its own workspace."""

    run: Run
    journal: bytes
    #: Path relative to the workspace -> bytes (the run's snapshots).
    files: dict[str, bytes] = field(default_factory=dict)
    cache: list[tuple] = field(default_factory=list)
    #: A replay's reused prefix: (source run, up to seq), copied from the driver's own source run.
    prefix: tuple[str, int] | None = None


@contextlib.contextmanager
def scratch_workspace(prefix: str = "memtrace-task-") -> Iterator[Path]:
    """A private temporary workspace for one task, removed afterwards (or with its process's folder)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=worker_folder()))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def pack_run(scratch: Path, run_id: str) -> RunRecord:
    """Read run `run_id` (closed, not yet indexed) out of a scratch workspace."""
    store = Store(scratch, ingest=False)
    try:
        run = store.run(run_id)
    finally:
        store.close()
    journal = journal_path(scratch, run_id)
    files = {
        str(path.relative_to(scratch)): path.read_bytes()
        for path in sorted(scratch.rglob("*"))
        if path.is_file()
        and path.relative_to(scratch).parts[0] not in _NOT_FILES
        and not path.name.startswith(f"{DB_FILENAME}-")
    }
    return RunRecord(run, journal.read_bytes() if journal.exists() else b"", files, cache_rows(scratch))


def pack_replay(store: Store, run: Run) -> RunRecord:
    """A replay that just closed in a scratch workspace (its journal not indexed yet): its row as a
    replay inserts it, its journal, and the prefix it reuses from its source run."""
    workspace = store.path.parent
    with store.transaction() as conn:
        prefix = pending_prefix(conn, run.id)
    journal = journal_path(workspace, run.id)
    row = replace(run, status=RUN_RUNNING, error=None, finished_at=None)  # the journal's end sets them
    data = journal.read_bytes() if journal.exists() else b""
    return RunRecord(row, data, {}, cache_rows(workspace), prefix)


def ingest_run(store: Store, record: RunRecord) -> bool:
    """Write `record` into the workspace of `store`; False when that run was already there."""
    workspace = store.path.parent
    add_cache_rows(workspace, record.cache)
    if record.prefix is not None:
        store.complete(record.prefix[0])  # a prefix comes from a complete run (start_resumed_run)
    with store.transaction() as conn:
        row = conn.execute("SELECT status FROM runs WHERE id=?", (record.run.id,)).fetchone()
        if row is None:
            store.insert_run_in(conn, record.run)
            if record.prefix is not None:  # deferred as the replay's own recording defers it
                defer_prefix(conn, record.prefix[0], record.run.id, record.prefix[1])
    if row is not None and row[0] != "running":
        return False
    for relative, data in record.files.items():
        _write_atomically(workspace / relative, data)
    path = journal_path(workspace, record.run.id)
    if record.journal and not path.exists():
        _write_atomically(path, record.journal)
    if path.exists():
        ingest_journal(store, path)
    return row is None


def _write_atomically(path: Path, data: bytes) -> None:
    """Whole or absent: a reader never sees half a journal or half a snapshot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    hidden = path.with_name(f".{path.name}.{os.getpid()}.part")
    hidden.write_bytes(data)
    os.replace(hidden, path)
