"""Memory-state checkpoints are built by the first memory-state query after new versions, not by the
open that indexes them; the answers are the same with them, without them and before they exist."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.graph import Store, checkpoints
from memtrace.graph.model import Run
from memtrace.graph.rows import RunRows
from memtrace.graph.schema import _MIGRATIONS, SCHEMA_VERSION


def record(workspace: Path, name: str, n: int) -> str:
    with mt.run(workspace, name=name) as run:
        for i in range(n):
            with mt.op("update", category="update") as op:
                unit = run.memory(f"mem-{i % 7}")
                if i % 9 == 8:
                    unit.delete(by=op)
                elif unit.exists:
                    unit.update({"memory": f"fact {i}"}, by=op)
                else:
                    unit.create({"memory": f"fact {i}"}, by=op)
    return run.id


def counts(conn: sqlite3.Connection, run_id: str) -> tuple[int, int]:
    """(checkpoints stored, 1 if the run is marked stale)."""
    stored = conn.execute("SELECT COUNT(*) FROM memory_checkpoints WHERE run=?", (run_id,)).fetchone()[0]
    return stored, int(checkpoints.is_stale(conn, run_id))


def test_the_open_marks_them_stale_and_the_first_memory_query_builds_them(
    workspace: Path, open_ws: OpenWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "CHECKPOINT_EVERY", 4)
    run_id = record(workspace, "r", 60)
    ws = open_ws(workspace)
    conn = ws.store.conn
    assert counts(conn, run_id) == (0, 1)
    graph, view = ws.graph(run_id), ws.view(run_id)
    answers = [graph.memory_values_at(seq) for seq in range(0, 200, 7)]
    built = counts(conn, run_id)
    assert built[0] > 5 and built[1] == 0
    assert answers == [view.memory_values_at(seq) for seq in range(0, 200, 7)]
    ws.close()
    assert counts(open_ws(workspace).store.conn, run_id) == built  # nothing new: nothing to rebuild


def test_a_read_only_store_answers_without_building_them(
    workspace: Path, open_ws: OpenWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "CHECKPOINT_EVERY", 4)
    run_id = record(workspace, "r", 40)
    ws = open_ws(workspace)
    ws.store.read_only = True  # as a store on a read-only folder is
    graph = ws.graph(run_id)
    answers = [graph.memory_values_at(seq) for seq in range(0, 140, 5)]
    assert counts(ws.store.conn, run_id) == (0, 1)
    assert answers == [ws.view(run_id).memory_values_at(seq) for seq in range(0, 140, 5)]


def test_an_import_and_a_replay_prefix_drop_and_mark_them(
    workspace: Path, open_ws: OpenWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Versions rewritten (an import replacing the run, a replay's prefix copied on first read) leave
    no checkpoint of other versions behind."""
    monkeypatch.setattr(checkpoints, "CHECKPOINT_EVERY", 4)
    run_id = record(workspace, "r", 40)
    ws = open_ws(workspace)
    store, graph = ws.store, ws.graph(run_id)
    expected = {name: v.id for name, v in graph.memory_state_at(30).items()}
    assert counts(store.conn, run_id)[1] == 0

    store.start_resumed_run(Run("replay", "replay", parent_run=run_id), run_id, 30)
    store.run("replay")  # its prefix is copied now
    assert counts(store.conn, "replay") == (0, 1)
    assert {name: v.id for name, v in ws.graph("replay").memory_state_at().items()} == expected
    assert counts(store.conn, "replay")[1] == 0

    store.replace_run(store.run(run_id), RunRows())
    assert counts(store.conn, run_id) == (0, 1)
    assert ws.graph(run_id).memory_state_at() == {}
    assert counts(store.conn, run_id) == (0, 0)


def test_a_version_7_workspace_migrates_with_a_message(
    workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    workspace.mkdir()
    with closing(sqlite3.connect(workspace / "memtrace.db", isolation_level=None)) as raw:
        raw.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        for version in range(1, 8):
            for statement in _MIGRATIONS[version].split(";"):
                if statement.strip():
                    raw.execute(statement)
        raw.execute("INSERT INTO meta VALUES ('schema_version', '7')")
    with caplog.at_level(logging.INFO, logger="memtrace"), closing(Store(workspace)) as store:
        assert store.schema_version == SCHEMA_VERSION == 8
        assert not checkpoints.is_stale(store.conn, "any")
    assert any("migrated from version 7 to 8" in r.getMessage() for r in caplog.records)
