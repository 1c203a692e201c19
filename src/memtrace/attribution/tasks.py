"""`attribute` as independent tasks: one run's failed cases per task, the run shipped as rows.

A worker rebuilds the run in a scratch workspace, attributes the cases it was given and returns the
attributions; the driver stores them in case order, so the attributions table (ids included) is the
one an in-process pass writes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..executors import ExecutorSpec, run_tasks, scratch_workspace
from ..graph import Case, GraphQueries, Run, Store, Workspace
from ..graph.rows import RunRows
from ..graph.shipping import run_rows
from .model import Attribution, AttributionMethod
from .registry import make_method


@dataclass(slots=True, frozen=True)
class MethodRecipe:
    """A registered method by name and options: a worker builds it again (methods keep caches that
    do not pickle)."""

    name: str
    seed: int = 0
    scorer: str = "overlap"
    #: Further options of the method's factory, as (name, value) pairs.
    options: tuple[tuple[str, Any], ...] = ()

    def build(self, llm: Any = None) -> AttributionMethod:
        return make_method(self.name, llm=llm, seed=self.seed, scorer=self.scorer, **dict(self.options))


@dataclass(slots=True)
class AttributeTask:
    """One run and the ids of its cases to attribute."""

    method: MethodRecipe
    run: Run
    rows: RunRows
    case_ids: list[str]


def attribute_run(task: AttributeTask) -> list[Attribution]:
    """In a worker: the run rebuilt in a scratch workspace, its asked-for cases attributed in order."""
    with scratch_workspace() as scratch:
        store = Store(scratch)
        try:
            store.replace_run(task.run, task.rows)
        finally:
            store.close()
        with Workspace(scratch) as ws:
            graph = ws.view(task.run.id)
            cases = {case.id: case for case in ws.cases(task.run.id)}
            method = task.method.build()
            return [attribute_case(method, graph, cases[case_id]) for case_id in task.case_ids]


def attribute_in_workers(
    ws: Workspace,
    method: MethodRecipe,
    cases: list[Case],
    spec: ExecutorSpec,
    keep: Callable[[Attribution], None],
) -> None:
    """Attribute `cases` one run per task; `keep` each attribution in the order of `cases`."""
    by_run: dict[str, list[str]] = {}
    for case in cases:
        by_run.setdefault(case.run_id, []).append(case.id)
    # Cases arrive grouped by run (failed_cases walks the runs in order), so task order is case order.
    tasks = [AttributeTask(method, *run_rows(ws.store, run_id), ids) for run_id, ids in by_run.items()]

    def deliver(index: int, made: list[Attribution]) -> None:
        for attribution in made:
            keep(attribution)

    run_tasks(attribute_run, tasks, spec, deliver)


def attribute_case(chosen: AttributionMethod, graph: GraphQueries, item: Case) -> Attribution:
    """One case's attribution, with the seconds it took when the method did not say."""
    started = time.perf_counter()
    made = chosen.attribute(graph, item)
    if not made.cost.seconds:
        made.cost.seconds = time.perf_counter() - started
    return made
