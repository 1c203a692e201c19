"""`memtrace attribute`: attribute every failed case and print what failed where.

Registered in app.py as `app.command()(attribute)`. Suspected annotation errors (the conversation does
not support the gold answer) are no memory fault: they get a table of their own, with the reason.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from ..graph import Workspace
from ..vocabulary import ErrorType
from .consoles import JsonOption, console, styled, write_json
from .executor_options import ExecutorOption, RayAddressOption, WorkersOption, executor_spec
from .llm_options import (
    DEFAULT_CONCURRENCY,
    ConcurrencyOption,
    LLMLimits,
    MaxTokensOption,
    RetriesOption,
    TimeoutOption,
    closing_client,
    llm_client,
)
from .otel_cmd import content_notes
from .progress import progress_bar
from .render import short, suspects_table
from .workspace_arg import WorkspaceAlias, WorkspaceArgument, resolve_workspace

if TYPE_CHECKING:
    from ..attribution.model import Attribution


def attribute(
    workspace_arg: WorkspaceArgument = None,
    run: Annotated[str | None, typer.Option(help="Only this run (id, name or prefix).")] = None,
    case: Annotated[str | None, typer.Option(help="Only this case id.")] = None,
    method: Annotated[
        str, typer.Option(help="flow, agent, all-at-once, last-op, random or a plugin.")
    ] = "flow",
    llm: Annotated[str, typer.Option(help="offline, or openai for the LLM methods.")] = "offline",
    model: Annotated[str | None, typer.Option(help="Model name for --llm openai.")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Endpoint for --llm openai (or OPENAI_BASE_URL).")
    ] = None,
    timeout: TimeoutOption = None,
    retries: RetriesOption = None,
    max_tokens: MaxTokensOption = None,
    concurrency: ConcurrencyOption = DEFAULT_CONCURRENCY,
    refresh: Annotated[bool, typer.Option(help="Recompute instead of reusing stored attributions.")] = False,
    scorer: Annotated[
        str,
        typer.Option(help="flow's support scorer: overlap, embedding, minilm (memtrace[local]) or llm."),
    ] = "overlap",
    seed: Annotated[
        int, typer.Option(help="Seed of the random baseline (the same seed, the same picks).")
    ] = 0,
    workers: WorkersOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    json_out: JsonOption = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Attribute every failed case: the earliest decisive faulty operation and its error type."""
    from ..attribution.engine import attribute as attribute_cases

    workspace = resolve_workspace(workspace_arg, workspace_alias)
    with Workspace(workspace) as ws:
        run_id = ws.run(run).id if run else None
        limits = LLMLimits(timeout, retries, max_tokens, concurrency)
        with (
            closing_client(llm_client(llm, model, base_url, workspace, limits)) as client,
            progress_bar(console) as progress,
        ):
            task = progress.add_task(f"attributing ({method})", total=None)
            results = attribute_cases(
                ws,
                method,
                llm=client,
                seed=seed,
                scorer=scorer,
                run=run_id,
                case=case,
                refresh=refresh,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
                executor=executor_spec(workers, executor, ray_address),
            )
        title = f"Attributions ({method}) in {workspace}"
        faults = [a for a in results if a.error_type != ErrorType.ANNOTATION]
        suspects = [a for a in results if a.error_type == ErrorType.ANNOTATION]
        if faults or not suspects:
            if len(faults) <= 40 or case is not None:
                console.print(attribution_table(ws, faults, title))
            else:  # thousands of rows say less than their counts; --json has every case
                console.print(grouped_table(ws, faults, f"{title}: {len(faults)} cases, grouped"))
        if suspects:
            console.print(suspected_table(ws, suspects))
        notes = content_notes([ws.run(run_id) for run_id in dict.fromkeys(a.run_id for a in results)])
    console.print(summary_line(results))
    for note in notes:  # an OTLP re-import without content: why its cases came out Undetermined
        console.print(note, highlight=False)
    write_json(json_out, [a.to_dict() for a in results])


