"""`memtrace ui`: serve the web UI on a workspace; the UI's extra is imported only when it starts.

Registered in app.py as `app.command()(ui)`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ..errors import MemtraceError
from .consoles import console
from .workspace_arg import WorkspaceAlias, WorkspaceArgument, resolve_workspace


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
