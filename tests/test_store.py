"""The workspace database: schema creation and migration, WAL, and clear errors on bad files."""

from __future__ import annotations

import gc
import sqlite3
import warnings
from contextlib import closing
from pathlib import Path

import pytest

import memtrace as mt
from memtrace.graph import Store, WorkspaceError
from memtrace.graph.connect import PAGE_SIZE
from memtrace.graph.schema import SCHEMA_VERSION


def test_new_workspace_is_a_wal_database_at_the_current_schema(workspace: Path) -> None:
    with closing(Store(workspace)) as store:
        assert (workspace / "memtrace.db").exists()
        assert store.schema_version == SCHEMA_VERSION
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"runs", "ops", "vars", "edges", "blobs", "cases", "attributions", "annotations"} <= tables


def test_a_new_workspace_has_large_pages_and_an_older_one_keeps_its_own(
    workspace: Path, tmp_path: Path
) -> None:
    """The page size is set for new files only: a workspace made with SQLite's 4096 stays readable as is."""
    with closing(Store(workspace)) as store:
        assert store.conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE != 4096
    older = tmp_path / "older"
    older.mkdir()
    with closing(sqlite3.connect(older / "memtrace.db")) as conn:
        conn.execute("PRAGMA page_size=4096")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE kept (x)")
        conn.execute("INSERT INTO kept VALUES (1)")
        conn.commit()
    with closing(Store(older)) as store:
        assert store.conn.execute("PRAGMA page_size").fetchone()[0] == 4096
        assert store.conn.execute("SELECT x FROM kept").fetchall() == [(1,)]
        assert store.schema_version == SCHEMA_VERSION


def test_opening_twice_does_not_migrate_again(workspace: Path, small_run: str) -> None:
    Store(workspace).close()
    with mt.open(workspace) as ws:
        assert ws.graph(small_run).var("mem-1@2").name == "mem-1"


def test_a_newer_schema_is_refused_without_touching_it(workspace: Path) -> None:
    store = Store(workspace)
    store.conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    store.close()
    with pytest.raises(WorkspaceError, match="schema version 99 is newer"):
        Store(workspace)
    with closing(sqlite3.connect(workspace / "memtrace.db")) as raw:
        assert raw.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "99"


def test_a_store_that_fails_to_open_leaves_no_connection_open(workspace: Path) -> None:
    Store(workspace).close()
    with closing(sqlite3.connect(workspace / "memtrace.db")) as raw:
        raw.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
        raw.commit()
    other = workspace.parent / "other"
    other.mkdir()
    (other / "memtrace.db").write_bytes(b"this is not sqlite" * 100)
    gc.collect()  # what earlier tests left for the collector is theirs, not this test's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for folder in (workspace, other):
            with pytest.raises(WorkspaceError):
                Store(folder)
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_a_corrupt_database_gives_one_line_naming_the_file(workspace: Path) -> None:
    workspace.mkdir()
    (workspace / "memtrace.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(WorkspaceError) as info:
        Store(workspace)
    message = str(info.value)
    assert "memtrace.db" in message and "\n" not in message


def test_opening_a_missing_workspace_for_reading_says_so(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="not a memtrace workspace"):
        mt.open(tmp_path / "nowhere")
    assert not (tmp_path / "nowhere").exists()


def test_runs_resolve_by_id_name_and_prefix(workspace: Path, small_run: str) -> None:
    with mt.open(workspace) as ws:
        assert ws.run(small_run).id == small_run
        assert ws.run("small").id == small_run
        assert ws.run(small_run[:6]).id == small_run
        with pytest.raises(mt.NotFoundError, match="no run"):
            ws.run("missing")


def test_deleting_a_run_removes_its_rows_only(workspace: Path, small_run: str) -> None:
    with mt.run(workspace, name="other") as run, mt.op("a") as op:
        op.output("x", 1)
    other = run.id
    with mt.open(workspace) as ws:
        store = ws.store
        store.delete_run(small_run)
        assert [r.id for r in store.runs()] == [other]
        assert store.count("vars", small_run) == 0 and store.count("vars", other) > 0


def test_a_version_1_workspace_is_migrated_and_keeps_its_data(workspace: Path) -> None:
    from memtrace.graph.schema import _MIGRATIONS
    from memtrace.graph.values import encode_value

    workspace.mkdir()
    raw = sqlite3.connect(workspace / "memtrace.db", isolation_level=None)
    raw.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    for statement in _MIGRATIONS[1].split(";"):
        if statement.strip():
            raw.execute(statement)
    raw.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    digest, encoding, data = encode_value({"memory": "Caroline moved to Boston"})
    raw.execute("INSERT INTO blobs VALUES (?, ?, ?)", (digest, encoding, data))
    raw.close()
    with closing(Store(workspace)) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.blob_value(digest) == {"memory": "Caroline moved to Boston"}
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"journal_state", "memory_checkpoints"} <= tables and "blobs_v2" not in tables
        columns = {r[1] for r in store.conn.execute("PRAGMA table_info(attributions)")}
        assert "revised_from" in columns and "pending_prefixes" in tables
        assert {"flow_confirmed", "answer_confirmed", "verification"} <= columns
        indexes = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
        assert "annotations_case" in indexes


def test_annotations_are_added_listed_per_case_and_removed(workspace: Path, small_run: str) -> None:
    from memtrace.graph import Annotation

    with closing(Store(workspace)) as store:
        first = store.add_annotation(
            Annotation(small_run, "q1", "UpdateError", "update_memory#5", "lost", "ana", 1.0)
        )
        second = store.add_annotation(Annotation(small_run, "q2", "JudgeError", None, None, None, 2.0))
        assert first.id is not None and second.id is not None and first.id != second.id
        assert [a.case_id for a in store.annotations(small_run)] == ["q1", "q2"]
        assert store.annotations(small_run, "q1") == [first]
        assert store.delete_annotation(first.id) and not store.delete_annotation(first.id)
        assert store.annotations(small_run) == [second]
        store.delete_run(small_run)
        assert store.annotations() == []


def test_two_stores_opening_a_new_workspace_at_once_both_succeed(workspace: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: Store(workspace), range(4)))
    versions = {s.schema_version for s in stores}
    for store in stores:
        store.close()
    assert versions == {SCHEMA_VERSION}


class LockedOnceConnectionDouble:
    """Answers the WAL switch the way SQLite does while another connection switches the same file."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.statements: list[str] = []

    def execute(self, statement: str) -> None:
        self.statements.append(statement)
        if self.refusals:
            self.refusals -= 1
            raise sqlite3.OperationalError("database is locked")


def test_switching_to_wal_waits_out_another_connection_doing_the_same() -> None:
    from memtrace.graph.connect import enable_wal

    connection = LockedOnceConnectionDouble(refusals=3)
    enable_wal(connection)  # type: ignore[arg-type]
    assert connection.statements == ["PRAGMA journal_mode=WAL"] * 4


def test_many_first_opens_of_new_workspaces_at_once_all_succeed(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    for attempt in range(20):
        folder = tmp_path / f"ws-{attempt}"
        with ThreadPoolExecutor(6) as pool:
            stores = list(pool.map(Store, [folder] * 6))
        assert {s.schema_version for s in stores} == {SCHEMA_VERSION}
        for store in stores:
            store.close()
