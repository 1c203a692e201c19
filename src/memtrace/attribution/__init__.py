"""Attribution: for each failed case, the earliest decisive faulty operation and its error type.

Three rooms below the result type (model.py), the method registry (registry.py) and the workspace
loop (engine.py): `evidence/` (what the needed information is and which parts carry it),
`methods/` (flow, agent, all-at-once, baselines) and `verify/` (repair, replay and verdicts).

Exports load on first use, like the root package's: the command line reads the evidence settings
(`attribution.evidence.locator_settings`) to build its options without loading the retrievers and methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports
from ..moved import alias_moved_modules

if TYPE_CHECKING:
    from .methods.flow import FlowMethod
    from .model import Attribution, AttributionMethod, Cost, PathStep
    from .registry import make_method, method_names, register_attributor

_LAZY_EXPORTS = {
    "FlowMethod": ".methods.flow",
    "make_method": ".registry",
    "method_names": ".registry",
    "register_attributor": ".registry",
    "Attribution": ".model",
    "AttributionMethod": ".model",
    "Cost": ".model",
    "PathStep": ".model",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS, globals())

# The flat module paths of the last release keep working for one more, with a DeprecationWarning.
alias_moved_modules(
    __name__,
    __name__,
    {
        old: f"{__name__}.{room}.{old}"
        for room, olds in {
            "methods": (
                "agent",
                "agent_args",
                "agent_tools",
                "all_at_once",
                "baselines",
                "flow",
                "render",
                "roles",
            ),
            "evidence": (
                "anatomy",
                "extraction",
                "locator_settings",
                "losses",
                "model_scorers",
                "roles",
                "support",
            ),
            "verify": ("confirm", "ideal_facts", "ideal_later", "oracle", "verdicts"),
        }.items()
        for old in olds
    },
)


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
