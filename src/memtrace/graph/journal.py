"""The recording journal: a run's rows appended to a file while it records, indexed into SQLite later.

Writing indexed SQLite rows costs tens of microseconds per operation; appending a marshalled batch
to a file costs well under one. So a recorder appends frames to `<workspace>/journal/<run>.jnl`
and the next `Store` opened on the workspace moves complete frames into the tables, in one
transaction per journal, remembering how far it got. A recorder holds an exclusive `flock` on its
journal while it lives, so an ingester can tell a live run (ingest what is there, come back later)
from one whose process died (ingest everything and mark the run incomplete). The journal is locked
before it becomes visible, and an ingester removes only a journal it has locked itself (or one that
holds its closing frame), so a reader racing a starting recorder never buries a live run.

A dead writer's file is final: a frame cut short there, one that cannot be decoded, one of a shape
the writer never makes, or rows the store refuses are damage. The frames before it are ingested,
the run is marked incomplete, and the whole file is kept beside as `<run>.damaged` with a warning.
"""

from __future__ import annotations

import fcntl
import logging
import marshal
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Protocol

from .checkpoints import mark_stale
from .journal_bulk import (
    ROWS_PER_BATCH,
    RowBatch,
    RowWriter,
    deferred_indexes,
    frame_rows,
    worth_deferring,
)
from .journal_frames import HEADER, DamagedJournal, read_frames
from .journal_shape import CLOSE, FLAT
from .model import RUN_INCOMPLETE


class IngestTarget(RowWriter, Protocol):
    """What ingesting a journal needs of the store (store.py's `Store`), so the journal never imports it:
    its rows writer (journal_bulk.RowWriter), its connection, its transactions and its bulk loads."""

    conn: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def bulk_load(self, wanted: bool) -> AbstractContextManager[bool]: ...


JOURNAL_DIR = "journal"
SUFFIX = ".jnl"
DAMAGED_SUFFIX = ".damaged"

#: After the store refused rows, frames are written in transactions of about this many rows while
#: the refused frame is looked for (a journal is otherwise indexed in one transaction).
ROWS_PER_TRANSACTION = 100_000

_log = logging.getLogger("memtrace")

#: Called as progress(run_id, bytes_done, bytes_total) while a journal is indexed.
IngestProgress = Callable[[str, int, int], None]


def journal_path(workspace_dir: Path, run_id: str) -> Path:
    return workspace_dir / JOURNAL_DIR / f"{run_id}{SUFFIX}"


class JournalWriter:
    """Appends frames for one run; holds an exclusive lock on the file for as long as it is open."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[bytes] | None = create_locked(path)

    def append_rows(
        self,
        ops: list[object],
        variables: list[object],
        edges: list[object],
        blobs: list[object],
        cases: list[tuple],
    ) -> None:
        """One frame of rows: ops, variables, edges and blobs each flat (their rows' values end to
        end, journal_shape.py), cases as row tuples."""
        self._write((FLAT, ops, variables, edges, blobs, cases))

    def close(self, status: str, error: str | None, finished_at: float, metadata: str | None) -> None:
        """Write the closing frame and release the lock."""
        if self._file is None:
            return
        self._write((CLOSE, status, error, finished_at, metadata))
        self._file.close()
        self._file = None

    def _write(self, frame: tuple) -> None:
        assert self._file is not None, "journal already closed"
        payload = marshal.dumps(frame)
        self._file.write(HEADER.pack(len(payload)) + payload)
        self._file.flush()


def create_locked(path: Path) -> IO[bytes]:
    """Create the journal already locked: locked under a name readers ignore, then renamed into place.

    A reader that saw an unlocked `<run>.jnl` would take the run for dead and remove the file.
    """
    hidden = path.with_name(f".{path.name}.{os.getpid()}.new")
    handle = open(hidden, "ab")  # noqa: SIM115 - held for the run's life
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(hidden, path)
    except BaseException:
        handle.close()
        hidden.unlink(missing_ok=True)
        raise
    return handle


@contextmanager
def _dead_writer_lock(path: Path) -> Iterator[bool]:
    """Yields True, holding the journal's lock, when no recorder holds it (its process ended).

    Holding it until the journal is finished means a reader only ever removes a file it locked.
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        yield False
        return
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            same_file = os.fstat(handle.fileno()).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same_file = False
        yield same_file


