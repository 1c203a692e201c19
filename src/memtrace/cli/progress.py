"""The one progress bar every long-running command shows: what, how far, how many, how long.

Library code reports progress through the `memtrace.progress.Progress` callback; `rich_progress`
turns those calls into bars here, so screen output stays in cli/.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from ..progress import Progress as ProgressCallback


def progress_bar(console: Console | None = None, *, transient: bool = True) -> Progress:
    """A rich Progress with the project's columns; transient, so finished bars leave the tables alone."""
    return Progress(
        TextColumn("{task.description}", markup=False),  # descriptions hold file and run names
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console if console is not None else Console(markup=False),
        transient=transient,
    )


@contextmanager
def rich_progress(console: Console | None = None) -> Iterator[ProgressCallback]:
    """A `Progress` callback drawing one bar per stage while the block runs."""
    with progress_bar(console) as bar:
        tasks: dict[str, TaskID] = {}

        def report(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield report
