"""Every way a journal reaches the tables stores the same rows: the bulk load (indexes rebuilt after it,
through a rollback journal or the WAL), the frame-by-frame path a refused row falls back to, a journal
of row-tuple frames (written before flat frames) and a plain `executemany` of the frames' rows.
Compared table by table, row by row, every column."""

from __future__ import annotations

import marshal
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from pathlib import Path

import pytest

import memtrace as mt
from memtrace.graph import Store, journal, journal_bulk
from memtrace.graph.journal_frames import HEADER, read_frames
from memtrace.graph.journal_shape import CLOSE, FLAT, ROWS

#: Tables whose rows say what a run is; journal_state and stale_checkpoints are bookkeeping (compared
#: too, after the first memory-state query built the checkpoints).
_SKIP = {"meta", "sqlite_sequence"}


def record(workspace: Path) -> str:
    """A run touching every table: nested operations, metadata, repeated and reused inputs, memory
    units created, updated and deleted, cases predicted and judged, in many small frames."""
    with mt.run(workspace, name="paths", system="toy", config={"k": 3}) as run:
        run.flush_every = 5
        for i in range(40):
            with mt.op("extract", category="extraction", turn=i) as op:
                op.input("prompt", "Extract the facts.", category="prompt")
                op.input("message", f"message {i // 2}", category="message", dia_id=f"D1:{i}")
                with mt.op("llm.chat", category="llm", model="offline") as llm:
                    llm.output("llm.response", {"facts": [i, None, "é"]}, category="llm_response")
                facts = op.output("facts", [f"fact {i}"], category="extracted_facts")
            unit = run.memory(f"mem-{i % 6}")
            with mt.op("update", category="update") as update:
                update.use(facts)
                if i % 11 == 10:
                    unit.delete(by=update)
                elif unit.exists:
                    unit.update({"memory": f"fact {i}"}, by=update)
                else:
                    unit.create({"memory": f"fact {i}"}, by=update)
            if i % 8 == 7:
                case = run.case(f"question {i}?", gold=[f"fact {i}"], evidence=[f"D1:{i}"])
                case.predict(f"fact {i - 1}")
                case.judge(False, score=0.0)
    return run.id


def as_rows(values: list, width: int) -> list[tuple]:
    """A flat frame's table as row tuples."""
    return [tuple(values[i : i + width]) for i in range(0, len(values), width)]


def as_row_frames(path: Path, run_id: str) -> None:
    """Rewrite a journal as a memtrace before flat frames wrote it: each table a list of row tuples."""
    out = bytearray()
    for frame, _, _ in read_frames(path, 0, run_id, final=True):
        if frame[0] == FLAT:
            tables = zip(frame[1:5], (10, 10, 6, 3), strict=True)
            frame = (ROWS, *(as_rows(values, width) for values, width in tables), frame[5])
        payload = marshal.dumps(frame)
        out += HEADER.pack(len(payload)) + payload
    path.write_bytes(bytes(out))


def every_row(db: Path) -> dict[str, list[tuple]]:
    """Every table's rows (in rowid order where a table has one, else by key) and every index."""
    with closing(sqlite3.connect(db)) as conn:
        out: dict[str, list[tuple]] = {}
        tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type='table'").fetchall()
        for name, sql in tables:
            if name in _SKIP or name.startswith("sqlite_"):
                continue
            order = "1, 2" if "WITHOUT ROWID" in sql.upper() else "rowid"
            out[name] = conn.execute(f"SELECT * FROM {name} ORDER BY {order}").fetchall()
        out["indexes"] = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type='index' ORDER BY name"
        ).fetchall()
        return out


def settle(workspace: Path, run_id: str) -> dict[str, list[tuple]]:
    """Open (which indexes the journal), ask a memory-state query (which builds the checkpoints)."""
    with mt.open(workspace) as ws:
        ws.graph(run_id).memory_state_at()
    return every_row(workspace / "memtrace.db")


@contextmanager
def spied_bulk_loads() -> Iterator[list[bool]]:
    """Whether each bulk load of `Store.bulk_load` went through a rollback journal."""
    seen: list[bool] = []
    real = Store.bulk_load

    @contextmanager
    def spy(self: Store, wanted: bool) -> Iterator[bool]:
        with real(self, wanted) as switched:
            seen.append(switched)
            yield switched

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Store, "bulk_load", spy)
        yield seen


