"""Executors: independent tasks fanned out over local processes or a Ray cluster.

A task records into its own scratch workspace and hands back what it made (bundle.py); the driver
ingests it idempotently, so results never depend on where, or how many times, a task ran.
"""

from __future__ import annotations

from .bundle import RunRecord, ingest_run, pack_replay, pack_run, scratch_workspace
from .pool import run_tasks
from .spec import EXECUTORS, ExecutorSpec, usable_cores
from .stash import Stash, Stashed, fetch
from .tasks import CRASH_ONCE_ENV

__all__ = [
    "CRASH_ONCE_ENV",
    "EXECUTORS",
    "ExecutorSpec",
    "RunRecord",
    "Stash",
    "Stashed",
    "fetch",
    "ingest_run",
    "pack_replay",
    "pack_run",
    "run_tasks",
    "scratch_workspace",
    "usable_cores",
]
