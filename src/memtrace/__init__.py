"""memtrace: record memory pipelines as executable graphs and find out why they answered wrong.

import memtrace as mt
with mt.run("ws/", name="conv-26", system="mem0") as run:
    with mt.op("extract_facts", category="extraction") as op:
        op.input("message", text, category="message")
        op.output("extracted_facts", facts)
ws = mt.open("ws/")
"""

from .graph import FormatError, MemtraceError, NotFoundError, Workspace, WorkspaceError
from .graph import open_workspace as open
from .trace import (
    current_op,
    current_run,
    disable,
    enable,
    is_enabled,
    op,
    propagate,
    run,
    traced,
    track,
)

__version__ = "0.1.0"

__all__ = [
    "FormatError",
    "MemtraceError",
    "NotFoundError",
    "Workspace",
    "WorkspaceError",
    "__version__",
    "current_op",
    "current_run",
    "disable",
    "enable",
    "is_enabled",
    "op",
    "open",
    "propagate",
    "run",
    "traced",
    "track",
]
