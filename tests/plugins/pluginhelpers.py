"""Register a test-double plugin for the length of a test, and forget it afterwards whatever happens."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memtrace.systems import MemorySystem
from memtrace.systems.registry import register_system, system_names, unregister_system


@contextmanager
def registered[S: type[MemorySystem]](cls: S) -> Iterator[S]:
    register_system(cls)
    try:
        yield cls
    finally:
        unregister_system(cls.name)
    assert cls.name not in system_names()
