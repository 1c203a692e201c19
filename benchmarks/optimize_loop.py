"""The optimisation loop on every system: holdout accuracy of the starting vs the final config.

Runs `memtrace.optimize.optimize` for each system (offline unless the environment configures a
model, which this script never does), one system per worker process, and prints per system the
changes kept, the rounds kept / rolled back and the holdout delta with its paired bootstrap 95%
interval. Goals (issue 6): the final config beats the start on holdout for at least two systems, and
no round keeps a change that lowered validation accuracy.

    .venv/bin/python benchmarks/optimize_loop.py --out /tmp/opt-bench            # defaults as the start
    .venv/bin/python benchmarks/optimize_loop.py --out /tmp/opt-ctl --set min_answer_support=0.7
    .venv/bin/python benchmarks/optimize_loop.py --out DIR --reuse   # summarise `memtrace optimize` runs

With `--reuse`, a system whose workspace DIR/<system> already holds `optimize-history-<system>.json`
(written by `memtrace optimize -w DIR/<system> ...`) is summarised from it instead of being run again.
`--sweep NAME=V1,V2,...` instead scores the defaults with NAME set to each value on the train,
validation and holdout conversations (no loop): how a setting's value fares on each split.

    .venv/bin/python benchmarks/optimize_loop.py --out /tmp/sweep --sweep min_answer_support=0.5,0.6,0.7,0.8
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import code_version, goal_status
from memtrace.cli.run_cmd import parse_overrides
from memtrace.optimize import make_split, optimize, start_config
from memtrace.optimize.evaluate import Evaluator
from memtrace.systems.registry import BUILTIN_SYSTEMS as SYSTEMS
from memtrace.systems.registry import system_class

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"


def run_one(system: str, args: dict[str, Any]) -> dict[str, Any]:
    """One system's optimisation in its own workspace; the history as a dict."""
    workspace = Path(args["out"]) / system
    saved = workspace / f"optimize-history-{system}.json"
    if args["reuse"] and saved.exists():
        return json.loads(saved.read_text())
    result = optimize(
        system,
        args["dataset"],
        workspace,
        train=args["train"],
        validation=args["validation"],
        holdout=args["holdout"],
        rounds=args["rounds"],
        candidates=args["candidates"],
        start=args["start"],
    )
    return result.to_dict()


def sweep_one(system: str, args: dict[str, Any]) -> dict[str, Any]:
    """Accuracy of the defaults with the swept setting at each value, per split (scratch runs only)."""
    name, _, values = args["sweep"].partition("=")
    split = make_split(args["dataset"], args["train"], args["validation"], args["holdout"])
    evaluator = Evaluator(
        system_class(system), Path(args["out"]) / f"sweep-{system}", dataset=args["dataset"]
    )
    rows = {}
    for raw in values.split(","):
        config = start_config(system, {**args["start"], **parse_overrides([f"{name}={raw}"])})
        rows[raw] = {
            part: evaluator.score(config, getattr(split, part), label=part).accuracy
            for part in ("train", "validation", "holdout")
        }
    evaluator.close()
    return {"system": system, "setting": name, "rows": rows}


def print_sweep(results: list[dict[str, Any]], dataset: str) -> None:
    console = Console()
    table = Table(title=f"{results[0]['setting']} on {dataset} (train / validation / holdout accuracy)")
    values = list(results[0]["rows"])
    table.add_column("system")
    for value in values:
        table.add_column(value, justify="right")
    for result in results:
        cells = [
            " / ".join(f"{result['rows'][v][p]:.4f}" for p in ("train", "validation", "holdout"))
            for v in values
        ]
        table.add_row(result["system"], *cells)
    console.print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=f"locomo:{LOCOMO}" if LOCOMO.exists() else "sample")
    parser.add_argument("--out", type=Path, required=True, help="one workspace per system goes here")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--train", type=int, default=4)
    parser.add_argument("--validation", type=int, default=2)
    parser.add_argument("--holdout", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--set", action="append", default=[], help="start override KEY=VALUE")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--reuse", action="store_true", help="summarise saved histories in OUT/<system>")
    parser.add_argument("--sweep", default=None, help="NAME=V1,V2,...: score each value, no loop")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    options = {**vars(args), "out": str(args.out), "start": parse_overrides(args.set)}
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if args.sweep:
        with ProcessPoolExecutor(max(1, args.jobs)) as pool:
            sweeps = list(pool.map(sweep_one, systems, [options] * len(systems)))
        print_sweep(sweeps, args.dataset)
        if args.json:
            args.json.write_text(json.dumps(sweeps, indent=2))
        return 0
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        histories = list(pool.map(run_one, systems, [options] * len(systems)))
    console = Console()
    first = histories[0]
    start = (
        first["start"]
        if isinstance(first["start"], str)
        else f"defaults with {first['start']['defaults with']}"
    )
    sizes = "/".join(str(len(first["split"][part])) for part in ("train", "validation", "holdout"))
    table = Table(
        title=f"Optimisation loop on {first['dataset']} ({sizes}, {first['settings']['rounds']} rounds, "
        f"start: {start}; code {code_version()})",
        title_justify="left",
    )
    for column in (
        "system",
        "kept / rolled back",
        "changes",
        "holdout start",
        "final",
        "delta",
        "95% CI",
        "s",
    ):
        table.add_column(column, justify="left" if column in ("system", "changes") else "right")
    improved, significant, lowered = 0, 0, 0
    for h in histories:
        hold = h["holdout"]
        kept = sum(r["kept"] for r in h["rounds"])
        lowered += sum(r["kept"] and r["validation_after"] <= r["validation_before"] for r in h["rounds"])
        improved += hold["final_accuracy"] > hold["start_accuracy"]
        significant += hold["low"] > 0
        changes = ", ".join(f"{k} {old} -> {new}" for k, (old, new) in h["changes"].items()) or "none"
        table.add_row(
            h["system"],
            f"{kept} / {len(h['rounds']) - kept}",
            changes,
            f"{hold['start_accuracy']:.4f}",
            f"{hold['final_accuracy']:.4f}",
            f"{hold['delta']:+.4f}",
            f"[{hold['low']:+.4f}, {hold['high']:+.4f}]",
            f"{h['seconds']:.0f}",
        )
    console.print(table)
    console.print(
        f"holdout improved for {improved} of {len(histories)} systems: {goal_status(improved >= 2)}"
    )
    console.print(f"rounds that kept a change lowering validation: {lowered}: {goal_status(lowered == 0)}")
    if args.json:
        args.json.write_text(json.dumps({"code": code_version(), "histories": histories}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
