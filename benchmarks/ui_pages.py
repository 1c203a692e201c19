"""Server time of every web UI page and API call on the largest run of a workspace.

    .venv/bin/python benchmarks/ui_pages.py /tmp/uiws [--repeats 5]

The workspace should hold the locomo-dev run of issue 15 (`memtrace run WS --system all --dataset
locomo:../shared/data/locomo-dev.json`, then `memtrace attribute WS` and `memtrace verify WS
--limit 50`). Requests go through the real FastAPI app in process (Starlette's test client), so
the time is the server's: routing, queries, rendering. The first request of a run (cold: its
memory versions are read and their words computed) is shown apart from the median of the rest.
Goal (issue 15): every page under 300 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from urllib.parse import quote

from fastapi.testclient import TestClient
from rich.console import Console
from rich.table import Table

from memtrace.attribution.model import load_attributions
from memtrace.graph import Workspace
from memtrace.ui import create_app

try:
    from _common import code_version, goal_status
except ImportError:  # run from elsewhere
    from benchmarks._common import code_version, goal_status

GOAL_MS = 300.0


def largest_run(ws: Workspace) -> str:
    """The original (not replayed) run with the most operations."""
    runs = [r for r in ws.runs() if not r.parent_run]
    return max(runs, key=lambda r: ws.store.count("ops", r.id)).id


def pick_case(ws: Workspace, run_id: str) -> tuple[str, str | None]:
    """A failed case of the run, preferring a verified one, with its blamed operation."""
    attributions = [a for a in load_attributions(ws.store, run_id) if a.op_id]
    attributions.sort(key=lambda a: (a.verified is None, a.error_type == "ResponseError"))
    chosen = attributions[0]
    return chosen.case_id, chosen.op_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sweep", type=int, default=40, help="failed cases per system in the sweep")
    args = parser.parse_args()
    with Workspace(args.workspace) as ws:
        run_id = largest_run(ws)
        case_id, op_id = pick_case(ws, run_id)
        ops = ws.store.count("ops", run_id)
        variables = ws.store.count("vars", run_id)
        max_seq = ws.store.max_seq(run_id)
    r, c, o = quote(run_id, safe=""), quote(case_id, safe=""), quote(op_id or "", safe="")
    paths = [
        ("runs page", "/"),
        ("cases page", f"/runs/{r}"),
        ("cases page, wrong only", f"/runs/{r}?verdict=wrong"),
        ("case page", f"/runs/{r}/cases/{c}"),
        ("case graph API", f"/api/runs/{r}/cases/{c}/graph"),
        ("case API", f"/api/runs/{r}/cases/{c}"),
        ("operation page", f"/runs/{r}/ops/{o}"),
        ("memory page (end)", f"/runs/{r}/memory"),
        ("memory page + diff", f"/runs/{r}/memory?seq={max_seq // 2}&since={max_seq // 3}"),
        ("runs API", "/api/runs"),
    ]
    client = TestClient(create_app(args.workspace, port=8765), base_url="http://127.0.0.1:8765")
    table = Table(title=f"UI server times: run {run_id} ({ops} ops, {variables} versions), case {case_id}")
    for column in ("request", "status", "cold ms", f"median of {args.repeats} ms", "max ms", "goal"):
        table.add_column(column, justify="left" if column in ("request", "goal") else "right")
    worst = 0.0
    for label, path in paths:
        times = []
        status = 0
        for _ in range(args.repeats + 1):
            started = time.perf_counter()
            response = client.get(path)
            times.append(1000 * (time.perf_counter() - started))
            status = response.status_code
        cold, warm = times[0], times[1:]
        worst = max(worst, cold, *warm)
        table.add_row(
            label,
            str(status),
            f"{cold:.1f}",
            f"{statistics.median(warm):.1f}",
            f"{max(warm):.1f}",
            goal_status(max(cold, *warm) < GOAL_MS),
        )
    console = Console()
    console.print(table)
    console.print(f"slowest request {worst:.1f} ms (goal {GOAL_MS:.0f} ms), code {code_version()}")
    sweep(client, args.workspace, args.sweep, console)


def sweep(client: TestClient, workspace: Path, per_run: int, console: Console) -> None:
    """Case page and graph API over failed cases of each system's largest run (first request each)."""
    with Workspace(workspace) as ws:
        originals = [r for r in ws.runs() if not r.parent_run]
        by_system: dict[str, str] = {}
        for run in sorted(originals, key=lambda r: ws.store.count("ops", r.id)):
            by_system[run.system or "?"] = run.id
        chosen = {
            system: [a.case_id for a in load_attributions(ws.store, run_id)][:per_run]
            for system, run_id in by_system.items()
        }
    table = Table(title=f"Case pages over {per_run} failed cases of each system's largest run")
    for column in ("system", "run", "cases", "page median ms", "page max ms", "graph max ms", "max nodes"):
        table.add_column(column, justify="left" if column in ("system", "run") else "right")
    for system, run_id in by_system.items():
        pages, graphs, nodes = [], [], 0
        for case_id in chosen[system]:
            c = quote(case_id, safe="")
            started = time.perf_counter()
            client.get(f"/runs/{run_id}/cases/{c}")
            pages.append(1000 * (time.perf_counter() - started))
            started = time.perf_counter()
            graph = client.get(f"/api/runs/{run_id}/cases/{c}/graph").json()
            graphs.append(1000 * (time.perf_counter() - started))
            nodes = max(nodes, len(graph["nodes"]))
        table.add_row(
            system,
            run_id,
            str(len(pages)),
            f"{statistics.median(pages):.1f}",
            f"{max(pages):.1f}",
            f"{max(graphs):.1f}",
            str(nodes),
        )
    console.print(table)


if __name__ == "__main__":
    main()
