"""Old module paths that keep working for one release after a move, with a `DeprecationWarning`.

A package that moved leaves a small `__init__.py` at its old path that calls `alias_moved_modules`:
importing `old.name` (or an attribute of the old package) then imports the new module and hands back
that same module object, so patches and isinstance checks see one module, not a copy.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any


def _warn(old: str, new: str) -> None:
    warnings.warn(
        f"{old} moved to {new}; the old path will be removed in the next release",
        DeprecationWarning,
        stacklevel=3,
    )


class _AliasLoader(importlib.abc.Loader):
    """Loads an old module name as the already importable new module."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        _warn(spec.name, self.new)
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        """The new module ran when it was imported; nothing more to do."""


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds the submodules of an old package path among their new homes."""

    def __init__(self, renames: dict[str, str]) -> None:
        self.renames = renames

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = self.renames.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def alias_moved_modules(old_package: str, new_package: str, submodules: dict[str, str]) -> Any:
    """Make `old_package.X` import `submodules[X]`; returns the old package's `__getattr__`, which
    reads a missing attribute from `new_package` (so `from old_package import name` keeps working)."""
    renames = {f"{old_package}.{name}": new for name, new in submodules.items()}
    if not any(isinstance(f, _AliasFinder) and f.renames == renames for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder(renames))

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        _warn(f"{old_package}.{name}", f"{new_package}.{name}")
        return getattr(importlib.import_module(new_package), name)

    return __getattr__
