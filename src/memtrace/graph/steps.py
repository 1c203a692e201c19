"""The ops, vars and edges tables: a run's recorded graph, each row ordered by its seq in the run."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from .inserts import insert_rows, insert_values
from .model import Edge, Operation, VariableVersion
from .rows import edge_from_row, op_from_row, var_from_row

# Column orders of the tuples that writers pass in (the recorder builds these directly).
OP_COLUMNS = "run, id, seq, parent_op, name, category, started_at, ended_at, status, metadata"
VAR_COLUMNS = "run, id, name, version, seq, category, blob, deleted, created_at, metadata"
EDGE_COLUMNS = "run, op, var, role, source, metadata"

_INSERT_OPS = f"INSERT OR REPLACE INTO ops({OP_COLUMNS})"
_INSERT_VARS = f"INSERT OR REPLACE INTO vars({VAR_COLUMNS})"
_INSERT_EDGES = f"INSERT INTO edges({EDGE_COLUMNS})"


def insert_steps_in(
    conn: sqlite3.Connection,
    *,
    ops: Sequence[tuple] = (),
    variables: Sequence[tuple] = (),
    edges: Sequence[tuple] = (),
) -> None:
    """Insert operation, variable-version and edge tuples inside the caller's transaction."""
    insert_rows(conn, _INSERT_OPS, 10, ops, nullable=(3, 9))
    insert_rows(conn, _INSERT_VARS, 10, variables, nullable=(9,))
    insert_rows(conn, _INSERT_EDGES, 6, edges, nullable=(4, 5))


def insert_step_values_in(
    conn: sqlite3.Connection, *, ops: list[object], variables: list[object], edges: list[object]
) -> None:
    """`insert_steps_in` for rows given flat (graph/inserts.py `insert_values`); the lists are consumed."""
    insert_values(conn, _INSERT_OPS, 10, ops, nullable=(3, 9))
    insert_values(conn, _INSERT_VARS, 10, variables, nullable=(9,))
    insert_values(conn, _INSERT_EDGES, 6, edges, nullable=(4, 5))


def load_ops(
    conn: sqlite3.Connection, run_id: str, where: str = "", params: Iterable[Any] = ()
) -> list[Operation]:
    rows = conn.execute(
        f"SELECT {OP_COLUMNS} FROM ops WHERE run=? {where} ORDER BY seq", (run_id, *params)
    ).fetchall()
    return [op_from_row(row) for row in rows]


def load_variables(
    conn: sqlite3.Connection, run_id: str, where: str = "", params: Iterable[Any] = ()
) -> list[VariableVersion]:
    rows = conn.execute(
        f"SELECT {VAR_COLUMNS} FROM vars WHERE run=? {where} ORDER BY seq", (run_id, *params)
    ).fetchall()
    return [var_from_row(row) for row in rows]


def load_edges(
    conn: sqlite3.Connection, run_id: str, where: str = "", params: Iterable[Any] = ()
) -> list[Edge]:
    rows = conn.execute(
        f"SELECT {EDGE_COLUMNS} FROM edges WHERE run=? {where} ORDER BY rowid", (run_id, *params)
    ).fetchall()
    return [edge_from_row(row) for row in rows]


def max_seq(conn: sqlite3.Connection, run_id: str) -> int:
    """The last seq given in a run (0 for an empty run): the end of its time axis."""
    row = conn.execute(
        "SELECT MAX(m) FROM (SELECT MAX(seq) AS m FROM ops WHERE run=?"
        " UNION ALL SELECT MAX(seq) FROM vars WHERE run=?)",
        (run_id, run_id),
    ).fetchone()
    return int(row[0] or 0)
