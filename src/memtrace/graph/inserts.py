"""Inserting many rows with few statements: one `INSERT ... VALUES (..),(..),...` per chunk of rows.

`executemany` pays a statement execution per row (binding, step, reset: about 1 us), which was most
of what indexing a journal cost; a statement of many rows pays it once per chunk. What is left is
binding each value (a copy per text, a costly adapter lookup per None or bytes), so a column that
holds one value in every row (the run id) is bound once, and a column that is None in every row
(an edge's source) is written as NULL without binding. The rows and their order are the same as
`executemany`'s, so `OR REPLACE` and `OR IGNORE` resolve duplicates exactly as before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import chain
from operator import itemgetter

#: Rows per statement: the largest chunk, then halves down to one row for the tail, so that every
#: statement a table needs (ten sizes) is compiled once and kept in the connection's cache.
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
    """Insert `rows` (each `width` values) with `head` (`"INSERT ... INTO t(c1, c2)"`), in order.

    `nullable` names the columns worth checking for None in every row. A row of another width or
    type is refused as `executemany` refuses it, before anything is written.
    """
    if not rows:
        return
    if not set(map(type, rows)) <= _ROW_TYPES or set(map(len, rows)) != {width}:
        raise sqlite3.ProgrammingError(f"{head}: every row must be a sequence of {width} values")
    one, kept, shared = _shape(rows, width, nullable)
    values = _flattener(kept, width)
    size, start, total = ROWS_PER_STATEMENT, 0, len(rows)
    while start < total:
        while size > total - start:
            size //= 2
        sql = _statement(head, one, size)
        end = start + size
        while end <= total:
            conn.execute(sql, [*shared, *values(rows[start:end])])
            start, end = end, end + size


def _flattener(kept: list[int], width: int) -> Callable[[Sequence[Sequence[object]]], Iterable[object]]:
    """The values of a chunk of rows, row after row, of the columns still bound (C loops only)."""
    if len(kept) == width:
        return chain.from_iterable
    if len(kept) > 1:
        pick = itemgetter(*kept)
        return lambda chunk: chain.from_iterable(map(pick, chunk))
    if kept:
        return partial(map, itemgetter(kept[0]))
    return lambda chunk: ()


def _shape(
    rows: Sequence[Sequence[object]], width: int, nullable: Sequence[int]
) -> tuple[str, list[int], list[object]]:
    """One row's placeholders, the columns still bound per row, and the values bound once.

    The first column is bound once when it holds the same text in every row; a `nullable` column
    that is None in every row becomes a NULL literal. Unhashable values (refused when bound) leave
    every column bound, so the error is `executemany`'s.
    """
    tokens = ["?"] * width
    shared: list[object] = []
    try:
        first = set(map(itemgetter(0), rows)) if width > 1 else set()
        if len(first) == 1 and type(value := next(iter(first))) is str:
            tokens[0], shared = "?1", [value]
        for column in nullable:
            if set(map(itemgetter(column), rows)) == _NONE:
                tokens[column] = "NULL"
    except TypeError:
        tokens, shared = ["?"] * width, []
    kept = [c for c, token in enumerate(tokens) if token == "?"]
    return "(" + ",".join(tokens) + ")", kept, shared


def _statement(head: str, one: str, rows: int) -> str:
    """The text of a statement inserting `rows` rows shaped `one`, built once per shape (the same
    string object each time, so the connection's statement cache finds it without hashing it again)."""
    key = (head, one, rows)
    sql = _statements.get(key)
    if sql is None:
        sql = _statements[key] = f"{head} VALUES {','.join([one] * rows)}"
    return sql
