"""`bench faults` covers every error type a system can make, and says per case and per type what it got.

Mem0 on the sample never updates the one memory holding an answer, so before, it got no UpdateError
or DeletionError case at all, and nothing said so.
"""

from __future__ import annotations

import json
from pathlib import Path

from memtrace.bench.fault_bench import fault_benchmark
from memtrace.vocabulary import MEMORY_ERROR_TYPES


def test_mem0_gets_every_memory_error_type_and_each_case_is_listed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = fault_benchmark(["mem0"], "sample", tmp_path / "ws", out, per_type=1, methods=["flow", "random"])
    coverage = result["coverage"]["mem0"]
    assert {kind: coverage[kind]["kept"] for kind in MEMORY_ERROR_TYPES} == dict.fromkeys(
        MEMORY_ERROR_TYPES, 1
    )
    assert result["missing"] == []
    rows = json.loads((out / "faults.json").read_text())["cases"]
    assert sorted(r["injected_type"] for r in rows) == sorted(MEMORY_ERROR_TYPES)
    deletion = next(r for r in rows if r["injected_type"] == "DeletionError")
    assert deletion["injected_op"].startswith("delete_memory#")  # the step that deleted, not its decision
    for row in rows:  # the labels are where flow finds them, and every method's pick is listed
        assert row["predicted"]["flow"] == {"op": row["injected_op"], "type": row["injected_type"]}
        assert set(row["predicted"]) == {"flow", "random"}


def test_a_type_a_system_cannot_get_enough_of_is_named_with_the_reason(tmp_path: Path) -> None:
    result = fault_benchmark(
        ["rag"], "sample", tmp_path / "ws", tmp_path / "out", per_type=2, methods=["flow"]
    )
    assert "UpdateError" not in result["coverage"]["rag"]  # rag has no update step: nothing to miss
    missing = {m["error_type"]: m for m in result["missing"]}
    assert set(missing) == {"ExtractionError"}  # planned on its chunks, never flips an answer
    assert missing["ExtractionError"]["kept"] == 0 and "flipped" in missing["ExtractionError"]["why"]


def test_the_command_prints_the_coverage_and_names_what_is_short(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    command = [
        str(Path(sys.executable).with_name("memtrace")),
        "bench",
        "faults",
        "--out",
        str(tmp_path / "out"),
    ]
    command += ["--system", "rag", "--per-type", "1", "--method", "flow"]
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Labelled cases per system (kept / planned injections)" in result.stdout
    assert "note: rag: 0 ExtractionError case(s), fewer than --per-type 1" in " ".join(result.stdout.split())


def test_the_random_baseline_picks_the_same_operation_per_case_under_a_seed(tmp_path: Path) -> None:
    """Run ids are fresh each benchmark; the seeded picks must not depend on them."""

    def picks(name: str, seed: int) -> list[tuple[str, str, str]]:
        result = fault_benchmark(
            ["mem0"],
            "sample",
            tmp_path / name,
            tmp_path / name / "out",
            per_type=1,
            seed=seed,
            methods=["random"],
        )
        return [(r["case"], r["injected_op"], r["predicted"]["random"]["op"]) for r in result["cases"]]

    first = picks("a", 3)
    assert len(first) == 5 and picks("b", 3) == first


def test_a_per_type_below_one_is_refused_before_anything_is_recorded(tmp_path: Path) -> None:
    import pytest

    from memtrace.errors import MemtraceError

    with pytest.raises(MemtraceError, match="--per-type must be 1 or more, not 0"):
        fault_benchmark(["rag"], "sample", tmp_path / "ws", tmp_path / "out", per_type=0)
    assert not (tmp_path / "ws").exists() and not (tmp_path / "out").exists()
