"""Verification: repair the blamed operation, replay, and conclude what the replay proved (verdicts).

The last release's `memtrace.attribution.verify` names load from `counterfactual.py` on first use.
"""

from ...lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__, dict.fromkeys(("build_repair", "verify", "verify_all"), ".counterfactual"), globals()
)
