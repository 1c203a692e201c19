"""The recording journal: a run's rows appended to a file while it records, indexed into SQLite later.

Writing indexed SQLite rows costs tens of microseconds per operation; appending a marshalled batch
to a file costs well under one. So a recorder appends frames to `<workspace>/journal/<run>.jnl`
and the next `Store` opened on the workspace moves complete frames into the tables, in one
transaction per journal, remembering how far it got. A recorder holds an exclusive `flock` on its
journal while it lives, so an ingester can tell a live run (ingest what is there, come back later)
from one whose process died (ingest everything and mark the run incomplete).
"""

from __future__ import annotations

import fcntl
import marshal
import struct
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .model import RUN_INCOMPLETE

if TYPE_CHECKING:
    from .store import Store

JOURNAL_DIR = "journal"
SUFFIX = ".jnl"
_HEADER = struct.Struct("<Q")
ROWS = "rows"
CLOSE = "close"


def journal_path(workspace_dir: Path, run_id: str) -> Path:
    return workspace_dir / JOURNAL_DIR / f"{run_id}{SUFFIX}"


class JournalWriter:
    """Appends frames for one run; holds an exclusive lock on the file for as long as it is open."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[bytes] | None = open(path, "ab")  # noqa: SIM115 - held for the run's life
        fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def append_rows(
        self,
        ops: list[tuple],
        variables: list[tuple],
        edges: list[tuple],
        blobs: list[tuple],
        cases: list[tuple],
    ) -> None:
        self._write((ROWS, ops, variables, edges, blobs, cases))

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
        self._file.write(_HEADER.pack(len(payload)) + payload)
        self._file.flush()


def _writer_alive(path: Path) -> bool:
    """True while some recorder still holds the journal's lock."""
    try:
        with open(path, "rb") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            return False
    except FileNotFoundError:
        return False


def _read_frames(path: Path, offset: int) -> tuple[list[tuple], int]:
    """Complete frames from `offset` on, and the offset after the last complete one."""
    frames: list[tuple] = []
    with open(path, "rb") as handle:
        handle.seek(offset)
        data = handle.read()
    position = 0
    while position + _HEADER.size <= len(data):
        (size,) = _HEADER.unpack_from(data, position)
        end = position + _HEADER.size + size
        if end > len(data):
            break  # a frame still being written, or cut off by a crash
        frames.append(marshal.loads(data[position + _HEADER.size : end]))
        position = end
    return frames, offset + position


def ingest_journals(store: Store, workspace_dir: Path) -> int:
    """Move every pending journal frame into the store; returns how many journals were read."""
    directory = workspace_dir / JOURNAL_DIR
    if not directory.is_dir():
        return 0
    count = 0
    for path in sorted(directory.glob(f"*{SUFFIX}")):
        ingest_journal(store, path)
        count += 1
    return count


def ingest_journal(store: Store, path: Path) -> None:
    """Ingest one journal: what is complete now; the whole file and its removal once the run ended."""
    run_id = path.name[: -len(SUFFIX)]
    alive = _writer_alive(path)
    with store.transaction() as conn:
        row = conn.execute("SELECT offset FROM journal_state WHERE run=?", (run_id,)).fetchone()
        status = conn.execute("SELECT status FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None and (status is None or status[0] != "running"):
            frames, new_offset = [], 0  # another process ingested it and is about to remove the file
            alive = False
        else:
            offset = row[0] if row else 0
            try:
                frames, new_offset = _read_frames(path, offset)
            except FileNotFoundError:
                return
        closed: tuple[Any, ...] | None = None
        for frame in frames:
            if frame[0] == ROWS:
                _, ops, variables, edges, blobs, cases = frame
                store.insert_rows_in(
                    conn, ops=ops, variables=variables, edges=edges, blobs=blobs, cases=cases
                )
            elif frame[0] == CLOSE:
                closed = frame
        finished = closed is not None or not alive
        if closed is not None:
            _, status, error, finished_at, metadata = closed
            conn.execute(
                "UPDATE runs SET status=?, error=?, finished_at=?, metadata=COALESCE(?, metadata) WHERE id=?",
                (status, error, finished_at, metadata, run_id),
            )
        elif not alive:
            conn.execute(
                "UPDATE runs SET status=?, error=?, finished_at=? WHERE id=? AND status='running'",
                (RUN_INCOMPLETE, "the recording process ended without closing the run", time.time(), run_id),
            )
        if finished:
            conn.execute("DELETE FROM journal_state WHERE run=?", (run_id,))
        else:
            conn.execute(
                "INSERT INTO journal_state(run, offset) VALUES (?, ?)"
                " ON CONFLICT(run) DO UPDATE SET offset=excluded.offset",
                (run_id, new_offset),
            )
    if finished:
        path.unlink(missing_ok=True)
