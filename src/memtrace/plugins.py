"""Plugins by name: what code registers, plus one entry-point group read lazily on first use.

Systems and attribution methods are both found this way; code registrations win over entry points,
and an entry point that would shadow one is ignored with a warning. A fresh worker process knows the
built-ins and entry points but not what code registered: `code_registrations()` lists those for the
driver to send, `restore_registrations()` adds them in the worker.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from .errors import MemtraceError


@dataclass(slots=True, frozen=True)
class Registration:
    """One plugin registered from code: where its registry lives, and what was registered as which name."""

    owner: str  # the module that makes the registry (a worker imports it to have the registry)
    group: str
    kind: str
    name: str
    plugin: Any


#: Every registry made, by entry-point group.
_REGISTRIES: dict[str, PluginRegistry[Any]] = {}


class PluginRegistry[T]:
    """Name -> plugin, in registration order (the built-ins first), with `group`'s entry points."""

    def __init__(
        self, group: str, kind: str, from_entry_point: Callable[[EntryPoint], T], *, owner: str
    ) -> None:
        self.group = group
        self.kind = kind  # "system", "attribution method": the word the errors use
        self.owner = owner  # the module holding this registry
        self._from_entry_point = from_entry_point
        self._entries: dict[str, T] = {}
        self._from_entry_points: set[str] = set()
        self._from_code: set[str] = set()
        self._loaded = False
        _REGISTRIES[group] = self

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
        self._from_code.add(name)

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
        self._from_code.discard(name)

    def from_code(self) -> list[Registration]:
        """What code registered here (not the built-ins, not the entry points), in registration order."""
        return [
            Registration(self.owner, self.group, self.kind, name, plugin)
            for name, plugin in self._entries.items()
            if name in self._from_code
        ]

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


def code_registrations() -> list[Registration]:
    """Every plugin registered from code in this process, over every registry made so far."""
    return [item for registry in _REGISTRIES.values() for item in registry.from_code()]


def restore_registrations(items: list[Registration]) -> None:
    """Register `items` here as they were in the process that listed them (a worker's start)."""
    for item in items:
        if item.group not in _REGISTRIES:
            importlib.import_module(item.owner)
        _REGISTRIES[item.group].add(item.name, item.plugin)
