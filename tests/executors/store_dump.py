"""A workspace's rows without wall-clock columns, to compare stores made by different executors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

#: Columns holding wall time or durations: they differ between any two recordings.
_CLOCK = {"created_at", "finished_at", "started_at", "ended_at"}
_TABLES = ("runs", "ops", "vars", "edges", "blobs", "cases", "attributions")


def store_rows(workspace: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tables that results live in, sorted, clock columns left out."""
    from memtrace.graph import Store

    Store(workspace).close()  # index any journal first
    conn = sqlite3.connect(workspace / "memtrace.db")
    try:
        out = {}
        for table in _TABLES:
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            kept = [c for c in columns if c not in _CLOCK]
            rows = conn.execute(f"SELECT {', '.join(kept)} FROM {table}").fetchall()
            out[table] = sorted(
                (tuple(_timeless(c, v) for c, v in zip(kept, row, strict=True)) for row in rows), key=repr
            )
        return out
    finally:
        conn.close()


def _timeless(column: str, value: Any) -> Any:
    """An attribution's cost holds the seconds it took: keep the rest of it."""
    if column == "cost" and isinstance(value, str):
        cost = json.loads(value)
        cost.pop("seconds", None)
        return json.dumps(cost, sort_keys=True)
    return value
