"""Attribute every failed case of a workspace with one method, reusing stored results.

`attribute(ws, method="flow")` (any registered method: methods.py) walks the failed cases run by run
(one in-memory graph per run), asks the store first (same run, case, method and settings -> the
stored attribution) and stores what it computes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..graph import Case, Workspace
from .evidence.model_scorers import make_scorer
from .model import Attribution, AttributionMethod, load_attribution, save_attribution, settings_key
from .registry import make_method

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
) -> list[Attribution]:
    """Attributions for every failed case (of one run / one case when given)."""
    chosen = method if not isinstance(method, str) else make_method(method, llm=llm, scorer=scorer)
    key = settings_key(chosen.settings())
    cases = failed_cases(ws, run, case)
    results: list[Attribution] = []
    views: dict[str, Any] = {}
    for done, item in enumerate(cases, 1):
        stored = None if refresh else load_attribution(ws.store, item.run_id, item.id, chosen.name, key)
        if stored is None:
            graph = views.get(item.run_id)
            if graph is None:
                views.clear()  # one run in memory at a time
                graph = views[item.run_id] = ws.view(item.run_id)
            started = time.perf_counter()
            stored = chosen.attribute(graph, item)
            if not stored.cost.seconds:
                stored.cost.seconds = time.perf_counter() - started
            save_attribution(ws.store, stored, key)
        results.append(stored)
        if progress:
            progress(done, len(cases))
    return results
