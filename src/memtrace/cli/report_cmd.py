"""`memtrace report`: write the diagnostic report of a workspace (html, md, json) and print its headline.

Registered in app.py as `app.command()(report)`. The structured files are written before any LLM is
asked for a narrative, so an unreachable endpoint costs the narrative only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ..errors import MemtraceError
from ..graph import Workspace
from .consoles import styled
from .llm_options import DEFAULT_CONCURRENCY, ConcurrencyOption, LLMLimits, RetriesOption, TimeoutOption
from .render import suspects_table
from .workspace_arg import WorkspaceAlias, WorkspaceArgument, resolve_workspace


def report(
    workspace_arg: WorkspaceArgument = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Folder for report.html, report.md, report.json (default WORKSPACE/report)."
        ),
    ] = None,
    runs: Annotated[
        list[str] | None,
        typer.Option("--runs", help="Only these runs: ids, id prefixes or names (repeat or comma-separate)."),
    ] = None,
    method: Annotated[str, typer.Option(help="Attribution method whose stored results to report.")] = "flow",
    llm: Annotated[
        str, typer.Option(help="offline, or openai to add a narrative an LLM writes from the report.")
    ] = "offline",
    model: Annotated[str | None, typer.Option(help="Model name for --llm openai.")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Endpoint for --llm openai (or OPENAI_BASE_URL).")
    ] = None,
    timeout: TimeoutOption = None,
    retries: RetriesOption = None,
    concurrency: ConcurrencyOption = DEFAULT_CONCURRENCY,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the report JSON here.")] = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Diagnostic report: headline numbers, charts, evidence funnel, failure patterns with examples."""
    from ..attribution.registry import check_method_name
    from ..report import build_report, write_report
    from ..report.verification import summary_lines
    from .common import console, progress, write_json

    workspace = resolve_workspace(workspace_arg, workspace_alias)
    check_method_name(method)
    if llm not in ("offline", "openai"):
        raise MemtraceError(f"unknown --llm {llm!r} (choose offline or openai)")
    target = out if out is not None else workspace / "report"
    with Workspace(workspace) as ws, progress() as bar:
        tasks: dict[str, Any] = {}

        def advance(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        result = build_report(ws, runs=runs, method=method, progress=advance)
    paths = write_report(result, target)
    console.print(headline_table(result))
    for line in summary_lines(result.headline):
        console.print(line, highlight=False)
    for table in (refuted_table(result), suspected_table(result)):
        if table is not None:
            console.print(table)
    console.print(patterns_table(result))
    for note in result.notes:
        console.print(styled("note:", "dim"), note, highlight=False)
    if llm == "openai":
        from ..llm.config import env_number

        # one call: fail fast by default (2 retries, not 4), unless the flag or environment says otherwise
        limits = LLMLimits(
            timeout,
            env_number("MEMTRACE_LLM_RETRIES", int, 2) if retries is None else retries,
            concurrency=concurrency,
        )
        _add_narrative(result, target, workspace, model, base_url, console, limits)
        paths = write_report(result, target)
    write_json(json_out, result.to_dict())
    console.print(f"wrote {paths['json']} and {paths['md']}", highlight=False)
    console.print(f"report: {paths['html']}", highlight=False, soft_wrap=True)


def _add_narrative(
    result: Any,
    target: Path,
    workspace: Path,
    model: str | None,
    base_url: str | None,
    console: Any,
    limits: LLMLimits,
) -> None:
    """Ask the LLM for the narrative; on failure one line, with the structured files already written."""
    from ..errors import LLMError
    from ..report import write_narrative
    from .llm_options import llm_client

    client = llm_client("openai", model, base_url, workspace, limits)
    try:
        with console.status("an LLM is writing the narrative"):
            result.narrative = write_narrative(result, client)
    except LLMError as exc:
        raise MemtraceError(f"narrative not written: {exc} (the structured report is in {target})") from None
    finally:
        client.close()


def headline_table(result: Any) -> Table:
    """Per system: questions, accuracy, failures by error type, suspected annotation errors apart."""
    h = result.headline
    kinds = result.error_types
    table = Table(
        title=f"Report of {h.runs} run(s): {h.questions} questions, accuracy {_pct(h.accuracy)}, "
        f"{h.failures} failures",
        title_justify="left",
    )
    suspects = ["suspected annotation errors"] if h.suspected_annotation_errors else []
    for column in ("system", "questions", "accuracy", "failures", *kinds, *suspects, "not verified"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for s in result.systems:
        table.add_row(
            s.system,
            str(s.questions),
            _pct(s.accuracy),
            str(s.failures),
            *(str(s.by_error_type.get(k, 0)) for k in kinds),
            *([str(s.suspected_annotation_errors)] if suspects else []),
            str(s.verification.get("not verified", 0)),
        )
    return table


def refuted_table(result: Any) -> Table | None:
    """Every claim verification refuted, with why (None when it refuted none)."""
    if not result.refuted:
        return None
    table = Table(title=f"Refuted by verification: {len(result.refuted)}", title_justify="left")
    for column in ("system", "case", "error type", "operation", "why"):
        table.add_column(column)
    for f in result.refuted:
        table.add_row(f.system, f.case_id, f.error_type, f.op_id or "-", f.verification_reason or "-")
    return table


def suspected_table(result: Any) -> Table | None:
    """The suspected annotation errors with their reasons (None when there are none)."""
    suspects = result.suspected_annotation_errors
    if not suspects:
        return None
    return suspects_table([(s.system, s.case_id, " | ".join(s.gold), s.reason) for s in suspects], "system")


def patterns_table(result: Any, limit: int = 8) -> Table:
    """The largest failure patterns, with the tunables each routes to (the report explains why)."""
    shown = result.patterns[:limit]
    more = f" (top {len(shown)} of {len(result.patterns)})" if len(result.patterns) > len(shown) else ""
    table = Table(title=f"Failure patterns{more}", title_justify="left")
    for column in ("system", "operation", "error type", "count", "share", "change next", "examples"):
        table.add_column(column, justify="right" if column in ("count", "share") else "left")
    for p in shown:
        table.add_row(
            p.system,
            p.op_name,
            p.error_type,
            str(p.count),
            f"{p.share:.0%}",
            ", ".join(t.name for t in p.tunables) or "-",
            ", ".join(e.case_id for e in p.examples),
        )
    return table


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
