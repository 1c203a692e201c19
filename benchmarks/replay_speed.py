"""Replaying a one-operation patch against re-running the whole conversation, per system.

For each system: record a conversation (timed: the full run, including indexing its journal into
the workspace), then patch one operation and replay (timed the same way, indexing included):
- a question-stage patch (the answer of a middle question), one replay opening the workspace;
- the same in a batch, the way `memtrace verify` replays: one open workspace, 20 different
  questions patched in turn, the journals indexed at the end, time per replay;
- a construction-stage patch (an operation in the middle of construction, replayed from the
  nearest session snapshot).
The replay answers only the patched case, which is what verification and fault injection need.

    .venv/bin/python benchmarks/replay_speed.py [--dataset locomo:../shared/data/locomo-dev.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import memtrace as mt
from memtrace.datasets import load_dataset
from memtrace.systems import run_conversation
from memtrace.systems.registry import BUILTIN_SYSTEMS as SYSTEMS
from memtrace.systems.registry import system_class
from memtrace.systems.replay import replay

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = f"locomo:{LOCOMO}" if LOCOMO.exists() else "sample"
    parser.add_argument("--dataset", default=default)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    (conversation,) = load_dataset(args.dataset, conversations=1)
    table = Table(
        title=f"Replay vs full re-run on {conversation.id} ({len(conversation.questions)} questions)"
    )
    kinds = {"question": "question patch", "batch": "in a batch", "construction": "construction patch"}
    for column in (
        "system",
        "full run s",
        *(f"{label} {unit}" for label in kinds.values() for unit in ("s", "ratio")),
    ):
        table.add_column(column, justify="left" if column == "system" else "right")
    figures = {}
    for name in SYSTEMS:
        with tempfile.TemporaryDirectory() as tmp:
            full = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                result = run_conversation(system_class(name)(), conversation, tmp)
                mt.open(tmp).close()  # index the run's journal: part of recording it
                full.append(time.perf_counter() - started)
            timings = _replay_timings(Path(tmp), result, args.repeat, args.batch)
            base = statistics.median(full)
            figures[name] = {"full_s": base, **{f"{k}_patch_s": v for k, v in timings.items()}}
            cells = [(f"{timings[k]:.3f}", f"{base / timings[k]:.1f}x") for k in kinds]
            table.add_row(name, f"{base:.3f}", *(cell for pair in cells for cell in pair))
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


def _replay_timings(tmp: Path, result: Any, repeat: int, batch: int) -> dict[str, float]:
    """Median seconds of one replay per kind; journals indexed, as for the full run."""
    ws = mt.open(tmp)
    answers = {}
    for case in ws.cases(result.run_id):
        answers[case.id] = ws.graph(result.run_id).producers(case.prediction_var)[-1]
    ids = [c.id for c in result.cases]
    middle = ids[len(ids) // 2]
    building = ("extraction", "update", "construction")
    construction = [
        o for o in ws.store.ops(result.run_id) if o.category in building and o.name != "load_session"
    ]
    build_op = construction[len(construction) // 2]  # every system builds memory somewhere
    ws.close()

    def answer_patch(case_id: str) -> dict[str, Any]:
        return {answers[case_id].id: {"outputs": {"prediction": "patched"}}}

    timings = {}
    for label, patch in (("question", answer_patch(middle)), ("construction", {build_op.id: {}})):
        spent = []
        for _ in range(repeat):
            started = time.perf_counter()
            replay(tmp, result.run_id, patch, cases=[middle])
            mt.open(tmp).close()
            spent.append(time.perf_counter() - started)
        timings[label] = statistics.median(spent)
    chosen = ids[len(ids) // 4 :][:batch]
    started = time.perf_counter()
    with mt.open(tmp) as ws:
        for case_id in chosen:
            replay(ws, result.run_id, answer_patch(case_id), cases=[case_id])
    mt.open(tmp).close()
    timings["batch"] = (time.perf_counter() - started) / len(chosen)
    return timings


if __name__ == "__main__":
    sys.exit(main())
