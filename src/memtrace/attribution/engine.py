"""Attribute every failed case of a workspace with one method, reusing stored results.

`attribute(ws, method="flow")` (any registered method: methods.py) walks the failed cases run by run
(one in-memory graph per run), asks the store first (same run, case, method and settings -> the
stored attribution) and stores what it computes, with the verdict of an identical claim stored
under other settings (verdict_carryover.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..graph import Case, Workspace
from .evidence.model_scorers import make_scorer
from .model import Attribution, AttributionMethod, load_attribution, save_attribution, settings_key
from .registry import make_method
from .tasks import MethodRecipe, attribute_case, attribute_in_workers
from .verdict_carryover import VerdictsOnRecord

Progress = Callable[[int, int], None]

__all__ = ["Progress", "attribute", "make_scorer"]


def failed_cases(ws: Workspace, run: str | None = None, case: str | None = None) -> list[Case]:
    """Failed cases of one run, or of every recorded run (replays, which verification and fault
    injection create by the thousand, only when asked for by run)."""
    if run:
        cases = ws.cases(run)
    else:
        replays = {r.id for r in ws.runs() if r.parent_run}
        cases = [c for c in ws.cases() if c.run_id not in replays]
    chosen = [c for c in cases if c.failed and (case is None or c.id == case)]
    if case is not None and not chosen:
        from ..errors import NotFoundError

        raise NotFoundError(f"{ws.path}: no failed case {case!r}" + (f" in run {run}" if run else ""))
    return chosen


def attribute(
    ws: Workspace,
    method: AttributionMethod | str = "flow",
    *,
    run: str | None = None,
    case: str | None = None,
    refresh: bool = False,
    progress: Progress | None = None,
    llm: Any = None,
    scorer: str = "overlap",
    seed: int = 0,
    executor: Any = None,
) -> list[Attribution]:
    """Attributions for every failed case (of one run / one case when given).

    With an `executor` (executors.ExecutorSpec) of more than one worker and an offline method given by
    name, each run's cases to compute are one task (attribution/tasks.py, which builds the method
    again from its name, seed and scorer); results are stored in the same order either way.
    """
    named = isinstance(method, str)
    chosen = make_method(method, llm=llm, scorer=scorer, seed=seed) if isinstance(method, str) else method
    key = settings_key(chosen.settings())
    cases = failed_cases(ws, run, case)
    stored: dict[tuple[str, str], Attribution] = {}
    if not refresh:
        for item in cases:
            found = load_attribution(ws.store, item.run_id, item.id, chosen.name, key)
            if found is not None:
                stored[item.run_id, item.id] = found
    todo = [item for item in cases if (item.run_id, item.id) not in stored]
    done = len(cases) - len(todo)
    if progress and done:
        progress(done, len(cases))

    on_record = VerdictsOnRecord(ws.store, chosen.name, todo) if todo else None

    def keep(made: Attribution) -> None:
        nonlocal done
        made.settings_key = key  # as a stored one carries it: a later verdict is saved back under it
        if on_record is not None:
            on_record.carry_over(made)  # an identical claim's verdict, stored under other settings
        save_attribution(ws.store, made, key)
        stored[made.run_id, made.case_id] = made
        done += 1
        if progress:
            progress(done, len(cases))

    runs = len({item.run_id for item in todo})  # one task per run
    if executor is not None and not executor.runs_here(runs) and named and llm is None:
        attribute_in_workers(ws, MethodRecipe(str(method), seed, scorer), todo, executor, keep)
    else:
        views: dict[str, Any] = {}
        for item in todo:
            graph = views.get(item.run_id)
            if graph is None:
                views.clear()  # one run in memory at a time
                graph = views[item.run_id] = ws.view(item.run_id)
            keep(attribute_case(chosen, graph, item))
    return [stored[item.run_id, item.id] for item in cases]
