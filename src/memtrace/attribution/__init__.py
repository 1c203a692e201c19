"""Attribution: for each failed case, the earliest decisive faulty operation and its error type.

Exports load on first use, like the root package's: the command line reads the evidence settings
(`attribution.locator_settings`) to build its options without loading the retrievers and methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .flow import FlowMethod
    from .methods import make_method, method_names, register_attributor
    from .model import Attribution, AttributionMethod, Cost, PathStep

_LAZY_EXPORTS = {
    "FlowMethod": ".flow",
    "make_method": ".methods",
    "method_names": ".methods",
    "register_attributor": ".methods",
    "Attribution": ".model",
    "AttributionMethod": ".model",
    "Cost": ".model",
    "PathStep": ".model",
}


def __getattr__(name: str) -> Any:
    module = _LAZY_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memtrace.attribution' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_EXPORTS))


__all__ = [
    "Attribution",
    "AttributionMethod",
    "Cost",
    "FlowMethod",
    "PathStep",
    "make_method",
    "method_names",
    "register_attributor",
]
