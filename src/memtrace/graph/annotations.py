"""The annotations table: labels on failed cases (decisive operation, error type) by people or benchmarks."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ..vocabulary import error_type_or_none
from .model import Annotation

_COLUMNS = "run, case_id, error_type, op, note, author, created_at"


def insert_annotations_in(conn: sqlite3.Connection, annotations: Sequence[Annotation]) -> None:
    """Insert annotations inside a transaction the caller holds."""
    conn.executemany(
        f"INSERT INTO annotations({_COLUMNS}) VALUES (?,?,?,?,?,?,?)",
        [(a.run_id, a.case_id, a.error_type, a.op_id, a.note, a.author, a.created_at) for a in annotations],
    )


def load_annotations(conn: sqlite3.Connection, run_id: str | None = None) -> list[Annotation]:
    """Annotations in the order they were stored, of one run or all."""
    sql = f"SELECT {_COLUMNS} FROM annotations"
    rows = (
        conn.execute(sql + " ORDER BY id").fetchall()
        if run_id is None
        else conn.execute(sql + " WHERE run=? ORDER BY id", (run_id,)).fetchall()
    )
    return [Annotation(row[0], row[1], error_type_or_none(row[2]), *row[3:]) for row in rows]
