"""`memtrace import`: graphs from smartcomment JSON, native JSONL, MemTraceBench or OpenTelemetry.

Registered in app.py as `app.command("import")(import_)`. A bad file is reported and nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import MemtraceError
from ..graph import Workspace
from . import render
from .consoles import JsonOption, console, write_json
from .progress import progress_bar
from .workspace_arg import WorkspaceAlias, WorkspaceArgument, require, split_workspace


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
    expose: Annotated[
        bool,
        typer.Option(
            "--expose",
            help="otlp --listen: allow a non-loopback HOST (no authentication: whoever reaches it writes).",
        ),
    ] = False,
    json_out: JsonOption = None,
) -> None:
    """Import graphs into a workspace; a bad file is reported and nothing is written.

    otlp: GenAI memory spans from any OpenTelemetry instrumentation become one run per trace.

    A file (protobuf or OTLP/JSON), or live with --listen; memory record ids become the units.
    """
    from ..interop import import_jsonl, import_smartcomment, load_memtracebench
    from ..systems.registry import memtracebench_splits

    if format not in ("auto", "otlp"):
        raise MemtraceError(f"unknown import format {format!r} (choose auto or otlp)")
    workspace, (source_value,) = split_workspace(workspace_alias, [workspace_arg, source_arg])
    if expose and listen is None:
        raise MemtraceError("--expose goes with --listen HOST:PORT")
    if listen is not None:
        from .otel_cmd import listen as listen_otlp
        from .otel_cmd import listen_address

        if format != "otlp":
            raise MemtraceError("--listen receives OpenTelemetry spans: add --format otlp")
        host, port = listen_address(listen, expose=expose, workspace=Path(workspace))
        with Workspace(workspace, create=True) as ws:
            listen_otlp(ws, host, port, cases=cases, console=console, expose=expose)
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
            with progress_bar(console) as progress:
                task = progress.add_task("importing", total=None)

                def advance(done: int, total: int, label: str = "") -> None:
                    progress.update(task, completed=done, total=total, description=f"importing {label}")

                runs = load_memtracebench(
                    ws.store, source, splits=split, progress=advance, systems=memtracebench_splits()
                )
        elif source.name.endswith((".jsonl", ".jsonl.gz")):
            runs = [import_jsonl(ws.store, source)]
        else:
            split = source.parent.name if system is None else None
            if split in memtracebench_splits():  # <dir>/<split>/x.json: the run a directory import makes
                runs = [
                    import_smartcomment(
                        ws.store,
                        source,
                        name=name,
                        system=memtracebench_splits()[split],
                        id_hint=source.name,
                        name_prefix=f"{split}/",
                    )
                ]
            else:
                runs = [import_smartcomment(ws.store, source, name=name, system=system)]
        ids = {run.id for run in runs}
        summaries = [row for row in render.run_summaries(ws) if row["id"] in ids]
    console.print(render.runs_table(summaries, f"Imported {len(runs)} run(s) into {workspace}"))
    if format == "otlp":
        from .otel_cmd import content_notes

        for note in content_notes(runs):
            console.print(note, highlight=False)
    write_json(json_out, summaries)
