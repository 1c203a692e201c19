"""Plot what `memtrace bench labels --json` wrote: agreement per labels split, and verify's verdicts
for the claims the labels call right and wrong (the verifier says no mostly to the wrong ones).

    python benchmarks/natural_labels/plot_labels.py tuned.json aside.json fresh.json --out figure.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

VERDICTS = ("confirmed", "by_elimination", "refuted", "not_verifiable", "not_verified")
COLOURS = ("#2e7d32", "#9e9e9e", "#c62828", "#f9a825", "#e0e0e0")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("results", type=Path, nargs="+", help="bench labels --json outputs, one per split")
    parser.add_argument("--names", nargs="*", help="a name per result (default: its split)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    results = [json.loads(path.read_text()) for path in args.results]
    names = args.names or [r["split"] for r in results]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    x = range(len(results))
    left.bar([i - 0.2 for i in x], [r["overall"]["type"] for r in results], 0.4, label="type")
    left.bar(
        [i + 0.2 for i in x], [r["overall"]["type_and_operation"] for r in results], 0.4, label="type+op"
    )
    left.axhline(0.9, color="#555", linestyle=":", linewidth=1)
    left.set_xticks(
        list(x), [f"{n}\n({r['overall']['labels']})" for n, r in zip(names, results, strict=True)]
    )
    left.set_ylim(0, 1)
    left.set_title("flow agrees with the hand labels")
    left.legend(loc="lower right")
    rows = []
    for name, result in zip(names, results, strict=True):
        for side in ("right", "wrong"):
            counts = result["verification"][f"claims_labels_call_{side}"]
            rows.append((f"{name}: {side} ({counts['claims']})", counts))
    for index, (_, counts) in enumerate(rows):
        start = 0.0
        for verdict, colour in zip(VERDICTS, COLOURS, strict=True):
            share = counts[verdict] / counts["claims"] if counts["claims"] else 0.0
            right.barh(index, share, left=start, color=colour, label=verdict if index == 0 else None)
            start += share
    right.set_yticks(range(len(rows)), [label for label, _ in rows])
    right.invert_yaxis()
    right.set_xlim(0, 1)
    right.set_title("verify's verdicts, by what the labels call the claim")
    right.legend(loc="lower center", bbox_to_anchor=(0.5, -0.35), ncol=3, fontsize=8)
    figure.tight_layout()
    figure.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
