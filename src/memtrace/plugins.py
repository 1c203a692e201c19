"""Plugins by name: what code registers, plus one entry-point group read lazily on first use.

Systems and attribution methods are both found this way; code registrations win over entry points,
and an entry point that would shadow one is ignored with a warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points

from .errors import MemtraceError


class PluginRegistry[T]:
    """Name -> plugin, in registration order (the built-ins first), with `group`'s entry points."""

    def __init__(self, group: str, kind: str, from_entry_point: Callable[[EntryPoint], T]) -> None:
        self.group = group
        self.kind = kind  # "system", "attribution method": the word the errors use
        self._from_entry_point = from_entry_point
        self._entries: dict[str, T] = {}
        self._from_entry_points: set[str] = set()
        self._loaded = False

    def names(self) -> list[str]:
        self._load()
        return list(self._entries)

    def get(self, name: str) -> T | None:
        self._load()
        return self._entries.get(name)

    def add(self, name: str, plugin: T) -> None:
        """Register `plugin` as `name` from code (callers check first whether a taken name may go)."""
        self._load()
        self._entries[name] = plugin
        self._from_entry_points.discard(name)

    def loaded(self, name: str, plugin: T) -> None:
        """Put what a lazy `module:attr` entry resolved to in its place, keeping where it came from."""
        self._entries[name] = plugin

    def add_builtin(self, name: str, plugin: T) -> None:
        """Register a plugin memtrace ships, without reading the entry points yet."""
        self._entries[name] = plugin

    def remove(self, name: str) -> None:
        """Forget `name` (tests register throwaway plugins); an unknown name raises."""
        self._load()
        if name not in self._entries:
            raise MemtraceError(f"unknown {self.kind} {name!r}")
        del self._entries[name]
        self._from_entry_points.discard(name)

    def reload(self) -> None:
        """Forget the entry points added and read the group again (after installing a package)."""
        for name in self._from_entry_points:
            self._entries.pop(name, None)
        self._from_entry_points.clear()
        self._loaded = False
        self._load()

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for point in entry_points(group=self.group):
            if point.name in self._entries:
                if point.name not in self._from_entry_points:
                    warnings.warn(
                        f"entry point {point.name} = {point.value} ({self.group}) ignored: "
                        f"{self.kind} {point.name!r} is already registered",
                        stacklevel=4,
                    )
                continue
            self._entries[point.name] = self._from_entry_point(point)
            self._from_entry_points.add(point.name)
