"""`memtrace run` as independent tasks: one (system, conversation) run per task, with a fixed run id.

The id is derived from what the run is (system, conversation, dataset, config), so the store holds
the same runs whether they were recorded in this process or by any number of workers. A model
client does not travel: its recipe does, and the worker makes the client again, caching into its
scratch workspace (the entries come back with the run) and counting its calls against the driver's
shared limiters.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..datasets import Conversation
from ..eval import Judge
from ..executors import ExecutorSpec, RunRecord, ingest_run, pack_run, run_tasks, scratch_workspace
from ..executors.shared_limits import shared_limiters
from ..graph import Store
from ..llm import LLMClient
from ..llm.cache import LLMCache, high_water
from ..llm.config import ClientRecipe
from ..llm.limiter import LocalLimiters
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
    #: The judge; an LLM judge travels without its client, which `judge_llm` makes again.
    judge: Judge | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None
    snapshots: bool = True
    #: False: only its verdicts are wanted (the optimiser's validation runs), nothing is sent back.
    keep: bool = True
    #: The system's model client (None: offline).
    llm: ClientRecipe | None = None
    judge_llm: ClientRecipe | None = None
    #: Question-stage model calls fetched this many at a time (systems/ahead.py).
    ahead: int = 1


def why_in_process(llm: Any, judge: Judge | None) -> str | None:
    """Why runs with this client and judge cannot be given to workers, or None when they can."""
    recipe = getattr(llm, "recipe", None)
    if recipe is None:
        return f"the model client {llm!r} cannot be made again in a worker"
    if recipe.cache == "read-only":
        return "a read-only LLM cache (a replay) is read in this process only"
    try:
        portable_judge(judge)
    except ValueError as exc:
        return str(exc)
    return None


@contextlib.contextmanager
def model_recipes(
    tasks: list[RunTask], llm: Any, spec: ExecutorSpec, limiters: LocalLimiters | None, workspace: Path
) -> Iterator[None]:
    """Give each task the recipes of its model clients for the `with` block, so every run makes its
    own: in this process they share `limiters`, for workers the executor serves those, and each run
    fetches its questions' replies as many at a time as they allow. Each run is served from the
    workspace's cache as it stood before the first run and from its own calls, wherever it runs
    (llm/cache.py). Offline, or with a client made otherwise, nothing changes."""
    if llm is None or why_in_process(llm, tasks[0].judge if tasks else None):
        yield
        return
    limiters = limiters if limiters is not None else LocalLimiters()
    mark = high_water(workspace)
    with contextlib.ExitStack() as stack:
        if spec.runs_here(len(tasks)):
            shared, upto = limiters, mark
        else:  # a worker caches into its scratch workspace and asks the driver for what came before
            earlier = None
            if mark and llm.recipe.cache != "off":
                reader = LLMCache(workspace, "read-write", upto=mark)
                stack.callback(reader.close)
                earlier = functools.partial(reader.lookup, request={}, label="")
            shared, upto = stack.enter_context(shared_limiters(spec, limiters, earlier)), None
        for task in tasks:
            task.judge, judge_recipe = portable_judge(task.judge)
            task.llm = llm.recipe.sharing(shared, upto)
            task.judge_llm = judge_recipe.sharing(shared, upto) if judge_recipe is not None else None
            task.ahead = limiters.capacity
        yield


def portable_judge(judge: Judge | None) -> tuple[Judge | None, ClientRecipe | None]:
    """`judge` without its model client (which does not pickle) and the recipe to make it again;
    a ValueError when the client has no recipe (it was not made by `make_client`)."""
    client = getattr(judge, "client", None)
    if client is None:
        return judge, None
    recipe = getattr(client, "recipe", None)
    if recipe is None:
        raise ValueError(f"the judge's client {client!r} cannot be made again in a worker")
    detached = copy.copy(judge)
    detached.client = None  # type: ignore[union-attr]
    return detached, recipe


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
        with task_clients(task, scratch) as (llm, judge):
            system = system_class(task.system)(task.config, llm=llm)
            result = run_conversation(
                system,
                task.conversation,
                scratch,
                judge=judge,
                dataset=task.dataset,
                name=task.name,
                metadata=task.metadata,
                snapshots=task.snapshots,
                run_id=task.run_id,
                ahead=task.ahead,
            )
        return result, pack_run(scratch, result.run_id) if task.keep else None


def record_runs(
    tasks: list[RunTask],
    workspace: Path,
    spec: ExecutorSpec,
    done: Callable[[int, RunResult], None],
    preload: Collection[str] = (),
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

        run_tasks(record_run, tasks, spec, deliver, preload=list(preload))
    finally:
        store.close()


@contextlib.contextmanager
def task_clients(
    task: RunTask, workspace: Path, llm: Any = None
) -> Iterator[tuple[LLMClient | None, Judge | None]]:
    """The task's model clients made from their recipes, caching into `workspace` (closed
    afterwards), and its judge; a task without recipes runs with `llm` and its judge as they are."""
    with contextlib.ExitStack() as stack:
        if task.llm is not None:
            llm = stack.enter_context(task.llm.build(workspace))
        judge = task.judge
        if task.judge_llm is not None:  # the system's client when the judge asked the same one
            same = task.judge_llm == task.llm and llm is not None
            judge = copy.copy(judge)
            judge.client = llm if same else stack.enter_context(task.judge_llm.build(workspace))  # type: ignore[union-attr]
        yield llm, judge
