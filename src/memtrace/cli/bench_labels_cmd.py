"""`memtrace bench labels WS LABELS`: an attribution method and the verifier against hand labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from .common import JsonOption, console, write_json
from .progress import rich_progress
from .workspace_arg import WorkspaceAlias, resolve_workspace


def bench_labels(
    workspace_arg: Annotated[
        str | None, typer.Argument(metavar="WORKSPACE", help="The workspace the labelled runs are in.")
    ],
    labels: Annotated[Path, typer.Argument(metavar="LABELS", help="A memtrace-labels/1 file.")],
    method: Annotated[
        str, typer.Option(help="The attribution method to score (its stored results).")
    ] = "flow",
    split: Annotated[
        str, typer.Option(help="all, or the labels' split to score: tuned or aside (never tuned on).")
    ] = "all",
    verify: Annotated[
        bool, typer.Option("--verify", help="Verify each labelled claim not verified yet (replays; stored).")
    ] = False,
    save: Annotated[
        bool, typer.Option("--save", help="Store the labels as annotations of their cases (shown in the UI).")
    ] = False,
    second: Annotated[
        Path | None, typer.Option(help="A second reader's labels of some of the cases: their agreement.")
    ] = None,
    json_out: JsonOption = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Agreement with hand labels (type, type+operation) per system and type, and verify's verdicts."""
    from ..bench.labels import read_labels, reader_agreement, save_labels, score_labels
    from ..graph import Workspace

    workspace = resolve_workspace(workspace_arg, workspace_alias)
    primary = read_labels(labels)
    with Workspace(workspace) as ws, rich_progress(console) as progress:
        result = score_labels(ws, primary, method, split=split, progress=progress, verify=verify)
        if save:
            result["annotations_added"] = save_labels(ws, primary)
    if second is not None:
        result["readers"] = reader_agreement(primary, read_labels(second))
    console.print(agreement_table(result))
    if save:
        console.print(f"stored {result['annotations_added']} label(s) as annotations", markup=False)
    console.print(verdict_table(result))
    if "readers" in result:
        readers = result["readers"]
        console.print(
            f"two readers on {readers['cases']} cases: type {_pct(readers['type']['agreement'])}"
            f" (kappa {readers['type']['kappa']}), type+operation"
            f" {_pct(readers['type_and_operation']['agreement'])}"
            f" (kappa {readers['type_and_operation']['kappa']})",
            markup=False,
        )
    write_json(json_out, result)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def agreement_table(result: dict[str, Any]) -> Table:
    """One row per system and per labelled type, then the total."""
    table = Table(title=f"{result['method']} against hand labels ({result['split']})")
    for name, justify in (("group", "left"), ("labels", "right"), ("type", "right"), ("type+op", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for heading, rows in (("system", result["by_system"]), ("label", result["by_label_type"])):
        for name, row in rows.items():
            table.add_row(
                f"{heading} {name}", str(row["labels"]), _pct(row["type"]), _pct(row["type_and_operation"])
            )
        table.add_section()
    row = result["overall"]
    table.add_row("all", str(row["labels"]), _pct(row["type"]), _pct(row["type_and_operation"]), style="bold")
    table.add_row(
        "95% interval",
        "",
        _interval(row.get("type_interval")),
        _interval(row.get("type_and_operation_interval")),
        style="dim",
    )
    return table


def _interval(bounds: list[float] | tuple[float, float] | None) -> str:
    """A Wilson interval as 'low-high' percentages."""
    return "-" if not bounds else f"{bounds[0]:.1%}-{bounds[1]:.1%}"


def verdict_table(result: dict[str, Any]) -> Table:
    """What verify concluded of the claims the labels call right, and of those they call wrong."""
    table = Table(title="verify's verdicts against the labels")
    columns = ("claims", "confirmed", "by_elimination", "refuted", "not_verifiable", "not_verified")
    table.add_column("the labels call the claim")
    for name in columns:
        table.add_column(name.replace("_", " "), justify="right")
    for key, text in (("claims_labels_call_right", "right"), ("claims_labels_call_wrong", "wrong")):
        row = result["verification"][key]
        table.add_row(text, *(str(row[name]) for name in columns))
    return table
