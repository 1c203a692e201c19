"""Register a test-double plugin for the length of a test (forgotten afterwards), or install one on a path."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memtrace.attribution.registry import method_names, register_attributor, unregister_attributor
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


@contextmanager
def registered_attributor(name: str, factory: Any, **options: Any) -> Iterator[None]:
    register_attributor(name, factory, **options)
    try:
        yield
    finally:
        unregister_attributor(name)
    assert name not in method_names()


def write_distribution(site: Path, group: str, entry_point: str) -> None:
    """An installed distribution, as pip leaves one: a .dist-info folder declaring one entry point."""
    dist = site / "plugin_double-0.1.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-double\nVersion: 0.1\n")
    with open(dist / "entry_points.txt", "a") as handle:
        handle.write(f"[{group}]\n{entry_point}\n")
