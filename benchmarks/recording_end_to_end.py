"""Recording end to end: record plus indexing per operation against OpenTelemetry, and a 1M-version open.

The first figure is tracing_overhead.py's pipeline step recorded by memtrace (run open, recording,
close) plus the indexing its journal costs at the next `memtrace.open()`, against the OpenTelemetry
SDK's span per step into an in-memory exporter, both in this process, net of the bare pipeline;
medians of `--repeat` runs. The second records graph_scale.py's synthetic pipeline to `--versions`
variable versions and times the first open (which indexes the journal) plus loading the run, then
the first memory-state query apart (it builds the memory checkpoints the open no longer builds).

    .venv/bin/python benchmarks/recording_end_to_end.py [--ops 10000] [--versions 1000000] [--clock cpu]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import memtrace

sys.path.insert(0, str(Path(__file__).resolve().parent))
import graph_scale
import tracing_overhead
from _common import code_version

GOAL_VS_OTEL = 0.5
GOAL_OPEN_S = 10.0


def met(ok: bool) -> str:
    return "met" if ok else "not met"


def per_op(fn: Any, messages: list[str], repeat: int) -> dict[str, float]:
    """Median per-op microseconds of each phase of a tracing_overhead variant."""
    phases = tracing_overhead.measure(fn, messages, repeat)
    return {key: value / len(messages) * 1e6 for key, value in phases.items()}


def open_million(versions: int, seed: int, clock: Any) -> dict[str, float]:
    """Record `versions` versions, then time the open that indexes them (and reading the run back)."""
    workspace = Path(tempfile.mkdtemp(prefix="memtrace-e2e-"))
    try:
        t0 = clock()
        with memtrace.run(workspace, name=graph_scale.RUN_NAME, system="synthetic-mem0") as run:
            graph_scale.pipeline(run, versions, seed, lambda _n: None)
        record_s = clock() - t0
        t0 = clock()
        with memtrace.open(workspace) as ws:
            graph = ws.graph(graph_scale.RUN_NAME)
            stored = ws.store.count("vars", graph.run.id)
            open_s = clock() - t0
            t0 = clock()
            graph.memory_state_at()  # builds the memory checkpoints where the open defers them
            first_query_s = clock() - t0
        return {
            "versions": stored,
            "record_s": record_s,
            "open_s": open_s,
            "first_memory_query_s": first_query_s,
        }
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000, help="operations per run (default 10000)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per variant; the median (default 5)")
    parser.add_argument("--versions", type=int, default=1_000_000, help="versions for the open (0: skip)")
    parser.add_argument("--seed", type=int, default=11, help="random seed (default 11)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall or process CPU time")
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    tracing_overhead.clock = clock

    messages = tracing_overhead.make_messages(args.ops, args.seed)
    for fn in (tracing_overhead.run_bare, tracing_overhead.run_memtrace, tracing_overhead.run_otel):
        tracing_overhead.measure(fn, messages[:200], 1)  # warm-up: imports, first SQLite file
    bare = statistics.median(
        per_op(tracing_overhead.run_bare, messages, 1)["total"] for _ in range(args.repeat * 3)
    )
    mt = per_op(tracing_overhead.run_memtrace, messages, args.repeat)
    otel = per_op(tracing_overhead.run_otel, messages, args.repeat)
    record, ingest, ot = mt["total"] - bare, mt["ingest"], otel["total"] - bare
    ratio = (record + ingest) / ot
    figures: dict[str, Any] = {
        "memtrace_version": memtrace.__version__,
        "code_version": code_version(),
        "python": platform.python_version(),
        "clock": args.clock,
        "ops": args.ops,
        "repeat": args.repeat,
        "bare_us_per_op": bare,
        "record_us_per_op": record,
        "indexing_us_per_op": ingest,
        "otel_us_per_op": ot,
        "end_to_end_vs_otel": ratio,
    }
    print(
        f"recording end to end ({figures['code_version']}, {args.ops:,} ops, median of {args.repeat},"
        f" {args.clock} clock), us/op net of the bare pipeline ({bare:.2f}):"
    )
    print(f"  memtrace record (open + record + close)  {record:8.2f}")
    print(f"  memtrace indexing at the next open        {ingest:8.2f}")
    print(f"  memtrace end to end                       {record + ingest:8.2f}")
    print(f"  OpenTelemetry SDK, in-memory exporter     {ot:8.2f}")
    print(f"  end to end / OpenTelemetry: {ratio:.2f}x (goal {GOAL_VS_OTEL}x: {met(ratio <= GOAL_VS_OTEL)})")
    if args.versions:
        opened = open_million(args.versions, args.seed, clock)
        figures["open"] = opened
        print(
            f"  {opened['versions']:,} versions: recorded in {opened['record_s']:.1f} s, first open"
            f" (indexing) {opened['open_s']:.1f} s (goal <= {GOAL_OPEN_S} s:"
            f" {met(opened['open_s'] <= GOAL_OPEN_S)}), then the first memory-state query"
            f" {opened['first_memory_query_s']:.1f} s"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
