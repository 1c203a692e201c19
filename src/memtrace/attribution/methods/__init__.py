"""The methods that decide: flow, the LLM agent, all-at-once and the baselines, with their prompt renderings.

The names of the last release's `memtrace.attribution.methods` module load from `..registry` on first use.
"""

from ...lazy import lazy_exports

_OLD_MODULE_NAMES = [
    "ENTRY_POINT_GROUP",
    "Factory",
    "STANDARD",
    "Attributor",
    "BUILTIN_METHODS",
    "register_attributor",
    "unregister_attributor",
    "method_names",
    "check_method_name",
    "make_method",
]

__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(_OLD_MODULE_NAMES, "..registry"), globals())
