"""Plot flow's agreement with each labels set before and after a change, from `bench labels --json`
outputs of the two versions (one file per set in each folder, the same names in both).

    python benchmarks/natural_labels/plot_before_after.py before/ after/ tuned aside fresh --out figure.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def _type_and_op(path: Path) -> tuple[float, int]:
    overall = json.loads(path.read_text())["overall"]
    return overall["type_and_operation"], overall["labels"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("before", type=Path, help="folder of the earlier version's results")
    parser.add_argument("after", type=Path, help="folder of the later version's results")
    parser.add_argument("sets", nargs="+", help="result names, without .json")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    before = [_type_and_op(args.before / f"{name}.json") for name in args.sets]
    after = [_type_and_op(args.after / f"{name}.json") for name in args.sets]
    figure, axes = plt.subplots(figsize=(max(6, 1.1 * len(args.sets)), 4))
    x = range(len(args.sets))
    axes.bar([i - 0.2 for i in x], [share for share, _ in before], 0.4, label="before", color="#9e9e9e")
    axes.bar([i + 0.2 for i in x], [share for share, _ in after], 0.4, label="after", color="#1565c0")
    axes.axhline(0.88, color="#555", linestyle=":", linewidth=1)
    names = [f"{name}\n({count})" for name, (_, count) in zip(args.sets, before, strict=True)]
    axes.set_xticks(list(x), names)
    axes.set_ylim(0, 1)
    axes.set_ylabel("flow agrees with the label (type + operation)")
    axes.legend(loc="lower left")
    figure.tight_layout()
    figure.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
