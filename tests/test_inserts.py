"""Many rows per INSERT statement (graph/inserts.py) store exactly what one statement per row stores:
the same rows in the same order, duplicates resolved the same way, refused rows refused."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager

import pytest

from memtrace.graph import inserts

TABLE = "CREATE TABLE t (run TEXT, id TEXT, n, note, PRIMARY KEY (run, id)) WITHOUT ROWID"
LOG = "CREATE TABLE log (run TEXT, id TEXT, n, note)"


@contextmanager
def database() -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as conn:
        conn.execute(TABLE)
        conn.execute(LOG)
        yield conn


def stored(rows: Sequence[tuple], *, many: bool, table: str = "t", verb: str = "INSERT OR REPLACE") -> list:
    with database() as conn:
        head = f"{verb} INTO {table}"
        if many:
            conn.executemany(f"{head} VALUES (?,?,?,?)", rows)
        else:
            inserts.insert_rows(conn, head, 4, rows, nullable=(2, 3))
        order = "rowid" if table == "log" else "run, id"
        return conn.execute(f"SELECT *, typeof(n), typeof(note) FROM {table} ORDER BY {order}").fetchall()


def rows_of(n: int, run: str = "r1") -> list[tuple]:
    """Rows with text, integers, floats, bytes and None, and every tenth id repeated later."""
    out: list[tuple] = []
    for i in range(n):
        value: object = [i, float(i), f"text {i}", b"\x00\xffbytes", None][i % 5]
        out.append((run, f"id{i % (n - n // 10 or 1)}", value, None if i % 3 else f"note {i}"))
    return out


@pytest.mark.parametrize("n", [1, 2, 7, 511, 512, 513, 1300])
def test_chunks_of_every_size_store_what_executemany_stores(n: int) -> None:
    rows = rows_of(n)
    for table, verb in (("t", "INSERT OR REPLACE"), ("t", "INSERT OR IGNORE"), ("log", "INSERT")):
        assert stored(rows, many=False, table=table, verb=verb) == stored(
            rows, many=True, table=table, verb=verb
        )


def test_a_shared_first_column_and_all_none_columns_are_not_bound_per_row() -> None:
    """Bound once, or written as NULL: the statement has fewer parameters, the rows are the same."""
    rows = [("r1", f"id{i}", None, None) for i in range(600)]
    seen: list[int] = []
    with database() as conn:
        conn.set_trace_callback(lambda sql: seen.append(sql.count("?")) if sql.startswith("INSERT") else None)
        inserts.insert_rows(conn, "INSERT INTO t", 4, rows, nullable=(2, 3))
        counts = conn.execute("SELECT COUNT(*), COUNT(n), COUNT(note), MIN(run), MAX(run) FROM t").fetchone()
    assert seen and max(seen) <= 1 + inserts.ROWS_PER_STATEMENT  # ?1, then one id per row
    assert counts == (600, 0, 0, "r1", "r1")
    mixed = [("r1", "a", 1, None), ("r2", "b", None, "x")]  # nothing shared: everything bound
    assert stored(mixed, many=False) == stored(mixed, many=True)


@pytest.mark.parametrize(
    "bad",
    [("r1", "id", {"a": 1}, None), ("r1", "id", 1), ("r1", "id", 1, None, 2), 7],
    ids=["unbindable", "short", "long", "not-a-row"],
)
def test_rows_executemany_refuses_are_refused_before_anything_is_written(bad: object) -> None:
    rows = [("r1", "ok", 1, None), bad]
    with database() as conn:
        with pytest.raises((sqlite3.ProgrammingError, sqlite3.InterfaceError)):
            conn.executemany("INSERT INTO t VALUES (?,?,?,?)", rows)
        conn.execute("DELETE FROM t")
        with pytest.raises((sqlite3.ProgrammingError, sqlite3.InterfaceError)):
            inserts.insert_rows(conn, "INSERT INTO t", 4, rows, nullable=(2, 3))  # type: ignore[arg-type]
        assert conn.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


def test_an_sqlite_binding_at_most_999_values_gets_smaller_statements() -> None:
    """SQLite before 3.32 binds at most 999 values per statement: 512 rows of 4 would be refused."""
    rows = rows_of(1300)
    with database() as conn:
        conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
        inserts.insert_rows(conn, "INSERT OR REPLACE INTO t", 4, rows, nullable=(2, 3))
        got = conn.execute("SELECT *, typeof(n), typeof(note) FROM t ORDER BY run, id").fetchall()
    assert got == stored(rows, many=True)
