"""Replaying a one-operation patch against re-running the whole conversation, per system.

For each system: record a conversation (timed: the full run), then patch one operation and replay
(timed): a question-stage patch (the answer of a middle question) and a construction-stage patch
(an operation in the middle of construction, replayed from the nearest session snapshot). The
replay answers only the patched case, which is what verification and fault injection need.

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

from rich.console import Console
from rich.table import Table

import memtrace as mt
from memtrace.datasets import load_dataset
from memtrace.systems import run_conversation
from memtrace.systems.registry import SYSTEMS, system_class
from memtrace.systems.replay import replay

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = f"locomo:{LOCOMO}" if LOCOMO.exists() else "sample"
    parser.add_argument("--dataset", default=default)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    (conversation,) = load_dataset(args.dataset, conversations=1)
    table = Table(
        title=f"Replay vs full re-run on {conversation.id} ({len(conversation.questions)} questions)"
    )
    for column in ("system", "full run s", "question patch s", "ratio", "construction patch s", "ratio"):
        table.add_column(column, justify="left" if column == "system" else "right")
    figures = {}
    for name in SYSTEMS:
        with tempfile.TemporaryDirectory() as tmp:
            full = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                result = run_conversation(system_class(name)(), conversation, tmp)
                full.append(time.perf_counter() - started)
            ws = mt.open(tmp)
            middle = result.cases[len(result.cases) // 2]
            case = next(c for c in ws.cases(result.run_id) if c.id == middle.id)
            answer = ws.graph(result.run_id).producers(case.prediction_var)[-1]
            construction = [o for o in ws.store.ops(result.run_id) if o.category in ("extraction", "update")]
            build_op = construction[len(construction) // 2] if construction else answer
            timings = {}
            for label, op in (("question", answer), ("construction", build_op)):
                patch = {op.id: {"outputs": {"prediction": "patched"}}} if op is answer else {op.id: {}}
                spent = []
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    replay(tmp, result.run_id, patch, cases=[case.id])
                    spent.append(time.perf_counter() - started)
                timings[label] = statistics.median(spent)
            base = statistics.median(full)
            figures[name] = {"full_s": base, **{f"{k}_patch_s": v for k, v in timings.items()}}
            table.add_row(
                name,
                f"{base:.3f}",
                f"{timings['question']:.3f}",
                f"{base / timings['question']:.1f}x",
                f"{timings['construction']:.3f}",
                f"{base / timings['construction']:.1f}x",
            )
    Console().print(table)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
