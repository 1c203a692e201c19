"""The shape of a journal frame (journal.py): what the writer makes, checked before a frame is ingested.

A frame is a marshalled tuple: `("flat", ops, variables, edges, blobs, cases)`, where ops, variables,
edges and blobs are each one list of their rows' values end to end (in the table's column order) and
cases a list of row tuples; or `("close", status, error, finished_at, metadata)`. Journals written
before flat frames hold `("rows", ...)` frames, each table a list of row tuples: still read. A frame
that decodes but has another shape is damage, never an exception out of every open of the workspace.
"""

from __future__ import annotations

from operator import itemgetter

ROWS = "rows"
FLAT = "flat"
CLOSE = "close"

#: Per table of a rows frame: the columns of a row, and whether its first column is the run's id.
ROW_SHAPES = (
    ("ops", 10, True),
    ("variables", 10, True),
    ("edges", 6, True),
    ("blobs", 3, False),
    ("cases", 11, True),
)


def shape_problem(frame: object, run_id: str) -> str | None:
    """Why a decoded frame is not one the writer makes (None when it is): a frame of the wrong shape
    would fail every later open, and a row naming another run would write into that run."""
    if not isinstance(frame, tuple) or not frame or frame[0] not in (FLAT, ROWS, CLOSE):
        return "unknown frame"
    if frame[0] == CLOSE:
        if len(frame) != 5:
            return f"a closing frame of {len(frame)} fields, not 5"
        _, status, error, finished_at, metadata = frame
        if not isinstance(status, str) or not isinstance(finished_at, int | float):
            return "a closing frame without a status and an end time"
        if not all(value is None or isinstance(value, str) for value in (error, metadata)):
            return "a closing frame whose error or metadata is not text"
        return None
    if len(frame) != 1 + len(ROW_SHAPES):
        return f"a rows frame of {len(frame)} fields, not {1 + len(ROW_SHAPES)}"
    if frame[0] == FLAT:
        return _flat_problem(frame, run_id)
    return _rows_problem(frame[1:], ROW_SHAPES, run_id)


def _flat_problem(frame: tuple, run_id: str) -> str | None:
    """A flat frame's tables must be whole rows, of this run (slices, checked in C); its cases are rows."""
    for values, (table, width, has_run) in zip(frame[1:-1], ROW_SHAPES[:-1], strict=True):
        if type(values) is not list or len(values) % width:
            return f"{table} that are not rows of {width} values"
        if has_run and values:
            problem = _run_problem(table, values[0::width], run_id)
            if problem is not None:
                return problem
    return _rows_problem(frame[-1:], ROW_SHAPES[-1:], run_id)


def _rows_problem(tables: tuple, shapes: tuple[tuple[str, int, bool], ...], run_id: str) -> str | None:
    """Tables given as lists of row tuples (a rows frame's, a flat frame's cases)."""
    for rows, (table, width, has_run) in zip(tables, shapes, strict=True):
        if not isinstance(rows, list | tuple):
            return f"{table} that are not a list of rows"
        if not rows:
            continue
        # Whole-list checks in C (map over the rows): a per-row Python loop cost a tenth of indexing.
        if set(map(type, rows)) != {tuple} or set(map(len, rows)) != {width}:
            return f"a row of {table} that is not {width} columns"
        if has_run:
            problem = _run_problem(table, list(map(itemgetter(0), rows)), run_id)
            if problem is not None:
                return problem
    return None


def _run_problem(table: str, runs: list[object], run_id: str) -> str | None:
    """Every row's run column must name this journal's run."""
    try:
        named = set(runs)
    except TypeError:  # a list or dict where the run's id belongs
        return f"a row of {table} whose run is not an id"
    if named == {run_id}:
        return None
    other = next(r for r in named if r != run_id)
    return f"a row of {table} for another run ({str(other)[:40]!r})"
