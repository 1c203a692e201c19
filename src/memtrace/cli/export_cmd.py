"""`memtrace export`: one run as smartcomment JSON, native JSONL, or OpenTelemetry spans.

Registered in app.py as `app.command()(export)`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import MemtraceError
from ..graph import Workspace
from ..text import safe_filename
from .consoles import console
from .workspace_arg import WorkspaceAlias, WorkspaceArgument, require, split_workspace


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
        bool,
        typer.Option(
            "--content",
            help="otlp: include message, query, memory and case text"
            " (opt-in; an import needs it to attribute).",
        ),
    ] = False,
    timeout: Annotated[float, typer.Option(help="otlp: seconds to wait for the receiver.")] = 10.0,
) -> None:
    """Export one run as smartcomment JSON (MemTraceBench format), native JSONL, or OpenTelemetry spans.

    otlp: one GenAI span per operation (create_memory, search_memory, chat, ...), sent to --endpoint.

    Stored attributions ride along as gen_ai.evaluation.result events on each failed answer's span, and
    the blamed operations' spans end ERROR. `memtrace import` rebuilds the run from the file.
    """
    from ..interop import write_jsonl, write_smartcomment

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
