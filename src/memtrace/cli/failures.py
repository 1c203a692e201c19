"""What the CLI prints instead of a traceback: one line for each failure a user can cause or meet.

Bugs still raise; these are the environment's and the data's failures (a path that is a file, a full
disk, a read-only workspace, input nested too deeply, Ctrl-C), named with the file they concern.
"""

from __future__ import annotations

import errno
import sqlite3

from ..errors import MemtraceError
from ..trace.recorder import interrupted_runs


def failure_line(exc: BaseException) -> str | None:
    """The one line to print for an expected failure, or None for a bug (which keeps its traceback)."""
    if isinstance(exc, MemtraceError):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to process (more levels than Python's recursion limit)"
    if isinstance(exc, sqlite3.Error):
        return _database_line(str(exc))
    if isinstance(exc, OSError):
        return _os_line(exc)
    return None


def _os_line(exc: OSError) -> str:
    reason = (exc.strerror or str(exc)).lower()
    if exc.errno == errno.ENOSPC:
        reason = "no space left on the device (disk full)"
    elif exc.errno == errno.EISDIR:
        reason = "is a folder; give a file name"
    elif exc.errno == errno.ENOTDIR:
        reason = "part of the path is a file, not a folder"
    elif exc.errno == errno.ENOENT and exc.filename is not None:
        reason = "no such file, or its folder does not exist"
    where = f"{exc.filename}: " if exc.filename is not None else ""
    return f"{where}{reason}"


def _database_line(text: str) -> str:
    if "readonly" in text or "read-only" in text:
        return f"the workspace is read-only, and this command writes to it ({text})"
    if "full" in text:
        return f"no space left on the device (disk full) while writing the workspace ({text})"
    return f"workspace database error: {text}"


def interrupted_line() -> str:
    """What Ctrl-C kept: the runs it cut short, which stay in the workspace marked incomplete."""
    runs = interrupted_runs()
    if not runs:
        return "interrupted; nothing was being recorded"
    kept = ", ".join(f"{run.name} ({run.id})" for run in runs)
    return f"interrupted; kept as incomplete (interrupted): {kept}"
