"""Wall time of `memtrace run` and `attribute` on locomo-dev with --workers 1 and 2, and their ratio.

Each command runs as the CLI runs it (a subprocess), into a fresh workspace per worker count; the
stores are compared too (the same rows, clock columns aside). `verify` has no --workers yet.

    .venv/bin/python benchmarks/parallel.py [--dataset locomo:../shared/data/locomo-dev.json] [--system all]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "executors"))

from _common import code_version

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo-dev.json"


def timed(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run([str(Path(sys.executable).parent / "memtrace"), *args], check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default=f"locomo:{DEFAULT}")
    parser.add_argument("--system", default="all")
    parser.add_argument("--workers", default="1,2")
    options = parser.parse_args()
    path = Path(options.dataset.partition(":")[2] or "")
    if options.dataset.startswith("locomo:") and not path.exists():
        print(f"skipped: {path} is absent (the shared locomo-dev file)")
        return
    from store_dump import store_rows

    counts = [int(n) for n in options.workers.split(",")]
    times: dict[int, dict[str, float]] = {}
    stores = {}
    with tempfile.TemporaryDirectory() as scratch:
        for workers in counts:
            ws = str(Path(scratch) / f"w{workers}")
            flag = ["--workers", str(workers)]
            times[workers] = {
                "run": timed("run", ws, "--system", options.system, "--dataset", options.dataset, *flag),
                "attribute": timed("attribute", ws, *flag),
            }
            stores[workers] = store_rows(Path(ws))
    print(f"memtrace {code_version()}, {options.dataset}, --system {options.system}, {os.cpu_count()} cores")
    base = counts[0]
    for stage in ("run", "attribute"):
        cells = ", ".join(
            f"{n} workers {times[n][stage]:.1f} s ({times[n][stage] / times[base][stage]:.2f}x)"
            for n in counts
        )
        print(f"{stage}: {cells}")
    same = all(stores[n] == stores[base] for n in counts)
    print(f"stores identical across worker counts: {same}")


if __name__ == "__main__":
    main()
