"""Memory-state checkpoints: the live memory units of a run saved every few thousand memory versions.

`memory_state_at(seq)` would otherwise group every memory version up to `seq` by unit, which at a
million versions takes half a second. With checkpoints it loads the nearest one at or before `seq`
and replays at most `CHECKPOINT_EVERY` versions on top. Checkpoints are derived data: a run whose
versions were indexed, imported or copied since is marked stale (`stale_checkpoints`), and its next
memory-state query builds them, so an open that indexes a million versions does not (an eighth of it).
A query never needs them to be right, only to be fast: it replays from the nearest one it finds.
"""

from __future__ import annotations

import marshal
import sqlite3
import zlib
from typing import Any

from .model import MEMORY_ENTRY

#: Memory versions between two checkpoints (and so at most this many replayed per query).
CHECKPOINT_EVERY = 4096

_MEMORY_ROWS = (
    "SELECT run, id, name, version, seq, category, blob, deleted, created_at, metadata"
    f" FROM vars INDEXED BY vars_memory WHERE run=? AND category='{MEMORY_ENTRY}' AND seq>? AND seq<=?"
    " ORDER BY seq"
)

State = dict[str, tuple[Any, ...]]


def latest_checkpoint(conn: sqlite3.Connection, run_id: str, seq: int) -> tuple[int, State]:
    """The checkpoint at or before `seq` (seq 0 and an empty state when there is none)."""
    row = conn.execute(
        "SELECT seq, state FROM memory_checkpoints WHERE run=? AND seq<=? ORDER BY seq DESC LIMIT 1",
        (run_id, seq),
    ).fetchone()
    if row is None:
        return 0, {}
    return row[0], marshal.loads(zlib.decompress(row[1]))


def apply_versions(state: State, rows: list[tuple[Any, ...]]) -> None:
    """Replay memory versions (rows in seq order) onto a state: a deletion drops the unit."""
    for row in rows:
        # Pop first so that re-inserting moves the unit to the end: the dict stays in seq order.
        state.pop(row[2], None)
        if not row[7]:
            state[row[2]] = row


def state_rows_at(conn: sqlite3.Connection, run_id: str, seq: int) -> list[tuple[Any, ...]]:
    """Rows of the live memory versions as of `seq`, in seq order."""
    start, state = latest_checkpoint(conn, run_id, seq)
    apply_versions(state, conn.execute(_MEMORY_ROWS, (run_id, start, seq)).fetchall())
    return list(state.values())


def update_checkpoints(conn: sqlite3.Connection, run_id: str, every: int | None = None) -> int:
    """Add checkpoints for memory versions recorded since the last one; returns how many were written.

    Runs inside the caller's transaction, so a crash leaves either all of them or none.
    """
    every = every or CHECKPOINT_EVERY
    last = conn.execute("SELECT MAX(seq) FROM memory_checkpoints WHERE run=?", (run_id,)).fetchone()[0]
    start, state = latest_checkpoint(conn, run_id, last) if last is not None else (0, {})
    rows = conn.execute(_MEMORY_ROWS, (run_id, start, 2**62)).fetchall()
    written = 0
    for begin in range(0, len(rows) - every + 1, every):
        chunk = rows[begin : begin + every]
        apply_versions(state, chunk)
        blob = zlib.compress(marshal.dumps(state), 1)
        conn.execute(
            "INSERT OR REPLACE INTO memory_checkpoints(run, seq, state) VALUES (?, ?, ?)",
            (run_id, chunk[-1][4], blob),
        )
        written += 1
    return written


def mark_stale(conn: sqlite3.Connection, run_id: str, *, drop: bool = False) -> None:
    """Note that a run has memory versions its checkpoints miss (built on its next memory-state query);
    `drop` first removes its checkpoints (its versions were rewritten). In the caller's transaction."""
    if drop:
        conn.execute("DELETE FROM memory_checkpoints WHERE run=?", (run_id,))
    conn.execute("INSERT OR IGNORE INTO stale_checkpoints(run) VALUES (?)", (run_id,))


def is_stale(conn: sqlite3.Connection, run_id: str) -> bool:
    return conn.execute("SELECT 1 FROM stale_checkpoints WHERE run=?", (run_id,)).fetchone() is not None


def refresh_checkpoints(conn: sqlite3.Connection, run_id: str) -> int:
    """Bring a stale run's checkpoints up to date in the caller's transaction; how many were written."""
    if not is_stale(conn, run_id):  # another thread or process got there first
        return 0
    written = update_checkpoints(conn, run_id)
    conn.execute("DELETE FROM stale_checkpoints WHERE run=?", (run_id,))
    return written
