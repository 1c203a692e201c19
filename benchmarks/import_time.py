"""How long `import memtrace` takes in a fresh interpreter (and what it loads), median of N runs.

Usage: .venv/bin/python benchmarks/import_time.py [--runs 9] [--module memtrace]
Each run is a new process, so nothing is cached in memory; the bytecode cache is warmed first.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

PROBE = (
    "import sys, time\n"
    "t = time.perf_counter()\n"
    "import {module}\n"
    "elapsed = time.perf_counter() - t\n"
    "print(elapsed, len([m for m in sys.modules if m.startswith('memtrace')]), 'numpy' in sys.modules)\n"
)


def measure(module: str) -> tuple[float, int, bool]:
    """Seconds to import `module` in a fresh interpreter, memtrace modules loaded, numpy loaded."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), int(out[1]), out[2] == "True"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--module", default="memtrace")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout
    measure(args.module)  # warm the bytecode cache
    runs = [measure(args.module) for _ in range(args.runs)]
    seconds = sorted(r[0] for r in runs)
    print(f"commit {commit.strip() or '?'}: import {args.module}")
    print(
        f"median {statistics.median(seconds) * 1000:.0f} ms (min {seconds[0] * 1000:.0f}, "
        f"max {seconds[-1] * 1000:.0f}) over {args.runs} runs; "
        f"{runs[0][1]} memtrace modules loaded, numpy loaded: {runs[0][2]}"
    )


if __name__ == "__main__":
    main()
