"""memtrace: record memory pipelines as executable graphs and find out why they answered wrong.

import memtrace as mt
with mt.run("ws/", name="conv-26", system="mem0") as run:
    with mt.op("extract_facts", category="extraction") as op:
        op.input("message", text, category="message")
        op.output("extracted_facts", facts)
ws = mt.open("ws/")
results = mt.attribute(ws)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import FormatError, MemtraceError, NotFoundError, WorkspaceError
from .graph import Workspace
from .graph import open_workspace as open
from .lazy import lazy_exports
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
from .trace.in_memory import InMemorySink
from .trace.patch import CANCEL, DELETE, Patch
from .trace.sink import Sink
from .vocabulary import CaseVerdict, ErrorType, Verdict

if TYPE_CHECKING:
    from .attribution.engine import attribute
    from .attribution.model import Attribution
    from .attribution.registry import register_attributor
    from .attribution.verify.counterfactual import verify
    from .attribution.verify.verdicts import Verification
    from .systems.base import MemorySystem, SystemConfig
    from .systems.registry import register_system
    from .systems.replay import ReplayResult, replay

#: Upper-layer exports, imported on first use: a process that only records never loads numpy,
#: the retrievers or the attributors (`import memtrace` stays as cheap as the tracing API).
_LAZY_EXPORTS = {
    "attribute": ".attribution.engine",
    "register_attributor": ".attribution.registry",
    "Attribution": ".attribution.model",
    "Verification": ".attribution.verify.verdicts",
    "verify": ".attribution.verify.counterfactual",
    "MemorySystem": ".systems.base",
    "SystemConfig": ".systems.base",
    "register_system": ".systems.registry",
    "ReplayResult": ".systems.replay",
    "replay": ".systems.replay",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS, globals())


__version__ = "0.1.0"

__all__ = [
    "CANCEL",
    "DELETE",
    "Attribution",
    "CaseVerdict",
    "ErrorType",
    "FormatError",
    "InMemorySink",
    "MemorySystem",
    "MemtraceError",
    "NotFoundError",
    "Patch",
    "ReplayResult",
    "Sink",
    "SystemConfig",
    "Verdict",
    "Verification",
    "Workspace",
    "WorkspaceError",
    "__version__",
    "attribute",
    "current_op",
    "current_run",
    "disable",
    "enable",
    "is_enabled",
    "op",
    "open",
    "propagate",
    "register_attributor",
    "register_system",
    "replay",
    "run",
    "traced",
    "track",
    "verify",
]
