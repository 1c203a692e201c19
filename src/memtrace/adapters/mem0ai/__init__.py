"""Trace a real `mem0.Memory` or `mem0.AsyncMemory`: `from memtrace.adapters.mem0ai import trace`.

See docs/mem0ai.md. The tracer (tracer.py) wraps the library's methods; parts.py, state.py and
steps.py read what the library did in each step; async_wrappers.py does the same for AsyncMemory.
"""

from .parts import found_memories, mem0_version, pipeline_for
from .tracer import Mem0Tracer, SearchRecord, trace, untrace

__all__ = [
    "Mem0Tracer",
    "SearchRecord",
    "found_memories",
    "mem0_version",
    "pipeline_for",
    "trace",
    "untrace",
]
