"""memtrace: record memory pipelines as executable graphs and find out why they answered wrong.

import memtrace as mt
with mt.run("ws/", name="conv-26", system="mem0") as run:
    with mt.op("extract_facts", category="extraction") as op:
        op.input("message", text, category="message")
        op.output("extracted_facts", facts)
ws = mt.open("ws/")
results = mt.attribute(ws)                  # loaded on first use, see __getattr__
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
from .trace.in_memory import InMemorySink
from .trace.patch import CANCEL, DELETE, Patch
from .trace.sink import Sink

if TYPE_CHECKING:
    from .attribution.engine import attribute
    from .attribution.methods import register_attributor
    from .attribution.model import Attribution
    from .attribution.verdicts import Verification
    from .attribution.verify import verify
    from .systems.base import MemorySystem, SystemConfig
    from .systems.registry import register_system
    from .systems.replay import ReplayResult, replay

__version__ = "0.1.0"

#: Public names that live in upper layers. The systems import this package while they load, so these
#: are imported on first access (PEP 562) rather than here, which would be an import cycle.
LAZY_EXPORTS: dict[str, str] = {
    "attribute": "memtrace.attribution.engine",
    "Attribution": "memtrace.attribution.model",
    "verify": "memtrace.attribution.verify",
    "Verification": "memtrace.attribution.verdicts",
    "replay": "memtrace.systems.replay",
    "ReplayResult": "memtrace.systems.replay",
    "MemorySystem": "memtrace.systems.base",
    "SystemConfig": "memtrace.systems.base",
    "register_system": "memtrace.systems.registry",
    "register_attributor": "memtrace.attribution.methods",
}


def __getattr__(name: str) -> Any:
    module = LAZY_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memtrace' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *LAZY_EXPORTS})


__all__ = [
    "CANCEL",
    "DELETE",
    "Attribution",
    "FormatError",
    "InMemorySink",
    "MemorySystem",
    "MemtraceError",
    "NotFoundError",
    "Patch",
    "ReplayResult",
    "Sink",
    "SystemConfig",
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
