"""Copy the first part of a run into another: what a replay reuses instead of re-executing."""

from __future__ import annotations

import sqlite3


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
