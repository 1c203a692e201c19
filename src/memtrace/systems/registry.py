"""The memory systems by name, imported on demand so one broken system does not break the rest."""

from __future__ import annotations

import importlib

from ..errors import MemtraceError
from .base import MemorySystem

SYSTEMS = {
    "long_context": "memtrace.systems.long_context:LongContext",
    "rag": "memtrace.systems.rag:RAGSystem",
    "mem0": "memtrace.systems.mem0:Mem0System",
    "evermemos": "memtrace.systems.evermemos:EverMemOSSystem",
}


def system_class(name: str) -> type[MemorySystem]:
    if name not in SYSTEMS:
        raise MemtraceError(f"unknown system {name!r} (choose {', '.join(SYSTEMS)} or all)")
    module, _, attr = SYSTEMS[name].partition(":")
    return getattr(importlib.import_module(module), attr)
