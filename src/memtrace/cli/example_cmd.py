"""`memtrace example`: record the built-in toy pipeline (demo.py) so there is a run to look at.

Registered in app.py as `app.command()(example)`, and under its first name `demo`, hidden.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .consoles import console


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