def test_bulk_frame_by_frame_and_executemany_store_every_row_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = tmp_path / "recorded"
    run_id = record(recorded)
    names = ("bulk", "bulk-wal", "frames", "row-frames", "row-frames-one-by-one", "executemany")
    copies = {name: tmp_path / name for name in names}
    for copy in copies.values():
        shutil.copytree(recorded, copy)
    monkeypatch.setattr(journal_bulk, "MIN_BULK_ROWS", 1)
    monkeypatch.setattr("memtrace.graph.checkpoints.CHECKPOINT_EVERY", 4)
    stored: dict[str, dict[str, list[tuple]]] = {}

    with spied_bulk_loads() as seen:
        stored["bulk"] = settle(copies["bulk"], run_id)
        with closing(sqlite3.connect(copies["bulk-wal"] / "memtrace.db")) as other:
            other.execute("SELECT COUNT(*) FROM runs").fetchone()  # another connection: WAL it is
            stored["bulk-wal"] = settle(copies["bulk-wal"], run_id)
    assert seen == [True, False]

    def refused(*args: object) -> AbstractContextManager[None]:
        raise sqlite3.IntegrityError("refused, as a row the store cannot take would be")

    with monkeypatch.context() as patch:
        patch.setattr(journal, "_ingest_at_once", refused)
        stored["frames"] = settle(copies["frames"], run_id)
        as_row_frames(journal.journal_path(copies["row-frames-one-by-one"], run_id), run_id)
        stored["row-frames-one-by-one"] = settle(copies["row-frames-one-by-one"], run_id)
    as_row_frames(journal.journal_path(copies["row-frames"], run_id), run_id)
    stored["row-frames"] = settle(copies["row-frames"], run_id)

    # The reference: the frames' rows handed to `executemany`, one statement per row, in order.
    target = copies["executemany"]
    path = journal.journal_path(target, run_id)
    with closing(Store(target, ingest=False)) as store, store.transaction() as conn:
        for frame, _, _ in read_frames(path, 0, run_id, final=True):
            if frame[0] != CLOSE:
                assert frame[0] == FLAT
                tables = zip(frame[1:5], (10, 10, 6, 3), strict=True)
                ops, variables, edges, blobs = (as_rows(values, width) for values, width in tables)
                cases = frame[5]
                conn.executemany("INSERT OR IGNORE INTO blobs VALUES (?,?,?)", blobs)
                conn.executemany("INSERT OR REPLACE INTO ops VALUES (?,?,?,?,?,?,?,?,?,?)", ops)
                conn.executemany("INSERT OR REPLACE INTO vars VALUES (?,?,?,?,?,?,?,?,?,?)", variables)
                conn.executemany("INSERT INTO edges VALUES (?,?,?,?,?,?)", edges)
                store.insert_rows_in(conn, cases=cases)
        conn.execute("INSERT INTO journal_state(run, offset) VALUES (?, 0)", (run_id,))
    path.unlink()  # its closing frame is read by none: finish the run as the closing frame says
    with closing(sqlite3.connect(copies["bulk"] / "memtrace.db")) as done:
        status, error, finished_at, metadata = done.execute(
            "SELECT status, error, finished_at, metadata FROM runs WHERE id=?", (run_id,)
        ).fetchone()
    with closing(Store(target, ingest=False)) as store, store.transaction() as conn:
        conn.execute(
            "UPDATE runs SET status=?, error=?, finished_at=?, metadata=? WHERE id=?",
            (status, error, finished_at, metadata, run_id),
        )
        conn.execute("DELETE FROM journal_state")
        conn.execute("INSERT INTO stale_checkpoints(run) VALUES (?)", (run_id,))
    stored["executemany"] = settle(target, run_id)

    reference = stored["executemany"]
    assert reference["vars"] and reference["edges"] and reference["memory_checkpoints"]
    assert reference["cases"] and reference["blobs"] and not reference["stale_checkpoints"]
    for name, tables in stored.items():
        for table, rows in reference.items():
            assert tables[table] == rows, f"{name}: table {table} differs"
