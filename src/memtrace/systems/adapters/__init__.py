"""Moved to `memtrace.adapters.mem0ai`; this path works for one release, with a warning."""

from ...moved import alias_moved_modules

__getattr__ = alias_moved_modules(
    __name__,
    "memtrace.adapters",
    {
        "mem0ai": "memtrace.adapters.mem0ai.tracer",
        "mem0ai_async": "memtrace.adapters.mem0ai.async_wrappers",
        "mem0ai_parts": "memtrace.adapters.mem0ai.parts",
        "mem0ai_state": "memtrace.adapters.mem0ai.state",
        "mem0ai_steps": "memtrace.adapters.mem0ai.steps",
    },
)
