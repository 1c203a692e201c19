"""A whole stored run as rows, to rebuild it in another workspace (a worker on another machine).

The counterpart of `Store.replace_run`: what a task needs of a run travels as data, never as a path.
"""

from __future__ import annotations

from .blobs import BLOB_COLUMNS
from .cases import CASE_COLUMNS
from .model import Run
from .rows import RunRows
from .steps import EDGE_COLUMNS, OP_COLUMNS, VAR_COLUMNS
from .store import Store


def run_rows(store: Store, run_id: str) -> tuple[Run, RunRows]:
    """Run `run_id` with every row it owns and the blobs its versions hold."""
    run = store.run(run_id)  # a replay's deferred prefix is copied first
    with store.transaction() as conn:
        ops = conn.execute(f"SELECT {OP_COLUMNS} FROM ops WHERE run=? ORDER BY seq", (run_id,)).fetchall()
        variables = conn.execute(
            f"SELECT {VAR_COLUMNS} FROM vars WHERE run=? ORDER BY seq", (run_id,)
        ).fetchall()
        edges = conn.execute(f"SELECT {EDGE_COLUMNS} FROM edges WHERE run=?", (run_id,)).fetchall()
        cases = conn.execute(
            f"SELECT {CASE_COLUMNS} FROM cases WHERE run=? ORDER BY rowid", (run_id,)
        ).fetchall()
        blobs = conn.execute(
            f"SELECT {BLOB_COLUMNS} FROM blobs WHERE hash IN"
            " (SELECT DISTINCT blob FROM vars WHERE run=? AND blob IS NOT NULL)",
            (run_id,),
        ).fetchall()
    return run, RunRows(ops=ops, variables=variables, edges=edges, blobs=blobs, cases=cases)
