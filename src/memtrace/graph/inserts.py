"""Inserting many rows with few statements: one `INSERT ... VALUES (..),(..),...` per chunk of rows.

`executemany` pays a statement execution per row (binding, step, reset: about 1 us), which was most
of what indexing a journal cost; a statement of many rows pays it once per chunk. What is left is
binding each value (a copy per text, a costly adapter lookup per None or bytes), so a column that
holds one value in every row (the run id) is bound once, and a column that is None in every row
(an edge's source) is written as NULL without binding. The rows and their order are the same as
`executemany`'s, so `OR REPLACE` and `OR IGNORE` resolve duplicates exactly as before.

Rows arrive flat (`insert_values`: every row's values end to end, as the journal stores them), so
that no Python step runs per row: the checks and the column removals are slices, done in C.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from itertools import chain

#: Rows per statement (a power of two, fewer where SQLite binds fewer values): the largest chunk,
#: then halves down to one row for the tail, so that every statement a table needs (ten sizes) is
#: compiled once and kept in the connection's cache.
ROWS_PER_STATEMENT = 512

_ROW_TYPES = {tuple, list}
_NONE = {None}
_statements: dict[tuple[str, str, int], str] = {}


def insert_rows(
    conn: sqlite3.Connection,
    head: str,
    width: int,
    rows: Sequence[Sequence[object]],
    nullable: Sequence[int] = (),
) -> None:
    """Insert `rows` (each a sequence of `width` values) with `head` (`"INSERT ... INTO t(c1, c2)"`).

    A row of another width or type is refused as `executemany` refuses it, before anything is written.
    """
    if not rows:
        return
    if not set(map(type, rows)) <= _ROW_TYPES or set(map(len, rows)) != {width}:
        raise sqlite3.ProgrammingError(f"{head}: every row must be a sequence of {width} values")
    insert_values(conn, head, width, list(chain.from_iterable(rows)), nullable)


def insert_values(
    conn: sqlite3.Connection, head: str, width: int, values: list[object], nullable: Sequence[int] = ()
) -> None:
    """Insert rows given flat, `width` values each, in order; `values` is consumed (columns bound once
    or as NULL are deleted from it). `nullable` names the columns worth checking for None in every row."""
    if len(values) % width:
        raise sqlite3.ProgrammingError(f"{head}: {len(values)} values are not rows of {width}")
    total = len(values) // width
    if not total:
        return
    one, shared = _unbind(values, width, nullable)
    bound = len(values) // total
    # An SQLite built before 3.32 binds at most 999 values per statement.
    room = (conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) - len(shared)) // max(bound, 1)
    size, start = 1 << (max(1, min(ROWS_PER_STATEMENT, room)).bit_length() - 1), 0
    while start < total:
        while size > total - start:
            size //= 2
        sql = _statement(head, one, size)
        while start + size <= total:
            conn.execute(sql, shared + values[start * bound : (start + size) * bound])
            start += size


def _unbind(values: list[object], width: int, nullable: Sequence[int]) -> tuple[str, list[object]]:
    """Take out of `values` the columns not bound per row; returns one row's placeholders and the
    values bound once. The first column is bound once when it holds the same text in every row; a
    `nullable` column holding None in every row becomes a NULL literal. Unhashable values (refused
    when bound) leave every column bound, so the error is `executemany`'s."""
    tokens = ["?"] * width
    shared: list[object] = []
    try:
        first = set(values[0::width]) if width > 1 else set()
        if len(first) == 1 and type(value := next(iter(first))) is str:
            tokens[0], shared = "?1", [value]
        for column in nullable:
            if set(values[column::width]) == _NONE:
                tokens[column] = "NULL"
    except TypeError:
        return "(" + ",".join(tokens) + ")", []
    stride = width
    for column in reversed(range(width)):  # highest first: the lower columns keep their places
        if tokens[column] != "?":
            del values[column::stride]
            stride -= 1
    return "(" + ",".join(tokens) + ")", shared


def _statement(head: str, one: str, rows: int) -> str:
    """The text of a statement inserting `rows` rows shaped `one`, built once per shape (the same
    string object each time, so the connection's statement cache finds it without hashing it again)."""
    key = (head, one, rows)
    sql = _statements.get(key)
    if sql is None:
        sql = _statements[key] = f"{head} VALUES {','.join([one] * rows)}"
    return sql