def ingest_journals(store: IngestTarget, workspace_dir: Path, progress: IngestProgress | None = None) -> int:
    """Move every pending journal frame into the store; returns how many journals were read."""
    directory = workspace_dir / JOURNAL_DIR
    if not directory.is_dir():
        return 0
    paths = sorted(directory.glob(f"*{SUFFIX}"))
    for path in paths:
        ingest_journal(store, path, progress)
    return len(paths)


def warn_unindexed_journals(workspace_dir: Path) -> None:
    """Say, in one line, that a read-only workspace holds recordings it cannot index."""
    directory = workspace_dir / JOURNAL_DIR
    pending = len(list(directory.glob(f"*{SUFFIX}"))) if directory.is_dir() else 0
    if pending:
        _log.warning(
            "memtrace: %s is read-only: %d recording journal(s) could not be indexed, so their runs show"
            " only what was indexed before",
            workspace_dir,
            pending,
        )


def ingest_journal(store: IngestTarget, path: Path, progress: IngestProgress | None = None) -> None:
    """Ingest one journal frame by frame (one transaction each); finish the run once it has ended."""
    with _dead_writer_lock(path) as writer_dead:
        _ingest_locked(store, path, not writer_dead, progress)


def _ingest_locked(store: IngestTarget, path: Path, alive: bool, progress: IngestProgress | None) -> None:
    """Ingest with the writer's state settled: a dead writer's journal is locked by this reader.

    A live writer's last frame may be half written (it is read next time); a dead writer's file is
    final, so a frame cut short there is damage like an unreadable one: the frames before it are
    ingested, the run is marked incomplete and the file is set aside as `.damaged`.
    """
    run_id = path.name[: -len(SUFFIX)]
    with store.transaction() as conn:
        offset = _offset(conn, run_id)
    if offset is None:  # another process ingested it and is about to remove the file
        if not alive:
            path.unlink(missing_ok=True)
        return
    try:
        total = path.stat().st_size
        try:
            read = _ingest_at_once(store, path, run_id, offset, alive, total, progress)
        except _REFUSED_ROWS:  # rolled back: find the refused frame one frame at a time
            read = _ingest_frame_by_frame(store, path, run_id, offset, alive, total, progress)
    except FileNotFoundError:
        return
    if read is None:
        return  # another process is ingesting this journal concurrently
    closed, closed_at, damage = read
    if damage is not None and closed_at > damage.offset:
        closed = None  # records before the closing frame were lost: the run is not complete
    if damage is not None and alive:  # its writer still appends: settle it once the writer has ended
        return
    finished = closed is not None or not alive or damage is not None
    with store.transaction() as conn:
        mark_stale(conn, run_id)  # its checkpoints are built by its next memory-state query
        if closed is not None:
            _, status, error, finished_at, metadata = closed
            conn.execute(
                "UPDATE runs SET status=?, error=?, finished_at=?, metadata=COALESCE(?, metadata) WHERE id=?",
                (status, error, finished_at, metadata, run_id),
            )
        elif finished:
            reason = str(damage) if damage else "the recording process ended without closing the run"
            conn.execute(
                "UPDATE runs SET status=?, error=?, finished_at=? WHERE id=? AND status='running'",
                (RUN_INCOMPLETE, reason, time.time(), run_id),
            )
        if finished:
            conn.execute("DELETE FROM journal_state WHERE run=?", (run_id,))
    if finished:
        if damage is not None:
            aside = path.with_suffix(DAMAGED_SUFFIX)
            path.rename(aside)
            _log.warning("memtrace: run %s: %s; the journal was moved to %s", run_id, damage, aside)
        else:
            path.unlink(missing_ok=True)


#: What a pass over a journal found: its closing frame (None if not read), where that frame starts,
#: and the damage that stopped the reading (None if none).
_Read = tuple[tuple | None, int, "DamagedJournal | None"]


def _ingest_at_once(
    store: IngestTarget,
    path: Path,
    run_id: str,
    offset: int,
    alive: bool,
    total: int,
    progress: IngestProgress | None,
) -> _Read | None:
    """Every complete frame from `offset` on in one transaction, rows batched across frames; when the
    run is new and large, the indexes are rebuilt after the load (journal_bulk.py) and, if no other
    connection has the database open, the load bypasses the WAL (connect.py). None when another
    process moved the offset. Rows the store refuses roll it all back and raise."""
    closed: tuple | None = None
    closed_at = -1
    damage: DamagedJournal | None = None
    batch = RowBatch()
    bulk = offset == 0 and worth_deferring(store.conn, total)
    with store.bulk_load(bulk), store.transaction() as conn:
        if _offset(conn, run_id) != offset:
            return None
        end = offset
        with deferred_indexes(conn, bulk):
            try:
                for frame, start, end in read_frames(path, offset, run_id, final=not alive):
                    if frame[0] != CLOSE:
                        batch.add(frame)
                        if batch.size >= ROWS_PER_BATCH:
                            batch.write(store, conn)
                            if progress is not None:
                                progress(run_id, end, total)
                    else:
                        closed, closed_at = frame, start
            except DamagedJournal as exc:
                damage = exc
            batch.write(store, conn)
        if end != offset:
            _set_offset(conn, run_id, end)
    if progress is not None and end != offset:
        progress(run_id, end, total)
    return closed, closed_at, damage


