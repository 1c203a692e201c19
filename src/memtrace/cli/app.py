"""The `memtrace` command line: run, import, export, inspect, attribute, verify, bench, example, version.

Every command prints rich tables and takes `--json` for scripts; expected failures (a corrupt
file, a missing run) print one line naming the problem and exit with status 1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress
from rich.rule import Rule

from .. import __version__
from ..errors import MemtraceError
from ..graph import Workspace
from ..text import safe_filename
from . import consoles, failures, render
from .consoles import JsonOption, rule_width, write_json
from .llm_options import (
    JudgeBaseUrlOption,
    JudgeModelOption,
    JudgeOption,
    LLMLimits,
    MaxTokensOption,
    RetriesOption,
    TimeoutOption,
)
from .progress import progress_bar
from .workspace_arg import (
    WorkspaceAlias,
    WorkspaceArgument,
    require,
    resolve_workspace,
    split_workspace,
)

app = typer.Typer(
    name="memtrace",
    help="Explain, prove and fix the wrong answers of LLM memory systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console, errors = consoles.console, consoles.errors

#: The exit status typer gives Ctrl-C.
INTERRUPTED_EXIT_CODE = 130


def main() -> None:
    """Console entry point: expected errors become one line, not a traceback (see failures.py)."""
    try:
        app()
    except SystemExit as exc:
        if exc.code == INTERRUPTED_EXIT_CODE:  # typer turns Ctrl-C into this exit status
            errors.print(failures.interrupted_line(), highlight=False, soft_wrap=True)
        raise
    except Exception as exc:
        line = failures.failure_line(exc)
        if line is None:
            raise
        errors.print(consoles.styled("error:", "red"), line, highlight=False, soft_wrap=True)
        sys.exit(1)


@app.command()
def version() -> None:
    """Print the memtrace version."""
    console.print(f"memtrace {__version__}")


@app.command("import")
def import_(
    workspace_arg: WorkspaceArgument = None,
    source_arg: Annotated[
        str | None,
        typer.Argument(metavar="SOURCE", help="A smartcomment .json, a .jsonl(.gz), or a MemTraceBench dir."),
    ] = None,
    workspace_alias: WorkspaceAlias = None,
    name: Annotated[str | None, typer.Option(help="Run name (single files only).")] = None,
    system: Annotated[str | None, typer.Option(help="System name to record (single files only).")] = None,
    split: Annotated[
        list[str] | None, typer.Option(help="MemTraceBench splits to load (default all).")
    ] = None,
    format: Annotated[
        str, typer.Option("--format", "-f", help="auto (by the file's name and start), or otlp.")
    ] = "auto",
    cases: Annotated[
        Path | None,
        typer.Option(help="otlp: a JSON list of {question, gold} to find in the traces as cases."),
    ] = None,
    listen: Annotated[
        str | None,
        typer.Option(help="otlp: be an OTLP/HTTP receiver at HOST:PORT, importing traces as they come."),
    ] = None,
    json_out: JsonOption = None,
) -> None:
    """Import graphs into a workspace; a bad file is reported and nothing is written.

    otlp: GenAI memory spans from any OpenTelemetry instrumentation become one run per trace.

    A file (protobuf or OTLP/JSON), or live with --listen; memory record ids become the units.
    """
    from ..graph.io import import_jsonl, import_smartcomment, load_memtracebench
    from ..systems.registry import memtracebench_splits

    if format not in ("auto", "otlp"):
        raise MemtraceError(f"unknown import format {format!r} (choose auto or otlp)")
    workspace, (source_value,) = split_workspace(workspace_alias, [workspace_arg, source_arg])
    if listen is not None:
        from .otel_cmd import listen as listen_otlp

        if format != "otlp":
            raise MemtraceError("--listen receives OpenTelemetry spans: add --format otlp")
        with Workspace(workspace, create=True) as ws:
            listen_otlp(ws, listen, cases=cases, console=console)
        return
    source = Path(require(source_value, "SOURCE"))
    if not source.exists():
        raise MemtraceError(f"{source}: no such file or directory")
    from .otel_cmd import looks_like_otlp

    if format == "auto" and looks_like_otlp(source):
        format = "otlp"
    with Workspace(workspace, create=True) as ws:
        if format == "otlp":
            from .otel_cmd import import_file

            ids = set(import_file(ws, source, name=name, cases=cases))
            runs = [ws.run(run_id) for run_id in ids]
        elif source.is_dir():
            with _progress() as progress:
                task = progress.add_task("importing", total=None)

                def advance(done: int, total: int, label: str = "") -> None:
                    progress.update(task, completed=done, total=total, description=f"importing {label}")

                runs = load_memtracebench(
                    ws.store, source, splits=split, progress=advance, systems=memtracebench_splits()
                )
        elif source.name.endswith((".jsonl", ".jsonl.gz")):
            runs = [import_jsonl(ws.store, source)]
        else:
            runs = [import_smartcomment(ws.store, source, name=name, system=system)]
        ids = {run.id for run in runs}
        summaries = [row for row in render.run_summaries(ws) if row["id"] in ids]
    console.print(render.runs_table(summaries, f"Imported {len(runs)} run(s) into {workspace}"))
    write_json(json_out, summaries)


@app.command()
def export(
    workspace_arg: WorkspaceArgument = None,
    run_arg: Annotated[str | None, typer.Argument(metavar="RUN", help="Run id, name or id prefix.")] = None,
    workspace_alias: WorkspaceAlias = None,
    format: Annotated[
        str, typer.Option("--format", "-f", help="smartcomment, jsonl or otlp (OpenTelemetry spans).")
    ] = "smartcomment",
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Output file (default: <run>.<ext>; otlp: .json or protobuf)."),
    ] = None,
    annotations: Annotated[
        bool,
        typer.Option(
            "--annotations",
            help="Put the run's human labels at data.annotations (MemTraceBench annotation format).",
        ),
    ] = False,
    endpoint: Annotated[
        str | None,
        typer.Option(help="otlp: the OTLP receiver, e.g. http://127.0.0.1:4318 (grpc: 127.0.0.1:4317)."),
    ] = None,
    protocol: Annotated[str, typer.Option(help="otlp: http/protobuf or grpc.")] = "http/protobuf",
    content: Annotated[
        bool, typer.Option("--content", help="otlp: include message, query and memory text (opt-in).")
    ] = False,
    timeout: Annotated[float, typer.Option(help="otlp: seconds to wait for the receiver.")] = 10.0,
) -> None:
    """Export one run as smartcomment JSON (MemTraceBench format), native JSONL, or OpenTelemetry spans.

    otlp: one GenAI span per operation (create_memory, search_memory, chat, ...), sent to --endpoint.

    Stored attributions ride along as gen_ai.evaluation.result events on each failed answer's span.
    """
    from ..graph.io import write_jsonl, write_smartcomment

    workspace, (run_value,) = split_workspace(workspace_alias, [workspace_arg, run_arg])
    run = require(run_value, "RUN")
    if format not in ("smartcomment", "jsonl", "otlp"):
        raise MemtraceError(f"unknown export format {format!r} (choose smartcomment, jsonl or otlp)")
    if annotations and format != "smartcomment":
        raise MemtraceError("--annotations needs --format smartcomment (MemTraceBench's format)")
    if format == "otlp":
        from .otel_cmd import export_run

        with Workspace(workspace) as ws:
            line = export_run(
                ws, run, endpoint=endpoint, out=out, protocol=protocol, content=content, timeout=timeout
            )
        console.print(line, highlight=False)
        return
    with Workspace(workspace) as ws:
        record = ws.run(run)
        suffix = "json" if format == "smartcomment" else "jsonl"
        target = out or Path(f"{safe_filename(record.name, fallback=record.id)}.{suffix}")
        if format == "smartcomment":
            counts = write_smartcomment(ws.store, record.id, target, annotations=annotations)
        else:
            write_jsonl(ws.store, record.id, target)
    labelled = f" with {counts.get('annotations', 0)} annotation(s)" if annotations else ""
    console.print(f"exported run {record.id} ({record.name}) as {format}{labelled} to {target}")


@app.command()
def ui(
    workspace_arg: WorkspaceArgument = None,
    workspace_alias: WorkspaceAlias = None,
    port: Annotated[int, typer.Option("--port", "-p", help="Port on 127.0.0.1 (0: any free one).")] = 8765,
) -> None:
    """Browse a workspace in the web UI: runs, failed cases, memory evolution, annotations."""
    try:
        from ..ui.server import serve
    except ImportError as exc:
        raise MemtraceError(
            f"the web UI needs its extra ({exc.name} is not installed): pip install 'memtrace[ui]'"
        ) from None
    workspace = resolve_workspace(workspace_arg, workspace_alias)
    serve(workspace, port=port, announce=lambda url: console.print(f"memtrace ui: {url}  (Ctrl-C stops)"))


@app.command()
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
                _print_run(ws, summaries[0]["id"], units)
            if len(summaries) > 1:
                console.print(f"(details of the other runs: memtrace inspect {workspace} RUN)")
            write_json(json_out, summaries)
            return
        payload = _print_run(ws, ws.run(run).id, units)
        write_json(json_out, payload)


def _print_run(ws: Workspace, run_id: str, unit_limit: int) -> dict[str, Any]:
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


@app.command()
def run(
    workspace_arg: WorkspaceArgument = None,
    system: Annotated[
        str,
        typer.Option(
            help="long_context, rag, mem0, evermemos, mem0ai (the real mem0 library: needs "
            "'memtrace[mem0ai]' and a model) or a plugin; a comma list, or all."
        ),
    ] = "all",
    dataset: Annotated[str, typer.Option(help="sample[:SEED], locomo:PATH or longmemeval:PATH.")] = "sample",
    conversations: Annotated[
        int | None, typer.Option(help="Use the first N conversations (sample: N seeded variants).")
    ] = None,
    questions: Annotated[int | None, typer.Option(help="Use the first N questions of each.")] = None,
    llm: Annotated[
        str, typer.Option(help="offline, or openai (any OpenAI-compatible endpoint).")
    ] = "offline",
    model: Annotated[str | None, typer.Option(help="Model name for --llm openai.")] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Endpoint for --llm openai (or OPENAI_BASE_URL).")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Change a setting, KEY=VALUE (repeatable), e.g. top_k=8."),
    ] = None,
    timeout: TimeoutOption = None,
    retries: RetriesOption = None,
    max_tokens: MaxTokensOption = None,
    judge: JudgeOption = None,
    judge_model: JudgeModelOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    json_out: JsonOption = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Run memory systems over a dataset: one recorded run per conversation and system."""
    from .run_cmd import run_command, system_names

    workspace = resolve_workspace(workspace_arg, workspace_alias)
    system_names(system)  # an unknown system fails before any client is made
    limits = LLMLimits(timeout, retries, max_tokens)
    client = _llm_client(llm, model, base_url, workspace, limits)
    payload = run_command(
        workspace,
        system,
        dataset,
        conversations=conversations,
        questions=questions,
        overrides=set_,
        client=client,
        judge=judge,
        judge_model=judge_model,
        judge_base_url=judge_base_url,
        model=model,
        base_url=base_url,
        limits=limits,
        console=console,
    )
    write_json(json_out, payload)


