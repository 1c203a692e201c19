"""The random baseline's seed reaches it from every command that runs it, and an option a method does not
take is refused rather than silently ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtrace.bench.memtracebench import evaluate_memtracebench
from memtrace.errors import MemtraceError

MEMTRACE = Path(sys.executable).with_name("memtrace")
sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
from test_bench_memtracebench import write_benchmark  # noqa: E402


def memtrace(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [str(MEMTRACE), *map(str, args)], capture_output=True, text=True, env=env, timeout=120
    )


def random_picks(workspace: Path, seed: int, out: Path) -> dict[str, list[str]]:
    result = memtrace(
        "attribute", workspace, "--method", "random", "--seed", seed, "--refresh", "--json", out
    )
    assert result.returncode == 0, result.stderr
    return {a["case_id"]: [a["op_id"], a["error_type"]] for a in json.loads(out.read_text())}


def test_attribute_random_is_the_same_under_a_seed_and_changes_with_it(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    assert memtrace("example", workspace).returncode == 0
    first = random_picks(workspace, 1, tmp_path / "a.json")
    assert first and random_picks(workspace, 1, tmp_path / "b.json") == first
    assert random_picks(workspace, 2, tmp_path / "c.json") != first


def test_memtracebench_takes_the_seed_and_refuses_evidence_for_other_methods(tmp_path: Path) -> None:
    bench = write_benchmark(tmp_path, tmp_path / "runs")
    one = evaluate_memtracebench(bench, method="random", seed=1)
    assert one["settings"] == {"seed": 1}
    assert evaluate_memtracebench(bench, method="random", seed=1)["cases"] == one["cases"]
    with pytest.raises(MemtraceError, match="--evidence chooses the flow method's starting points"):
        evaluate_memtracebench(bench, method="random", evidence="bm25")
    result = memtrace(
        "bench", "memtracebench", bench, "--method", "random", "--seed", "3", "--json", tmp_path / "r.json"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["settings"] == {"seed": 3}
