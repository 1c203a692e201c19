"""How many cores this process may use: sized once for worker pools and SQLite's sorter threads."""

from __future__ import annotations

import os
import sys


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask, not the machine's count)."""
    if sys.version_info >= (3, 13):
        count = os.process_cpu_count()
    elif hasattr(os, "sched_getaffinity"):
        count = len(os.sched_getaffinity(0))
    else:
        count = os.cpu_count()
    return max(1, count or 1)
