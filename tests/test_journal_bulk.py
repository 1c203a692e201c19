"""Indexing a journal in one transaction with the indexes rebuilt afterwards: same rows, same indexes,
and rows the store refuses still roll back to the frame-by-frame path (indexes intact)."""

from __future__ import annotations

import marshal
import sqlite3
import struct
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

import memtrace as mt
from conftest import OpenWorkspace, TwoFrameJournal
from memtrace.graph import connect, journal_bulk

INDEXES = "SELECT name, sql FROM sqlite_master WHERE type='index' AND sql IS NOT NULL ORDER BY name"


def record(workspace: Path, name: str, n: int) -> str:
    with mt.run(workspace, name=name) as run:
        run.flush_every = 7  # many frames: the batch gathers rows across them
        for i in range(n):
            with mt.op("step", category="update") as op:
                op.input("x", i)
                op.output("y", {"i": i})
            unit = run.memory(f"mem-{i % 5}")
            (unit.update if i >= 5 else unit.create)({"memory": f"fact {i}"}, by=op)
    return run.id


#: What two recordings of the same steps share (not the run id, not the wall times).
COLUMNS = {
    "ops": "id, seq, parent_op, name, category, status",
    "vars": "id, name, version, seq, category, blob, deleted",
    "edges": "op, var, role",
    "memory_checkpoints": "seq",
}


def table_rows(conn: sqlite3.Connection, run_id: str) -> dict[str, list[tuple]]:
    return {
        table: conn.execute(
            f"SELECT {columns} FROM {table} WHERE run=? ORDER BY {columns}", (run_id,)
        ).fetchall()
        for table, columns in COLUMNS.items()
    }


def test_a_bulk_load_stores_what_the_indexed_path_stores_and_keeps_every_index(
    tmp_path: Path, open_ws: OpenWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    deferred: list[bool] = []
    real = journal_bulk.deferred_indexes

    def spy(conn: sqlite3.Connection, defer: bool) -> AbstractContextManager[None]:
        deferred.append(defer)
        return real(conn, defer)

    monkeypatch.setattr("memtrace.graph.journal.deferred_indexes", spy)
    stored = {}
    for bulk in (False, True):
        monkeypatch.setattr(journal_bulk, "MIN_BULK_ROWS", 10 if bulk else 10**9)
        monkeypatch.setattr("memtrace.graph.checkpoints.CHECKPOINT_EVERY", 16)
        workspace = tmp_path / str(bulk)
        run_id = record(workspace, "big", 60)
        ws = open_ws(workspace)
        stored[bulk] = (table_rows(ws.store.conn, run_id), ws.store.conn.execute(INDEXES).fetchall())
        assert deferred[-1] is bulk
        assert ws.graph(run_id).lifecycle("mem-1")
    assert stored[True] == stored[False]
    assert any(name == "edges_var" for name, _ in stored[True][1])


def test_a_small_run_beside_a_large_workspace_keeps_the_indexes_in_place(
    workspace: Path, open_ws: OpenWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal_bulk, "MIN_BULK_ROWS", 10)
    record(workspace, "big", 200)
    open_ws(workspace).close()
    conn = sqlite3.connect(workspace / "memtrace.db")
    assert not journal_bulk.worth_deferring(conn, 70 * 50)  # 50 rows beside some 1,400 edges
    assert journal_bulk.worth_deferring(conn, 70 * 10_000)
    conn.close()


def test_refused_rows_in_a_bulk_load_roll_back_to_the_frame_by_frame_path(
    workspace: Path,
    two_frame_journal: TwoFrameJournal,
    open_ws: OpenWorkspace,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The indexes dropped for the load come back with the rollback; the good frames are kept."""
    monkeypatch.setattr(journal_bulk, "MIN_BULK_ROWS", 1)
    journal = two_frame_journal
    bad = (journal.run_id, "op-x", 9, None, "evil", "llm", 0.0, 0.0, "ok", {"not": "bindable"})
    payload = marshal.dumps(("rows", [bad], [], [], [], []))
    content = journal.path.read_bytes()
    at = journal.second_frame_at
    journal.path.write_bytes(content[:at] + struct.pack("<Q", len(payload)) + payload + content[at:])
    ws = open_ws(workspace)
    assert ws.run(journal.run_id).status == "incomplete"
    assert ws.store.count("ops", journal.run_id) == 1
    names = {name for name, _ in ws.store.conn.execute(INDEXES)}
    assert {"ops_seq", "vars_name", "vars_memory", "edges_op", "edges_var"} <= names
    assert ws.store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_bulk_load_by_the_only_connection_bypasses_the_wal_and_leaves_the_workspace_in_wal(
    workspace: Path, open_ws: OpenWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rollback journal is the load's alone: the workspace is WAL again after it, with no journal
    file left, and a refused row rolls back through it as through the WAL."""
    monkeypatch.setattr(journal_bulk, "MIN_BULK_ROWS", 10)
    modes: list[str] = []
    real = connect.rollback_journal

    @contextmanager
    def spy(conn: sqlite3.Connection) -> Iterator[bool]:
        with real(conn) as switched:
            modes.append(conn.execute("PRAGMA journal_mode").fetchone()[0])
            yield switched

    monkeypatch.setattr("memtrace.graph.store.rollback_journal", spy)
    run_id = record(workspace, "big", 60)
    ws = open_ws(workspace)
    assert modes == ["delete"] and ws.store.count("vars", run_id) > 60
    assert ws.store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert not (workspace / "memtrace.db-journal").exists()
