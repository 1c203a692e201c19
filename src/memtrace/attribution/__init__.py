"""Attribution: for each failed case, the earliest decisive faulty operation and its error type.

Exports load on first use, like the root package's: the command line reads the evidence settings
(`attribution.locator_settings`) to build its options without loading the retrievers and methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

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


__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS, globals())


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
