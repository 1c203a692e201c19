"""Memory-state checkpoints: the live memory units of a run saved every few thousand memory versions.

`memory_state_at(seq)` would otherwise group every memory version up to `seq` by unit, which at a
million versions takes half a second. With checkpoints it loads the nearest one at or before `seq`
and replays at most `CHECKPOINT_EVERY` versions on top. Checkpoints are derived data: built when a
journal is indexed or a run imported, and rebuilt from the versions whenever asked.
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


def rebuild_checkpoints(conn: sqlite3.Connection, run_id: str, every: int | None = None) -> int:
    """Drop and rebuild a run's checkpoints (after an import rewrote its versions)."""
    conn.execute("DELETE FROM memory_checkpoints WHERE run=?", (run_id,))
    return update_checkpoints(conn, run_id, every)
