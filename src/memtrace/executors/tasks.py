"""What runs in a worker and what the driver does with results: the same for every executor."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .reach import WorkerSetup, set_up

#: Test hook: a task process exits abruptly on its first attempt while this marker file is absent.
CRASH_ONCE_ENV = "MEMTRACE_TEST_CRASH_ONCE"

Deliver = Callable[[int, Any], None]


def attempt(fn: Callable[[Any], Any], crash_marker: str | None, setup: WorkerSetup, payload: Any) -> Any:
    """One attempt at a task in a worker (module level, so it pickles), after the driver's `setup`;
    honours the crash test hook, read in the driver (a forkserver's workers keep the environment it
    started with)."""
    marker = crash_marker
    if marker and not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()))
        os._exit(17)  # a worker killed mid-task: nothing returns, the driver must retry
    set_up(setup)
    return fn(payload)


class Ordered:
    """Hands results to the driver in task order, holding back the ones that came early."""

    def __init__(self, deliver: Deliver) -> None:
        self.deliver = deliver
        self.next = 0
        self.waiting: dict[int, Any] = {}

    def __call__(self, index: int, result: Any) -> None:
        self.waiting[index] = result
        while self.next in self.waiting:
            self.deliver(self.next, self.waiting.pop(self.next))
            self.next += 1

    def flush(self) -> None:
        """Deliver what came back out of order (an interrupted run keeps every finished task)."""
        for index in sorted(self.waiting):
            self.deliver(index, self.waiting.pop(index))
