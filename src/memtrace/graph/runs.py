"""The runs table: one row per recorded run, how a reference (id, name, id prefix) finds it, and
deleting a run with everything recorded for it."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import AmbiguousRunError, NotFoundError
from .copying import materialize_prefix
from .model import MEMORY_ENTRY, Run
from .rows import RunCounts, dumps_or_none, run_from_row

RUN_COLUMNS = (
    "id, name, system, dataset, conversation, parent_run, status, error, config, metadata,"
    " created_at, finished_at"
)

#: The tables holding rows of one run (column `run`), all emptied when the run is deleted.
RUN_TABLES = (
    "ops",
    "vars",
    "edges",
    "cases",
    "attributions",
    "annotations",
    "memory_checkpoints",
    "stale_checkpoints",
    "journal_state",
    "pending_prefixes",
    "verify_claims",
)


def insert_run_in(conn: sqlite3.Connection, run: Run) -> None:
    """Insert a run row inside a transaction the caller holds."""
    conn.execute(
        f"INSERT INTO runs({RUN_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            run.id,
            run.name,
            run.system,
            run.dataset,
            run.conversation,
            run.parent_run,
            run.status,
            run.error,
            dumps_or_none(run.config),
            dumps_or_none(run.metadata),
            run.created_at,
            run.finished_at,
        ),
    )


def run_exists(conn: sqlite3.Connection, run_id: str) -> bool:
    return conn.execute("SELECT 1 FROM runs WHERE id=?", (run_id,)).fetchone() is not None


def finish_run_in(
    conn: sqlite3.Connection,
    run_id: str,
    status: str,
    error: str | None,
    finished_at: float,
    metadata: dict | None,
) -> None:
    """Set a run's end state inside the caller's transaction; metadata None keeps what was stored."""
    conn.execute(
        "UPDATE runs SET status=?, error=?, finished_at=?, metadata=COALESCE(?, metadata) WHERE id=?",
        (status, error, finished_at, dumps_or_none(metadata), run_id),
    )


def delete_run_in(conn: sqlite3.Connection, run_id: str) -> None:
    """Delete a run inside a transaction the caller holds (re-import replaces atomically).

    Replays still waiting for their prefix from this run get it copied first: they outlive it.
    """
    waiting = conn.execute("SELECT run FROM pending_prefixes WHERE source=?", (run_id,)).fetchall()
    for (replayed,) in waiting:
        materialize_prefix(conn, replayed)
    for table in RUN_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE run=?", (run_id,))
    conn.execute("DELETE FROM runs WHERE id=?", (run_id,))


def load_runs(conn: sqlite3.Connection) -> list[Run]:
    rows = conn.execute(f"SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at, id").fetchall()
    return [run_from_row(row) for row in rows]


def find_run(conn: sqlite3.Connection, db_path: Path, ref: str) -> Run:
    """A run by id, or by its name when no other run has it, or by a unique id prefix, or by the name
    after its split (`conv-h01` for the one run named `<split>/conv-h01`).

    A name, prefix or split-less name several runs match raises AmbiguousRunError listing them
    instead of silently picking one.
    """
    row = conn.execute(f"SELECT {RUN_COLUMNS} FROM runs WHERE id=?", (ref,)).fetchone()
    if row is None:
        named = conn.execute(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE name=? ORDER BY created_at, id", (ref,)
        ).fetchall()
        if len(named) > 1:
            raise AmbiguousRunError(db_path, ref, [_run_label(r) for r in named])
        row = named[0] if named else None
    escaped = ref.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_")
    if row is None:
        row = _one_or_ambiguous(
            conn, db_path, ref, "id LIKE ?", escaped + "%", "run id prefix", "start with it"
        )
    if row is None:  # an imported split's run, `mem0/conv-h01`, by its conversation's name
        row = _one_or_ambiguous(
            conn, db_path, ref, "name LIKE ?", "%/" + escaped, "run name", f"are named <split>/{ref}"
        )
    if row is None:
        raise NotFoundError(f"{db_path}: no run {ref!r}")
    return run_from_row(row)


def _one_or_ambiguous(
    conn: sqlite3.Connection, db_path: Path, ref: str, where: str, pattern: str, what: str, how: str
) -> Sequence[Any] | None:
    """The one run matching `where`, None for none; several are an AmbiguousRunError listing them."""
    rows = conn.execute(
        f"SELECT {RUN_COLUMNS} FROM runs WHERE {where} ESCAPE '\\' ORDER BY created_at, id LIMIT 11",
        (pattern,),
    ).fetchall()
    if len(rows) > 1:
        raise AmbiguousRunError(db_path, ref, [_run_label(r) for r in rows], what=what, how=how)
    return rows[0] if rows else None


def run_counts(conn: sqlite3.Connection) -> dict[str, RunCounts]:
    """Per-run sizes for listings (runs with nothing recorded are absent), in four queries."""
    counts: dict[str, RunCounts] = {}

    def of(run_id: str) -> RunCounts:
        return counts.setdefault(run_id, RunCounts())

    for run_id, n in conn.execute("SELECT run, COUNT(*) FROM ops GROUP BY run"):
        of(run_id).ops = n
    for run_id, n in conn.execute("SELECT run, COUNT(*) FROM vars GROUP BY run"):
        of(run_id).versions = n
    for run_id, n in conn.execute(
        "SELECT run, COUNT(DISTINCT name) FROM vars WHERE category=? GROUP BY run", (MEMORY_ENTRY,)
    ):
        of(run_id).units = n
    for run_id, n, failed in conn.execute(
        "SELECT run, COUNT(*), SUM(verdict='wrong') FROM cases GROUP BY run"
    ):
        of(run_id).cases, of(run_id).failed = n, failed or 0
    return counts


def _run_label(row: Sequence[Any]) -> str:
    """A candidate run for an ambiguity message: id, then what tells it apart (system, source file)."""
    run = run_from_row(row)
    source = run.metadata.get("source") if isinstance(run.metadata.get("source"), dict) else {}
    details = [d for d in (run.name, run.system and f"system {run.system}", source.get("file")) if d]
    return run.id + (f" ({', '.join(details)})" if details else "")
