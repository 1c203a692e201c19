"""`memtrace inspect`: the runs of a workspace, and one run's operations, memory units and cases.

Registered in app.py as `app.command()(inspect)`.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.rule import Rule

from ..graph import Workspace
from . import render
from .consoles import JsonOption, console, rule_width, write_json
from .workspace_arg import WorkspaceAlias, WorkspaceArgument, split_workspace


def inspect(
    workspace_arg: WorkspaceArgument = None,
    run_arg: Annotated[
        str | None, typer.Argument(metavar="RUN", help="A run to look into (id, name or prefix).")
    ] = None,
    units: Annotated[int, typer.Option(help="Memory units to list at most.")] = 30,
    json_out: JsonOption = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Runs in a workspace; with RUN, its operations by category, memory units and cases."""
    workspace, (run,) = split_workspace(workspace_alias, [workspace_arg, run_arg])
    with Workspace(workspace) as ws:
        summaries = render.run_summaries(ws)
        if run is None:
            console.print(render.runs_table(summaries, f"Runs in {workspace}"))
            if summaries:
                print_run(ws, summaries[0]["id"], units)
            if len(summaries) > 1:
                console.print(f"(details of the other runs: memtrace inspect {workspace} RUN)")
            write_json(json_out, summaries)
            return
        payload = print_run(ws, ws.run(run).id, units)
        write_json(json_out, payload)


def print_run(ws: Workspace, run_id: str, unit_limit: int) -> dict[str, Any]:
    """Print one run's header, operations, units and cases; return the same as `--json` writes."""
    graph = ws.graph(run_id)
    console.print(Rule(render.run_header(graph.run)), width=rule_width(console))
    operations = render.operations_summary(graph)
    console.print(render.operations_table(operations))
    all_units = graph.memory_units()
    units = render.units_summary(graph, unit_limit)
    if units:
        console.print(render.units_table(units, len(all_units)))
    cases = ws.cases(run_id)
    if cases:
        console.print(render.cases_table(cases))
    return {
        "run": graph.run.id,
        "operations": operations,
        "memory_units": units,
        "cases": [
            {
                "id": c.id,
                "question": c.question,
                "gold": c.gold,
                "prediction": c.prediction,
                "verdict": c.verdict,
            }
            for c in cases
        ],
    }
