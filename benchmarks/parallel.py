"""Wall time of `memtrace run`, `attribute` and `verify` with --workers 1, --workers 2 and Ray (2 CPUs).

Each command runs as the CLI runs it (a subprocess), into a fresh workspace per executor; the stores
are compared too (the same rows, clock columns aside). Beside each wall time: the CPU seconds of the
command's process tree (driver and local workers; Ray's workers belong to the cluster, so not for
Ray) and the load average when the stage ended, since the machine may be shared. Ray runs on a
local cluster of 2 CPUs this script starts (`ray.init(num_cpus=2)`), reached with --ray-address.

    PYTHONPATH=src .venv/bin/python benchmarks/parallel.py [--dataset locomo:../shared/data/locomo-dev.json]
        [--system all] [--executors 1,2,ray] [--stages run,attribute,verify]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "executors"))

from _common import code_version

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo-dev.json"
STAGES = ("run", "attribute", "verify")
_TICK = os.sysconf("SC_CLK_TCK")


def _tree_cpu(root: int, seen: dict[int, float]) -> None:
    """Add the CPU seconds of `root` and its descendants now to `seen` (the latest reading per pid)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime
    tree = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    for pid in tree & times.keys():
        seen[pid] = max(seen.get(pid, 0.0), times[pid])


def timed(*args: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process tree, sampled every half second) of one command."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "memtrace.cli.app", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    seen: dict[int, float] = {}
    while process.poll() is None:
        _tree_cpu(process.pid, seen)
        time.sleep(0.5)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"memtrace {' '.join(args)} failed:\n{process.stderr.read().decode()[-2000:]}")
    return wall, sum(seen.values())


def digest(rows: dict[str, list[tuple]]) -> str:
    """One hash of a store's rows (three locomo-dev stores with their replays do not fit in memory)."""
    hashed = hashlib.sha256()
    for table, table_rows in rows.items():
        hashed.update(table.encode())
        for row in table_rows:
            hashed.update(repr(row).encode())
    return hashed.hexdigest()


@contextmanager
def ray_cluster(wanted: bool) -> Iterator[str | None]:
    """A local Ray cluster with 2 CPUs for the commands to join (None when Ray is not asked for)."""
    if not wanted:
        yield None
        return
    import ray

    context = ray.init(num_cpus=2, include_dashboard=False)
    try:
        yield context.address_info["gcs_address"]
    finally:
        ray.shutdown()


def measure(
    name: str, workspace: Path, stages: list[str], address: str | None, options: argparse.Namespace
) -> dict[str, tuple[float, float, float]]:
    """(wall s, CPU s, load average at the end) of each stage for one executor, in a fresh workspace."""
    ws = str(workspace)
    flags = ["--executor", "ray", "--ray-address", str(address)] if name == "ray" else ["--workers", name]
    commands = {
        "run": ["run", ws, "--system", options.system, "--dataset", options.dataset],
        "attribute": ["attribute", ws],
        "verify": ["verify", ws],
    }
    times = {}
    for stage in stages:
        wall, cpu = timed(*commands[stage], *flags)
        load = os.getloadavg()[0]
        times[stage] = (wall, cpu, load)
        print(f"{name:>4} {stage:<9} {wall:7.1f} s wall, {cpu:7.1f} CPU s, load {load:.1f}", flush=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default=f"locomo:{DEFAULT}")
    parser.add_argument("--system", default="all")
    parser.add_argument("--executors", default="1,2,ray", help="worker counts and/or ray, comma separated")
    parser.add_argument("--stages", default=",".join(STAGES))
    options = parser.parse_args()
    path = Path(options.dataset.partition(":")[2] or "")
    if options.dataset.startswith("locomo:") and not path.exists():
        print(f"skipped: {path} is absent (the shared locomo-dev file)")
        return
    from store_dump import store_rows

    measured = code_version()  # before the commands run: the code they import
    executors = options.executors.split(",")
    stages = [s for s in STAGES if s in options.stages.split(",")]
    times: dict[str, dict[str, tuple[float, float, float]]] = {}
    stores = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in executors:
            with ray_cluster(name == "ray") as address:  # up only while its commands run
                times[name] = measure(name, Path(scratch) / f"ws-{name}", stages, address, options)
            stores[name] = digest(store_rows(Path(scratch) / f"ws-{name}"))
    print(f"\nmemtrace {measured}, {options.dataset}, --system {options.system}, {os.cpu_count()} cores")
    label = {"ray": "Ray, 2 CPUs"}
    base = executors[0]
    print("| stage | " + " | ".join(label.get(n, f"--workers {n}") for n in executors) + " |")
    print("|---" * (len(executors) + 1) + "|")
    for stage in stages:
        cells = []
        for n in executors:
            wall, cpu, load = times[n][stage]
            ratio = wall / times[base][stage][0]
            spent = "" if n == "ray" else f", {cpu:.0f} CPU s"
            cells.append(f"{wall:.1f} s ({ratio:.2f}x{spent}; load {load:.1f})")
        print(f"| {stage} | " + " | ".join(cells) + " |")
    same = all(stores[n] == stores[base] for n in executors)
    print(f"\nstores identical across executors: {same}")


if __name__ == "__main__":
    main()
