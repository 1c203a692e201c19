"""The one progress bar every long-running command shows: what, how far, how many, how long."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


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
