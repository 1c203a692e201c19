"""How library code reports progress without drawing it: one callback type, drawn by the CLI.

Workflows (report, optimize, bench) call `progress(stage, done, total)` as they go; the CLI passes a
callback that draws rich progress bars (cli/progress.py), a script passes its own or none. This is
the ground of the layers: it imports nothing of memtrace, and nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable

#: `progress(stage, done, total)`: `done` of `total` steps of the named stage are finished (a stage
#: seen first starts a new bar; `total` None: not known yet).
Progress = Callable[[str, int, int | None], None]


def no_progress(stage: str, done: int, total: int | None) -> None:
    """The callback of a caller that does not want progress."""
