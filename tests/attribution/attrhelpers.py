"""Recordings several attribution test modules share."""

from __future__ import annotations

from pathlib import Path

import memtrace as mt
from memtrace.attribution.engine import attribute
from memtrace.datasets import sample_conversation
from memtrace.systems import run_conversation
from memtrace.systems.registry import system_class


def attributed_mem0_run(path: Path) -> str:
    """Mem0 with top-k 2 over sample conversation 0, attributed by flow: its small retrievals make
    retrieval, deletion and response claims. Returns the run id."""
    mem0 = system_class("mem0")
    run = run_conversation(mem0(mem0.Config(top_k=2)), sample_conversation(0), path)
    with mt.open(path) as ws:
        attribute(ws, "flow")
    return run.run_id
