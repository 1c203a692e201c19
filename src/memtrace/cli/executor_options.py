"""`--workers`, `--executor` and `--ray-address`: where a command's independent tasks run.

The one place the command line's default is decided: no `--workers` means the usable cores
(`ExecutorSpec`'s own default), for every command that takes the option.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from .consoles import console

if TYPE_CHECKING:
    from ..executors import ExecutorSpec

WorkersOption = Annotated[
    int | None,
    typer.Option(
        help="Worker processes (default and 0: the usable cores); 1 runs everything in this process.",
        show_default=False,
    ),
]
ExecutorOption = Annotated[str, typer.Option(help="local (a process pool) or ray (needs memtrace[ray]).")]
RayAddressOption = Annotated[
    str | None, typer.Option(help="Address of a running Ray cluster (default: start a local Ray).")
]


def executor_spec(
    workers: int | None, executor: str = "local", ray_address: str | None = None
) -> ExecutorSpec:
    """The options as one spec (an unknown executor or a worker count below 1 is an error); its
    notices (tasks kept in this process, and why) are printed once each."""
    from ..executors import ExecutorSpec

    said: set[str] = set()

    def notify(line: str) -> None:
        if line not in said:
            said.add(line)
            console.print(f"note: {line}", highlight=False, markup=False)

    count = None if workers == 0 else workers
    return ExecutorSpec(kind=executor, workers=count, ray_address=ray_address, notify=notify)
