"""Where a command's tasks run: the executor, how many workers, how often a dead task is retried."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from ..cores import usable_cores
from ..errors import MemtraceError

EXECUTORS = ("local", "ray")


@dataclass(slots=True, frozen=True)
class ExecutorSpec:
    """Where tasks run: `local` processes (`workers`, default the usable cores) or `ray`."""

    kind: str = "local"
    workers: int | None = None
    ray_address: str | None = None
    #: Attempts beyond the first for a task whose worker died.
    retries: int = 3
    #: Where a one-line notice goes (tasks falling back to this process, and why); else a warning.
    notify: Callable[[str], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in EXECUTORS:
            raise MemtraceError(f"--executor {self.kind!r}: choose one of {', '.join(EXECUTORS)}")
        if self.workers is not None and self.workers < 1:
            raise MemtraceError(f"--workers {self.workers}: give 1 or more")

    @property
    def count(self) -> int:
        return self.workers if self.workers is not None else usable_cores()

    def notice(self, line: str) -> None:
        """Say `line` where the caller asked (the CLI prints it above its progress bars), else warn."""
        if self.notify is not None:
            self.notify(line)
        else:
            warnings.warn(line, RuntimeWarning, stacklevel=3)

    @property
    def in_process(self) -> bool:
        """One local worker: today's behaviour, everything in this process, no scratch workspaces."""
        return self.kind == "local" and self.count == 1

    def runs_here(self, tasks: int) -> bool:
        """Whether `tasks` tasks run in this process: one local worker's worth (a pool for one task
        would only add its start-up, and an interrupted run recorded here is kept as incomplete)."""
        return self.kind == "local" and min(self.count, tasks) <= 1