def _ingest_frame_by_frame(
    store: IngestTarget,
    path: Path,
    run_id: str,
    offset: int,
    alive: bool,
    total: int,
    progress: IngestProgress | None,
) -> _Read | None:
    """The slow path, after the store refused rows: frames committed in bounded transactions and,
    where one fails, one by one, so the frames before the refused one are kept and it is the damage."""
    closed: tuple | None = None
    closed_at = -1
    damage: DamagedJournal | None = None
    pending: list[tuple[tuple, int, int]] = []
    pending_rows = 0
    end = offset

    def commit() -> bool:
        """Write the pending frames in one transaction; False if another process got there first.
        Rows the store refuses are damage: the frames before theirs are written, then it is raised."""
        nonlocal offset, pending, pending_rows, end
        frames, pending, pending_rows = pending, [], 0
        try:
            if not _commit(store, run_id, offset, frames, end):
                return False
        except _REFUSED_ROWS:
            for frame, frame_start, frame_end in frames:  # one by one, to find the frame refused
                try:
                    if not _commit(store, run_id, offset, [(frame, frame_start, frame_end)], frame_end):
                        return False
                except _REFUSED_ROWS as exc:
                    end = offset
                    raise DamagedJournal(frame_start, f"rows the store refuses: {exc}") from None
                offset = frame_end
            if offset != end and not _commit(store, run_id, offset, [], end):
                return False
        offset = end
        if progress is not None:
            progress(run_id, end, total)
        return True

    try:
        try:
            for frame, start, frame_end in read_frames(path, offset, run_id, final=not alive):
                end = frame_end
                if frame[0] != CLOSE:
                    pending.append((frame, start, frame_end))
                    pending_rows += frame_rows(frame)
                else:
                    closed, closed_at = frame, start
                if pending_rows >= ROWS_PER_TRANSACTION and not commit():
                    return None
        except DamagedJournal as exc:
            damage = exc
        if end != offset and not commit():
            return None
    except DamagedJournal as exc:  # rows refused: a frame before any damage the reading found
        damage = exc
    return closed, closed_at, damage


#: What the store raises for rows it cannot take (wrong types, a broken constraint): damage, not a
#: failing disk or a busy database (`OperationalError`), which must stop the open as before.
_REFUSED_ROWS = (
    sqlite3.InterfaceError,
    sqlite3.ProgrammingError,
    sqlite3.IntegrityError,
    sqlite3.DataError,
    ValueError,
    TypeError,
    OverflowError,
)


def _commit(
    store: IngestTarget, run_id: str, offset: int, frames: list[tuple[tuple, int, int]], to: int
) -> bool:
    """Write the rows of `frames` (read from `offset` on) in one transaction and move the offset to
    `to`; False when the offset moved meanwhile (another process is ingesting the same journal)."""
    with store.transaction() as conn:
        if _offset(conn, run_id) != offset:
            return False
        batch = RowBatch()
        for frame, _, _ in frames:
            if frame[0] != CLOSE:
                batch.add(frame)
        batch.write(store, conn)
        _set_offset(conn, run_id, to)
    return True


def _offset(conn: sqlite3.Connection, run_id: str) -> int | None:
    """How far a journal has been ingested: 0 for a new one, None when its run already finished."""
    row = conn.execute("SELECT offset FROM journal_state WHERE run=?", (run_id,)).fetchone()
    if row is not None:
        return row[0]
    status = conn.execute("SELECT status FROM runs WHERE id=?", (run_id,)).fetchone()
    if status is not None and status[0] != "running":
        return None
    return 0


def _set_offset(conn: sqlite3.Connection, run_id: str, offset: int) -> None:
    conn.execute(
        "INSERT INTO journal_state(run, offset) VALUES (?, ?)"
        " ON CONFLICT(run) DO UPDATE SET offset=excluded.offset",
        (run_id, offset),
    )