def attribution_table(ws: Workspace, attributions: list[Attribution], title: str) -> Table:
    """Case, question, error type, operation (name and seq), confidence; and why, for an Undetermined
    row, since a bare "Undetermined 0.00" tells the user nothing about what to fix."""
    cases = {(c.run_id, c.id): c for c in ws.cases()}
    reasons = any(not item.determined for item in attributions)
    table = Table(title=title, title_justify="left")
    for column in ("run", "case", "question", "error type", "operation", "seq", "conf."):
        table.add_column(column, justify="right" if column in ("seq", "conf.") else "left")
    if reasons:
        table.add_column("why undetermined", overflow="fold")
    graphs: dict[str, Any] = {}
    for item in attributions:
        case = cases.get((item.run_id, item.case_id))
        graph = graphs.setdefault(item.run_id, ws.graph(item.run_id))
        op = graph.op(item.op_id) if item.op_id and graph.has_op(item.op_id) else None
        kind = item.error_type if item.determined else styled(item.error_type, "yellow")
        table.add_row(
            graph.run.name,
            item.case_id,
            short(case.question if case else "", 46),
            kind,
            op.name if op else "-",
            str(op.seq) if op else "-",
            f"{item.confidence:.2f}",
            *([" ".join(item.explanation.split()) if not item.determined else ""] if reasons else []),
        )
    return table


def grouped_table(ws: Workspace, attributions: list[Attribution], title: str) -> Table:
    """Counts by system, error type and operation name: what a long list of cases comes down to; an
    Undetermined group shows its commonest reason as an example (--case or --json has each)."""
    runs = {r.id: r for r in ws.runs()}
    graphs: dict[str, Any] = {}
    groups: Counter[tuple[str, str, str]] = Counter()
    reasons: dict[tuple[str, str, str], Counter[str]] = {}
    for item in attributions:
        graph = graphs.setdefault(item.run_id, ws.graph(item.run_id))
        op = graph.op(item.op_id) if item.op_id and graph.has_op(item.op_id) else None
        run = runs.get(item.run_id)
        system = (run.system or run.name) if run else item.run_id
        key = (system, item.error_type, op.name if op else "-")
        groups[key] += 1
        if not item.determined:
            reasons.setdefault(key, Counter())[" ".join(item.explanation.split())] += 1
    table = Table(title=title, title_justify="left")
    for column in ("system", "error type", "operation", "cases"):
        table.add_column(column, justify="right" if column == "cases" else "left")
    if reasons:
        table.add_column("why undetermined", overflow="fold")
    for key, count in sorted(groups.items(), key=lambda kv: (kv[0][0], -kv[1])):
        system, kind, op_name = key
        undetermined = kind == ErrorType.UNDETERMINED
        why = f"e.g. {reasons[key].most_common(1)[0][0]}" if key in reasons else ""
        table.add_row(
            system,
            styled(kind, "yellow") if undetermined else kind,
            op_name,
            str(count),
            *([why] if reasons else []),
        )
    return table


def suspected_table(ws: Workspace, suspects: list[Attribution]) -> Table:
    """The suspected annotation errors, each with its gold answer and the reason it is suspected."""
    cases = {(c.run_id, c.id): c for c in ws.cases()}
    runs = {r.id: r.name for r in ws.runs()}
    rows = []
    for item in suspects:
        case = cases.get((item.run_id, item.case_id))
        gold = " | ".join(case.gold) if case else "-"
        rows.append((runs.get(item.run_id, item.run_id), item.case_id, short(gold, 40), item.explanation))
    return suspects_table(rows, "run", "no memory fault; kept out of the error counts")


def summary_line(attributions: list[Attribution]) -> str:
    """Counts per error type; suspected annotation errors said apart, outside those counts."""
    counts = Counter(a.error_type for a in attributions if a.error_type != ErrorType.ANNOTATION)
    suspects = len(attributions) - sum(counts.values())
    line = ", ".join(f"{kind}: {n}" for kind, n in counts.most_common())
    if suspects:
        apart = f"suspected annotation errors: {suspects} (kept out of the error counts)"
        line = f"{line}; {apart}" if line else apart
    return line or "no failed cases"
