"""Package exports imported on first use (PEP 562), so importing a package stays cheap.

`memtrace` and `memtrace.attribution` both name exports that live in heavier modules: recording
loads no attributor, the command line no retriever, until one is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, exports: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__` for `exports` (name -> module relative to `package`):
    the first lookup imports the module and stores the value in `namespace`, so later ones skip this."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
