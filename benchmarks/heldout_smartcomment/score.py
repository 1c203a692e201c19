"""Score attribution methods on the held-out smartcomment set through the public CLI only.

    python benchmarks/heldout_smartcomment/score.py                       # flow, last-op, random
    python benchmarks/heldout_smartcomment/score.py --methods flow --json out.json

For every method it runs `memtrace bench memtracebench <set> --method <m> --json ...` once on the whole set
(overall and per-system accuracy) and once per gold error type on a temporary copy whose annotations are
filtered to that type (per-type accuracy). It never imports memtrace: the set stays independent of the code
it measures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TYPES = ("ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError")


def memtrace_exe() -> str:
    local = Path(sys.executable).parent / "memtrace"
    return str(local) if local.exists() else (shutil.which("memtrace") or "memtrace")


def bench(directory: Path, method: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="heldout-score-") as tmp:
        out = Path(tmp) / "result.json"
        proc = subprocess.run(
            [
                memtrace_exe(),
                "bench",
                "memtracebench",
                str(directory),
                "--method",
                method,
                "--json",
                str(out),
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0 or not out.exists():
            raise SystemExit(
                f"memtrace bench failed for {method} on {directory}:\n{proc.stdout}\n{proc.stderr}"
            )
        return json.loads(out.read_text())


def filtered_copy(src: Path, dst: Path, error_type: str) -> int:
    """Copy the set keeping only annotations of one gold type; returns how many were kept."""
    kept = 0
    for path in sorted(src.glob("*/*.json")):
        data = json.loads(path.read_text())
        annotations = [a for a in data["data"].get("annotations", []) if a["final_error_type"] == error_type]
        if not annotations:
            continue
        data["data"]["annotations"] = annotations
        kept += len(annotations)
        target = dst / path.parent.name / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, ensure_ascii=False))
    return kept


def pct(x: float | None) -> str:
    return "   -  " if x is None else f"{100 * x:5.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=HERE / "set")
    parser.add_argument("--methods", nargs="+", default=["flow", "last-op", "random"])
    parser.add_argument("--json", type=Path, help="write all figures here")
    args = parser.parse_args()

    report: dict = {}
    for method in args.methods:
        whole = bench(args.set, method)
        rows = {"all": whole["all"], **{f"system:{k}": v for k, v in whole["splits"].items()}}
        with tempfile.TemporaryDirectory(prefix="heldout-type-") as tmp:
            for kind in TYPES:
                sub = Path(tmp) / kind
                if filtered_copy(args.set, sub, kind):
                    rows[f"type:{kind}"] = bench(sub, method)["all"]
        report[method] = rows

    for method, rows in report.items():
        print(f"\n{method}")
        print(f"  {'slice':28s} {'cases':>5s} {'op acc':>7s} {'type acc':>8s} {'undet.':>7s}")
        for name, s in rows.items():
            print(
                f"  {name:28s} {s['cases']:5d} {pct(s['op_accuracy']):>7s} {pct(s['type_accuracy']):>8s} "
                f"{pct(s['undetermined_rate']):>7s}"
            )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
