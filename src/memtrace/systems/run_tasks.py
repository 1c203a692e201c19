"""`memtrace run` as independent tasks: one (system, conversation) run per task, with a fixed run id.

The id is derived from what the run is (system, conversation, dataset, config), so the store holds
the same runs whether they were recorded in this process or by any number of workers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ..datasets import Conversation
from ..eval import Judge
from ..executors import RunRecord, pack_run, scratch_workspace
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


def derived_run_id(
    system: str, conversation: str, dataset: str | None, config: dict[str, Any], taken: Collection[str]
) -> str:
    """A run id from what the run is; the n-th repeat in one workspace gets the n-th id of the chain."""
    key = json.dumps([system, conversation, dataset, config], sort_keys=True, default=str)
    run_id = hashlib.sha256(key.encode()).hexdigest()[:12]
    while run_id in taken:
        run_id = hashlib.sha256(f"{key}/{run_id}".encode()).hexdigest()[:12]
    return run_id


def record_run(task: RunTask) -> tuple[RunResult, RunRecord]:
    """Run one task in a scratch workspace (a worker's); return its result and the recorded run."""
    with scratch_workspace() as scratch:
        system = system_class(task.system)(task.config, llm=None)
        result = run_conversation(
            system, task.conversation, scratch, judge=task.judge, dataset=task.dataset, run_id=task.run_id
        )
        return result, pack_run(scratch, result.run_id)
