"""Recording memory pipelines as graphs: cheap, thread- and asyncio-safe, a no-op when disabled."""

from .api import current_op, current_run, disable, enable, is_enabled, op, propagate, run, traced, track
from .cases import CaseHandle
from .memory import MemoryUnit
from .recorder import Recorder
from .scope import NOOP_OP, NoopOp, OpScope

__all__ = [
    "NOOP_OP",
    "CaseHandle",
    "MemoryUnit",
    "NoopOp",
    "OpScope",
    "Recorder",
    "current_op",
    "current_run",
    "disable",
    "enable",
    "is_enabled",
    "op",
    "propagate",
    "run",
    "traced",
    "track",
]
