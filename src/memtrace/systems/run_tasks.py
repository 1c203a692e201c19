"""`memtrace run` as independent tasks: one (system, conversation) run per task, with a fixed run id.

The id is derived from what the run is (system, conversation, dataset, config), so the store holds
the same runs whether they were recorded in this process or by any number of workers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..datasets import Conversation
from ..eval import Judge
from ..executors import ExecutorSpec, RunRecord, ingest_run, pack_run, run_tasks, scratch_workspace
from ..graph import Store
from .registry import system_class
from .runner import RunResult, run_conversation


@dataclass(slots=True)
class RunTask:
    """One (system, conversation) run: everything a worker needs, no path of the driver's."""

    system: str
    config: Any
    conversation: Conversation
    dataset: str | None
    run_id: str
    judge: Judge | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None
    snapshots: bool = True
    #: False: only its verdicts are wanted (the optimiser's validation runs), nothing is sent back.
    keep: bool = True


def derived_run_id(
    system: str, conversation: str, dataset: str | None, config: dict[str, Any], taken: Collection[str]
) -> str:
    """A run id from what the run is; the n-th repeat in one workspace gets the n-th id of the chain."""
    key = json.dumps([system, conversation, dataset, config], sort_keys=True, default=str)
    run_id = hashlib.sha256(key.encode()).hexdigest()[:12]
    while run_id in taken:
        run_id = hashlib.sha256(f"{key}/{run_id}".encode()).hexdigest()[:12]
    return run_id


def record_run(task: RunTask) -> tuple[RunResult, RunRecord | None]:
    """Run one task in a scratch workspace (a worker's); return its result and the recorded run."""
    with scratch_workspace() as scratch:
        system = system_class(task.system)(task.config, llm=None)
        result = run_conversation(
            system,
            task.conversation,
            scratch,
            judge=task.judge,
            dataset=task.dataset,
            name=task.name,
            metadata=task.metadata,
            snapshots=task.snapshots,
            run_id=task.run_id,
        )
        return result, pack_run(scratch, result.run_id) if task.keep else None


def record_runs(
    tasks: list[RunTask], workspace: Path, spec: ExecutorSpec, done: Callable[[int, RunResult], None]
) -> None:
    """Record `tasks` in workers; each kept run is ingested into `workspace` as it comes back, and
    `done(index, result)` is called in task order."""
    store = Store(workspace)
    try:

        def deliver(index: int, outcome: tuple[RunResult, RunRecord | None]) -> None:
            result, record = outcome
            if record is not None:
                ingest_run(store, record)
            done(index, result)

        run_tasks(record_run, tasks, spec, deliver)
    finally:
        store.close()
