"""Where the current run and operation live: contextvars, so asyncio tasks and threads keep them apart.

A thread started without a copied context sees no current run; it falls back to the most recently
opened run of the process, so recording from a thread pool still lands in the right graph. A muted
context (`MUTED` as its run) records nothing and falls back to nothing, while others go on recording.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ports import OpenOp, RunRecorder

current_run_var: ContextVar[RunRecorder | None] = ContextVar("memtrace_run", default=None)

#: The current run of a muted context (api.muted): an object no recording code accepts as a run.
MUTED: Any = object()
current_op_var: ContextVar[OpenOp | None] = ContextVar("memtrace_op", default=None)

#: Runs open in this process, oldest first; the fallback for threads that did not copy a context.
open_runs: list[RunRecorder] = []


class _Switch:
    """The global on/off switch; a plain attribute read is the cheapest check there is."""

    enabled = True


switch = _Switch()


def active_run() -> RunRecorder | None:
    """The run that recording goes to right now, or None (then recording is a no-op)."""
    if not switch.enabled:
        return None
    run = current_run_var.get()
    if run is None and open_runs:
        return open_runs[-1]
    return None if run is MUTED else run
