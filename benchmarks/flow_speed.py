"""Flow attribution time per failed case on the largest locomo-dev run of each system.

Records every system offline over ../shared/data/locomo-dev.json (or reuses `--workspace`), picks
each system's run with the most operations, loads it once as an in-memory graph, and times the
flow method on each of its failed cases.

    .venv/bin/python benchmarks/flow_speed.py [--workspace /tmp/flow-ws] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

import memtrace as mt
from memtrace.attribution import FlowMethod
from memtrace.cli.run_cmd import run_systems
from memtrace.systems.registry import BUILTIN_SYSTEMS as SYSTEMS

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
GOAL_MS = 50.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", type=Path, default=Path("/tmp/memtrace-flow-speed"))
    parser.add_argument("--dataset", default=f"locomo:{LOCOMO}")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    console = Console()
    if not (args.workspace / "memtrace.db").exists():
        if args.dataset.startswith("locomo:") and not Path(args.dataset[7:]).exists():
            console.print(f"needs {args.dataset[7:]}")
            return 1
        run_systems(
            list(SYSTEMS),
            args.dataset,
            args.workspace,
            conversations=None,
            questions=None,
            llm=None,
            console=console,
        )
    ws = mt.open(args.workspace)
    method = FlowMethod()
    table = Table(title="Flow attribution time per failed case (largest run of each system)")
    for column in ("system", "run", "ops", "versions", "load ms", "cases", "median ms", "p95 ms", "goal"):
        table.add_column(column, justify="left" if column in ("system", "run") else "right")
    figures: dict[str, dict[str, float | int | str]] = {}
    for system in SYSTEMS:
        runs = [r for r in ws.runs() if r.system == system]
        if not runs:
            continue
        largest = max(runs, key=lambda r: ws.store.count("ops", r.id))
        started = time.perf_counter()
        graph = ws.view(largest.id)
        load_ms = (time.perf_counter() - started) * 1000
        times = []
        for case in (c for c in ws.cases(largest.id) if c.failed):
            started = time.perf_counter()
            method.attribute(graph, case)
            times.append((time.perf_counter() - started) * 1000)
        median = statistics.median(times)
        p95 = sorted(times)[int(0.95 * (len(times) - 1))]
        figures[system] = {
            "run": largest.name,
            "ops": len(graph.ops),
            "versions": len(graph.vars),
            "load_ms": load_ms,
            "cases": len(times),
            "median_ms": median,
            "p95_ms": p95,
        }
        table.add_row(
            system,
            largest.name,
            f"{len(graph.ops):,}",
            f"{len(graph.vars):,}",
            f"{load_ms:.0f}",
            str(len(times)),
            f"{median:.2f}",
            f"{p95:.2f}",
            "met" if median < GOAL_MS else "not met",
        )
    console.print(table)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
