"""What a replay proved about a workspace's stored flow attributions, per error type, as a table and a chart.

Usage: .venv/bin/python benchmarks/natural_failures.py WORKSPACE [--svg FILE]
Run after `memtrace attribute WORKSPACE` and `memtrace verify WORKSPACE`. Each claim counts once, at
its highest level: answer-confirmed (the answer flipped), flow-confirmed (the evidence reached the
answer step; the answer step still failed), by elimination (a ResponseError with its carrying part
named), not verifiable (by its reason), not verified yet.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from memtrace.attribution.model import load_attributions
from memtrace.graph import Workspace
from memtrace.report.svg import stacked_bars
from memtrace.vocabulary import MEMORY_ERROR_TYPES, Verdict

LEVELS = (
    "answer-confirmed",
    "flow-confirmed, answer still wrong",
    "by elimination",
    "not verifiable",
    "not verified",
)


def level_of(verdict: Verdict | None) -> str:
    """The one level a verdict counts at."""
    return {
        Verdict.ANSWER_CONFIRMED: LEVELS[0],
        Verdict.FLOW_CONFIRMED: LEVELS[1],
        Verdict.BY_ELIMINATION: LEVELS[2],
        None: LEVELS[4],
    }.get(verdict, LEVELS[3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--svg", type=Path, default=None, help="also draw the counts as an SVG chart here")
    args = parser.parse_args()
    levels: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: Counter[tuple[str, str]] = Counter()
    with Workspace(args.workspace) as ws:
        for claim in load_attributions(ws.store, method="flow"):
            level = level_of(claim.verified)
            levels[claim.error_type][level] += 1
            if level == LEVELS[3]:
                reasons[(claim.error_type, (claim.verification or {}).get("why") or "?")] += 1
    types = [t for t in MEMORY_ERROR_TYPES if t in levels]
    table = Table(title=f"Flow's claims in {args.workspace}, by what a replay proved")
    for column in ("error type", "claims", *LEVELS):
        table.add_column(column, justify="left" if column == "error type" else "right")
    for kind in types:
        counts = levels[kind]
        table.add_row(kind, str(sum(counts.values())), *(str(counts[level]) for level in LEVELS))
    console = Console()
    console.print(table)
    for (kind, why), count in sorted(reasons.items()):
        console.print(f"not verifiable: {kind} {why}: {count}")
    if args.svg is not None:
        rows = [(kind, dict(levels[kind])) for kind in types]
        args.svg.write_text(
            stacked_bars(rows, "Flow's claims by what a replay proved", label_width=130) + "\n"
        )
        console.print(f"wrote {args.svg}")


if __name__ == "__main__":
    main()
