"""Copy the first part of a run into another: what a replay reuses instead of re-executing.

A replay does not copy at once: it records a pending prefix (`defer_prefix`), and the rows are
copied the first time anything reads the replayed run (`materialize_prefix`). Verification and
fault injection replay thousands of times and read back only the answer, so most prefixes are
never copied at all; a run someone opens is complete, as if it had been copied up front.
"""

from __future__ import annotations

import sqlite3

from .checkpoints import mark_stale


def defer_prefix(conn: sqlite3.Connection, source: str, target: str, upto_seq: int) -> None:
    """Note that run `target` starts with run `source`'s rows up to `upto_seq`, to be copied on read."""
    conn.execute(
        "INSERT OR REPLACE INTO pending_prefixes(run, source, upto_seq) VALUES (?, ?, ?)",
        (target, source, upto_seq),
    )


def pending_prefix(conn: sqlite3.Connection, run: str) -> tuple[str, int] | None:
    """(source run, up to seq) when `run` still waits for its prefix, else None."""
    row = conn.execute("SELECT source, upto_seq FROM pending_prefixes WHERE run=?", (run,)).fetchone()
    return None if row is None else (row[0], row[1])


def materialize_prefix(conn: sqlite3.Connection, run: str) -> bool:
    """Copy a pending prefix into `run` and mark its checkpoints stale; False when none was pending.

    Runs inside the caller's transaction. The source must already be complete (see Store).
    """
    pending = pending_prefix(conn, run)
    if pending is None:
        return False
    source, upto_seq = pending
    copy_prefix(conn, source, run, upto_seq)
    conn.execute("DELETE FROM pending_prefixes WHERE run=?", (run,))
    mark_stale(conn, run, drop=True)  # any built before the prefix came miss its versions
    return True


def copy_prefix(conn: sqlite3.Connection, source: str, target: str, upto_seq: int) -> None:
    """Copy operations, variable versions and edges with seq <= `upto_seq` from run `source` to `target`.

    Blobs are content-addressed and shared, so only rows move. Runs inside the caller's transaction.
    """
    conn.execute(
        "INSERT INTO ops(run, id, seq, parent_op, name, category, started_at, ended_at, status, metadata)"
        " SELECT ?, id, seq, parent_op, name, category, started_at, ended_at, status, metadata"
        " FROM ops WHERE run=? AND seq<=?",
        (target, source, upto_seq),
    )
    conn.execute(
        "INSERT INTO vars(run, id, name, version, seq, category, blob, deleted, created_at, metadata)"
        " SELECT ?, id, name, version, seq, category, blob, deleted, created_at, metadata"
        " FROM vars WHERE run=? AND seq<=?",
        (target, source, upto_seq),
    )
    conn.execute(
        "INSERT INTO edges(run, op, var, role, source, metadata)"
        " SELECT ?, e.op, e.var, e.role, e.source, e.metadata FROM edges e"
        " JOIN ops o ON o.run = e.run AND o.id = e.op"
        " JOIN vars v ON v.run = e.run AND v.id = e.var"
        " WHERE e.run=? AND o.seq<=? AND v.seq<=?",
        (target, source, upto_seq, upto_seq),
    )


def latest_versions(
    conn: sqlite3.Connection, run: str, upto_seq: int
) -> list[tuple[str, int, str | None, str, int, str]]:
    """(name, version, blob, id, deleted, category) of every variable's latest version up to a seq."""
    return conn.execute(
        "SELECT name, version, blob, id, deleted, category, MAX(seq) FROM vars WHERE run=? AND seq<=?"
        " GROUP BY name",
        (run, upto_seq),
    ).fetchall()
