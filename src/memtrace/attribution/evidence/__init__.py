"""What a failed question needed and who carries it: evidence location, the carrying rule, where it was lost.

The names of the last release's `memtrace.attribution.evidence` module load from `locate.py` on first use.
"""

from ...lazy import lazy_exports

_OLD_MODULE_NAMES = [
    "Method",
    "HYBRID_CANDIDATES",
    "is_message_category",
    "message_versions",
    "message_text",
    "said_when",
    "dated_message",
    "Evidence",
    "build_query",
    "EvidenceLocator",
    "locator_for",
    "run_speakers",
    "locate_evidence",
]

__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(_OLD_MODULE_NAMES, ".locate"), globals())
