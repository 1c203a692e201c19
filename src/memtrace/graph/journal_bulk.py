"""Indexing a whole journal in one transaction: rows batched across frames, indexes built after the load.

Row-by-row index upkeep was most of what indexing a journal cost. A run that brings at least as
many rows as the tables already hold (the usual case: a fresh workspace, one big run) has its
tables' secondary indexes dropped inside the transaction and rebuilt by sorting once at its end;
a small run among many keeps them (rebuilding would cost the whole workspace). Dropping and
creating are part of the transaction, so a rollback (rows the store refuses) restores them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain
from typing import Protocol

from ..cores import usable_cores
from .journal_shape import FLAT, ROW_SHAPES

#: The tables whose secondary indexes a bulk load rebuilds (their primary keys stay: they keep
#: `INSERT OR REPLACE` exact).
BULK_TABLES = ("ops", "vars", "edges")

#: Fewer rows than this are inserted with the indexes in place: rebuilding costs more than it saves.
MIN_BULK_ROWS = 20_000

#: KiB of page cache while the indexes are built after a load: the size of the runs SQLite sorts.
SORT_RUN_KIB = 2048
#: Helper threads SQLite's sorter may use while it builds the indexes after a bulk load: on two cores,
#: a million versions open in 7% less wall time for 5-10% more CPU (benchmarks/RESULTS.md).
SORT_THREADS = min(4, usable_cores())

#: Rows gathered before they are handed to SQLite: bounds the memory a journal of millions of rows takes.
ROWS_PER_BATCH = 100_000


#: Values per row of the tables a flat frame holds flat: ops, variables, edges, blobs.
_WIDTHS = tuple(width for _, width, _ in ROW_SHAPES[:-1])


class RowWriter(Protocol):
    """What a batch needs of the store (store.py's `Store.insert_values_in`)."""

    def insert_values_in(
        self,
        conn: sqlite3.Connection,
        *,
        ops: list[object],
        variables: list[object],
        edges: list[object],
        blobs: list[object],
        cases: Sequence[tuple] = (),
    ) -> None: ...


def frame_rows(frame: tuple) -> int:
    """How many rows a rows frame (flat or of tuples, journal_shape.py) holds."""
    if frame[0] == FLAT:
        flat = zip(frame[1:-1], _WIDTHS, strict=True)
        return sum(len(values) // width for values, width in flat) + len(frame[-1])
    return sum(len(rows) for rows in frame[1:])


@dataclass(slots=True)
class RowBatch:
    """Rows of several frames gathered per table, flat (journal_shape.py), so that each table takes
    one statement per few hundred rows and no Python step per row."""

    ops: list[object] = field(default_factory=list)
    variables: list[object] = field(default_factory=list)
    edges: list[object] = field(default_factory=list)
    blobs: list[object] = field(default_factory=list)
    cases: list[tuple] = field(default_factory=list)
    size: int = 0

    def add(self, frame: tuple) -> None:
        """Add a rows frame, flat or of row tuples (an older journal's); each table keeps its order."""
        _, ops, variables, edges, blobs, cases = frame
        if frame[0] == FLAT:
            self.ops += ops
            self.variables += variables
            self.edges += edges
            self.blobs += blobs
        else:
            self.ops += chain.from_iterable(ops)
            self.variables += chain.from_iterable(variables)
            self.edges += chain.from_iterable(edges)
            self.blobs += chain.from_iterable(blobs)
        self.cases += cases
        self.size += frame_rows(frame)

    def write(self, store: RowWriter, conn: sqlite3.Connection) -> None:
        """Insert the gathered rows inside the caller's transaction and start empty again."""
        if self.size:
            store.insert_values_in(
                conn,
                ops=self.ops,
                variables=self.variables,
                edges=self.edges,
                blobs=self.blobs,
                cases=self.cases,
            )
        self.ops, self.variables, self.edges, self.blobs, self.cases = [], [], [], [], []
        self.size = 0


def worth_deferring(conn: sqlite3.Connection, incoming_bytes: int, bytes_per_row: int = 70) -> bool:
    """Whether a load of about `incoming_bytes` of journal should rebuild the indexes afterwards:
    when it brings at least as many rows as the tables hold, so a rebuild costs at most twice the load."""
    incoming = incoming_bytes // bytes_per_row
    if incoming < MIN_BULK_ROWS:
        return False
    # The edges' rowid counts every edge ever stored: a cheap upper bound on the tables' size.
    held = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM edges").fetchone()[0]
    return incoming >= held


@contextmanager
def deferred_indexes(conn: sqlite3.Connection, defer: bool) -> Iterator[None]:
    """Inside the caller's transaction: drop the bulk tables' secondary indexes, yield, then recreate
    them (each built by one sort). A no-op when not `defer`. (A larger page cache was tried: the
    commit then wrote every dirty page at once, and the load took longer.)"""
    if not defer:
        yield
        return
    marks = ",".join("?" * len(BULK_TABLES))
    indexes = conn.execute(
        "SELECT name, sql FROM sqlite_master"
        f" WHERE type='index' AND sql IS NOT NULL AND tbl_name IN ({marks})",
        BULK_TABLES,
    ).fetchall()
    for name, _ in indexes:
        conn.execute(f'DROP INDEX "{name}"')
    yield
    # SQLite sorts in runs as large as the page cache: runs of 2 MiB, merged, build the indexes of a
    # million versions a fifth faster than runs of 8 MiB and a third faster than the store's 64 MiB
    # (they stay in the CPU's caches).
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size={-SORT_RUN_KIB}")
    conn.execute(f"PRAGMA threads={SORT_THREADS}")  # the sorter's helper threads merge runs beside it
    try:
        for _, sql in indexes:
            conn.execute(sql)
    finally:
        conn.execute(f"PRAGMA cache_size={cache}")
        conn.execute("PRAGMA threads=0")
