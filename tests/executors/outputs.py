"""What the benchmarks and the optimiser leave behind, wall time left out: to compare executors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from store_dump import store_rows
from typer.testing import CliRunner

from memtrace.cli.app import app

#: Keys holding wall time in the files the commands write.
CLOCK = {"created_at", "avg_seconds", "seconds"}


def cli(*args: str | Path | int) -> None:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output


def timeless(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in CLOCK}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def faults(root: Path, *flags: str | int) -> dict[str, Any]:
    """`bench faults` on two systems, with the labelled replays kept and written as MemTraceBench."""
    cli(
        "bench", "faults", root / "ws", "--out", root / "out", "--system", "long_context,rag",
        "--per-type", "2", "--method", "flow,last-op", "--memtracebench", "--keep-replays", *flags,
    )  # fmt: skip
    layout = root / "out" / "memtracebench"
    return {
        "json": (root / "out" / "faults.json").read_text(),
        "graphs": {
            str(path.relative_to(layout)): timeless(json.loads(path.read_text()))
            for path in sorted(layout.rglob("*.json"))
        },
        "store": store_rows(root / "ws"),
    }


def scored(layout: Path, root: Path, *flags: str | int) -> dict[str, Any]:
    """`bench memtracebench` on a layout: its result and the attributions it stored."""
    cli("bench", "memtracebench", layout, root / "ws", "--json", root / "r.json", *flags)
    return {"json": timeless(json.loads((root / "r.json").read_text())), "store": store_rows(root / "ws")}


def optimized(workspace: Path, *flags: str | int) -> dict[str, Any]:
    """long_context from a too-low answer threshold: round 1 evaluates four proposals and keeps one."""
    cli(
        "optimize", workspace, "--system", "long_context", "--train", 2, "--validation", 2,
        "--holdout", 1, "--rounds", 1, "--set", "min_answer_support=0.3", "--json", workspace / "h.json",
        *flags,
    )  # fmt: skip
    history = timeless(json.loads((workspace / "h.json").read_text()))
    return {"history": history, "store": store_rows(workspace)}
