"""`--workers`, `--executor` and `--ray-address`: where a command's independent tasks run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ..executors import ExecutorSpec

WorkersOption = Annotated[
    int | None,
    typer.Option(
        help="Worker processes (0: the usable cores); 1, the default, runs everything in this process.",
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
    """The options as one spec (an unknown executor or a worker count below 1 is an error)."""
    from ..executors import ExecutorSpec

    # Default 1 for now: systems and methods registered at run time (a script's, a test's) are not
    # known in a fresh worker process yet, so the pool is opt-in until they travel with the task.
    count = 1 if workers is None and executor == "local" else (None if workers == 0 else workers)
    return ExecutorSpec(kind=executor, workers=count, ray_address=ray_address)
