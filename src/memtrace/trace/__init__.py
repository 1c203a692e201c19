"""Recording memory pipelines as graphs: cheap, thread- and asyncio-safe, a no-op when disabled."""

from .api import (
    current_op,
    current_run,
    disable,
    enable,
    is_enabled,
    muted,
    op,
    propagate,
    run,
    traced,
    track,
)
from .cases import CaseHandle
from .in_memory import InMemorySink
from .memory import MemoryUnit
from .patch import MemoryAction, MemoryChange, Patch, PatchPolicy
from .recorder import Recorder
from .scope import NOOP_OP, NoopOp, OpScope
from .sink import RowSink, Sink

__all__ = [
    "NOOP_OP",
    "CaseHandle",
    "InMemorySink",
    "MemoryAction",
    "MemoryChange",
    "MemoryUnit",
    "NoopOp",
    "OpScope",
    "Patch",
    "PatchPolicy",
    "Recorder",
    "RowSink",
    "Sink",
    "current_op",
    "current_run",
    "disable",
    "enable",
    "is_enabled",
    "muted",
    "op",
    "propagate",
    "run",
    "traced",
    "track",
]
