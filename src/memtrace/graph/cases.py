"""The cases table: each question asked in a run, its gold answer, the prediction and the verdict."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from ..errors import NotFoundError
from .model import Case
from .rows import case_from_row

#: Column order of the case tuples writers pass in.
CASE_COLUMNS = (
    "run, id, question, gold, prediction, prediction_var, verdict, score, evidence, category, metadata"
)


def upsert_cases_in(conn: sqlite3.Connection, cases: Sequence[tuple]) -> None:
    """Insert or update cases inside the caller's transaction.

    An upsert keeps the row (and so the order cases were asked in) when a case is updated.
    """
    conn.executemany(
        f"INSERT INTO cases({CASE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(run, id) DO UPDATE SET question=excluded.question, gold=excluded.gold,"
        " prediction=excluded.prediction, prediction_var=excluded.prediction_var,"
        " verdict=excluded.verdict, score=excluded.score, evidence=excluded.evidence,"
        " category=excluded.category, metadata=excluded.metadata",
        cases,
    )


def load_cases(conn: sqlite3.Connection, run_id: str | None = None) -> list[Case]:
    """Cases in the order they were asked: all runs' (by run), or one run's."""
    if run_id is None:
        rows = conn.execute(f"SELECT {CASE_COLUMNS} FROM cases ORDER BY run, rowid").fetchall()
    else:
        rows = conn.execute(
            f"SELECT {CASE_COLUMNS} FROM cases WHERE run=? ORDER BY rowid", (run_id,)
        ).fetchall()
    return [case_from_row(row) for row in rows]


def load_case(conn: sqlite3.Connection, db_path: Path, run_id: str, case_id: str) -> Case:
    """One case of a run; a missing one is a NotFoundError naming it and the workspace."""
    row = conn.execute(f"SELECT {CASE_COLUMNS} FROM cases WHERE run=? AND id=?", (run_id, case_id)).fetchone()
    if row is None:
        raise NotFoundError(f"{db_path}: run {run_id} has no case {case_id!r}")
    return case_from_row(row)


def verdict_counts(conn: sqlite3.Connection) -> dict[str, dict[str | None, int]]:
    """Per run, how many cases have each verdict (None: not judged), without reading the cases."""
    counts: dict[str, dict[str | None, int]] = {}
    for run_id, verdict, n in conn.execute("SELECT run, verdict, COUNT(*) FROM cases GROUP BY run, verdict"):
        counts.setdefault(run_id, {})[verdict] = n
    return counts
