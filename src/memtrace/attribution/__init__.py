"""Attribution: for each failed case, the earliest decisive faulty operation and its error type."""

from .flow import FlowMethod
from .methods import make_method, method_names, register_attributor
from .model import Attribution, AttributionMethod, Cost, PathStep

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