@app.command()
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
    refresh: Annotated[bool, typer.Option(help="Recompute instead of reusing stored attributions.")] = False,
    scorer: Annotated[
        str, typer.Option(help="flow's support scorer: overlap, embedding or llm.")
    ] = "overlap",
    json_out: JsonOption = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Attribute every failed case: the earliest decisive faulty operation and its error type."""
    from ..attribution.engine import attribute as attribute_cases
    from .attribute_cmd import attribution_table, grouped_table, summary_line

    workspace = resolve_workspace(workspace_arg, workspace_alias)
    with Workspace(workspace) as ws:
        run_id = ws.run(run).id if run else None
        client = _llm_client(llm, model, base_url, workspace)
        with _progress() as progress:
            task = progress.add_task(f"attributing ({method})", total=None)
            results = attribute_cases(
                ws,
                method,
                run=run_id,
                case=case,
                refresh=refresh,
                llm=client,
                scorer=scorer,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
        title = f"Attributions ({method}) in {workspace}"
        if len(results) <= 40 or case is not None:
            console.print(attribution_table(ws, results, title))
        else:  # thousands of rows say less than their counts; --json has every case
            console.print(grouped_table(ws, results, f"{title}: {len(results)} cases, grouped"))
    console.print(summary_line(results))
    write_json(json_out, [a.to_dict() for a in results])


@app.command()
def verify(
    workspace_arg: WorkspaceArgument = None,
    method: Annotated[str, typer.Option(help="Verify this method's stored attributions.")] = "flow",
    llm: Annotated[str, typer.Option(help="offline, or openai when the runs used a model.")] = "offline",
    model: Annotated[str | None, typer.Option(help="Model name for --llm openai.")] = None,
    base_url: Annotated[str | None, typer.Option(help="Endpoint for --llm openai.")] = None,
    oracle: Annotated[
        bool,
        typer.Option(
            help="When a repair does not deliver the evidence, test the answer step (a second fault)."
        ),
    ] = True,
    run: Annotated[
        list[str] | None, typer.Option(help="Only this run's attributions (repeatable; id, name or prefix).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Verify at most N (the rest stay unverified).")] = None,
    refresh: Annotated[bool, typer.Option(help="Verify again those already verified.")] = False,
    json_out: JsonOption = None,
    workspace_alias: WorkspaceAlias = None,
) -> None:
    """Replay each attributed run with the blamed operation repaired: flow- and answer-confirmation."""
    from ..attribution.methods import check_method_name
    from ..attribution.model import load_attributions
    from ..attribution.verify import verification_summary, verify_all
    from .verify_cmd import headline, reasons_table, verdict_table

    check_method_name(method)
    workspace = resolve_workspace(workspace_arg, workspace_alias)
    client = _llm_client(llm, model, base_url, workspace)
    with _progress() as progress:
        task = progress.add_task(f"verifying ({method})", total=None)
        outcomes = verify_all(
            workspace,
            method=method,
            llm=client,
            oracle=oracle,
            runs=run,
            limit=limit,
            refresh=refresh,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    with Workspace(workspace) as ws:
        chosen = None if run is None else {ws.run(ref).id for ref in run}
        scope = [
            a for a in load_attributions(ws.store, method=method) if chosen is None or a.run_id in chosen
        ]
    summary = verification_summary(scope)
    where = f" of run(s) {', '.join(run)}" if run else ""
    console.print(verdict_table(summary, f"Verification of {method} attributions{where} in {workspace}"))
    reasons = reasons_table(summary)
    if reasons is not None:
        console.print(reasons)
    console.print(headline(summary))
    console.print(
        consoles.styled(f"verified now: {len(outcomes)} (--refresh verifies stored verdicts again)", "dim")
    )
    write_json(json_out, {**summary, "verified_now": len(outcomes)})


def _llm_client(
    kind: str, model: str | None, base_url: str | None, workspace: Path, limits: LLMLimits | None = None
) -> Any:
    from .llm_options import llm_client

    return llm_client(kind, model, base_url, workspace, limits)


@app.command()
def example(
    workspace: Annotated[
        Path, typer.Argument(metavar="WORKSPACE", help="Workspace folder to record into.")
    ] = Path("example-workspace"),
) -> None:
    """Record a tiny built-in toy pipeline (one run named demo) to try inspect and attribute on."""
    from .demo import record_demo

    run_id = record_demo(workspace)
    console.print(f"recorded run {run_id} into {workspace}")
    console.print(f"next: memtrace inspect {workspace} demo; memtrace attribute {workspace}", highlight=False)


# `memtrace demo` was this command's first name; `make demo` (the four systems) now owns that word.
app.command("demo", hidden=True)(example)


def _progress() -> Progress:
    return progress_bar(console)


from .bench_cmd import bench_app  # noqa: E402

app.add_typer(bench_app, name="bench")

from .report_cmd import report  # noqa: E402

app.command()(report)

from .optimize_cmd import optimize  # noqa: E402

app.command()(optimize)


if __name__ == "__main__":
    main()
