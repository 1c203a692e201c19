"""Trace a real `mem0.Memory` or `mem0.AsyncMemory`: `from memtrace.adapters.mem0ai import trace`.

See docs/mem0ai.md.
"""

from ..systems.adapters.mem0ai import Mem0Tracer, SearchRecord, trace, untrace
from ..systems.adapters.mem0ai_parts import mem0_version, pipeline_for

__all__ = ["Mem0Tracer", "SearchRecord", "mem0_version", "pipeline_for", "trace", "untrace"]
