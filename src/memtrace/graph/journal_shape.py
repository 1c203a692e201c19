"""The shape of a journal frame (journal.py): what the writer makes, checked before a frame is ingested.

A frame is a marshalled tuple: `("rows", ops, variables, edges, blobs, cases)`, each a list of row
tuples in its table's column order, or `("close", status, error, finished_at, metadata)`. A frame
that decodes but has another shape is damage, never an exception out of every open of the workspace.
"""

from __future__ import annotations

from operator import itemgetter

ROWS = "rows"
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
    if not isinstance(frame, tuple) or not frame or frame[0] not in (ROWS, CLOSE):
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
    for rows, (table, width, has_run) in zip(frame[1:], ROW_SHAPES, strict=True):
        if not isinstance(rows, list | tuple):
            return f"{table} that are not a list of rows"
        if not rows:
            continue
        # Whole-list checks in C (map over the rows): a per-row Python loop cost a tenth of indexing.
        if set(map(type, rows)) != {tuple} or set(map(len, rows)) != {width}:
            return f"a row of {table} that is not {width} columns"
        if has_run:
            runs = set(map(itemgetter(0), rows))
            if runs != {run_id}:
                other = next(r for r in runs if r != run_id)
                return f"a row of {table} for another run ({str(other)[:40]!r})"
    return None
