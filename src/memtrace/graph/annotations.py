"""The annotations table: labels on failed cases (decisive operation, error type) by people or benchmarks."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace

from ..vocabulary import error_type_or_none
from .model import Annotation

_COLUMNS = "run, case_id, error_type, op, note, author, created_at"


def _row(a: Annotation) -> tuple:
    return (a.run_id, a.case_id, a.error_type, a.op_id, a.note, a.author, a.created_at)


def insert_annotations_in(conn: sqlite3.Connection, annotations: Sequence[Annotation]) -> None:
    """Insert annotations inside a transaction the caller holds."""
    conn.executemany(
        f"INSERT INTO annotations({_COLUMNS}) VALUES (?,?,?,?,?,?,?)", [_row(a) for a in annotations]
    )


def add_annotation_in(conn: sqlite3.Connection, annotation: Annotation) -> Annotation:
    """Insert one label inside the caller's transaction; returns it with its row id."""
    cursor = conn.execute(f"INSERT INTO annotations({_COLUMNS}) VALUES (?,?,?,?,?,?,?)", _row(annotation))
    return replace(annotation, id=cursor.lastrowid)


def delete_annotation_in(conn: sqlite3.Connection, annotation_id: int) -> bool:
    """Remove one label by id inside the caller's transaction; False when there was none."""
    return conn.execute("DELETE FROM annotations WHERE id=?", (annotation_id,)).rowcount > 0


def load_annotations(
    conn: sqlite3.Connection, run_id: str | None = None, case_id: str | None = None
) -> list[Annotation]:
    """Annotations in the order they were stored: all, one run's, or one case's."""
    sql = f"SELECT {_COLUMNS}, id FROM annotations"
    if run_id is None:
        rows = conn.execute(sql + " ORDER BY id").fetchall()
    elif case_id is None:
        rows = conn.execute(sql + " WHERE run=? ORDER BY id", (run_id,)).fetchall()
    else:
        rows = conn.execute(sql + " WHERE run=? AND case_id=? ORDER BY id", (run_id, case_id)).fetchall()
    return [Annotation(row[0], row[1], error_type_or_none(row[2]), *row[3:]) for row in rows]
