"""Benchmarks that compose the layers below: evidence location, MemTraceBench accuracy, injected faults.

Each returns a plain dict and reports progress through a `memtrace.progress.Progress` callback; the
CLI draws the bars and tables (cli/bench_cmd.py).
"""

from .evidence import evidence_recall

__all__ = ["evidence_recall"]
