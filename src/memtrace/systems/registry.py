"""The memory systems by name, imported on demand so one broken system does not break the rest."""

from __future__ import annotations

import importlib

from ..graph import MemtraceError
from .base import MemorySystem

SYSTEMS = {
    "long_context": "memtrace.systems.long_context:LongContext",
    "rag": "memtrace.systems.rag:RAGSystem",
    "mem0": "memtrace.systems.mem0:Mem0System",
    "evermemos": "memtrace.systems.evermemos:EverMemOSSystem",
}
#: Systems wrapping another package (an extra to install, a model endpoint to give): run by name,
#: never part of `--system all`, which must work offline on a bare install.
EXTERNAL_SYSTEMS = {
    "mem0ai": "memtrace.systems.mem0ai_system:Mem0AISystem",
}


def system_class(name: str) -> type[MemorySystem]:
    where = SYSTEMS.get(name) or EXTERNAL_SYSTEMS.get(name)
    if where is None:
        known = ", ".join([*SYSTEMS, *EXTERNAL_SYSTEMS])
        raise MemtraceError(f"unknown system {name!r} (choose {known} or all)")
    module, _, attr = where.partition(":")
    return getattr(importlib.import_module(module), attr)
