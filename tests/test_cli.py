"""The command line, run as a user runs it: the installed `memtrace` entry point in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import memtrace as mt
from conftest import OpenWorkspace

MEMTRACE = Path(sys.executable).with_name("memtrace")


def memtrace(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    result = subprocess.run(
        [str(MEMTRACE), *map(str, args)], capture_output=True, text=True, env=env, timeout=120
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"memtrace {args} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        )
    return result


def test_version() -> None:
    assert memtrace("version").stdout.strip() == f"memtrace {mt.__version__}"


def test_demo_then_inspect_shows_runs_operations_units_and_cases(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    memtrace("demo", ws)
    out = memtrace("inspect", ws, "--json", tmp_path / "runs.json").stdout
    assert "Runs in" in out and "Operations by category" in out
    assert "Memory units by lifecycle" in out and "Cases" in out
    runs = json.loads((tmp_path / "runs.json").read_text())
    (run,) = runs
    assert run["status"] == "complete" and run["cases"] == 4 and run["failed"] >= 1
    detail = memtrace("inspect", ws, "demo", "--json", tmp_path / "run.json")
    assert "update_memory_decision" in detail.stdout
    payload = json.loads((tmp_path / "run.json").read_text())
    assert {u["state"] for u in payload["memory_units"]} == {"live", "deleted"}
    categories = {o["category"] for o in payload["operations"]}
    assert {"extraction", "update", "retrieval", "response"} <= categories


def test_inspect_of_a_missing_workspace_is_one_clear_line(tmp_path: Path) -> None:
    result = memtrace("inspect", tmp_path / "nothing-here", check=False)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a memtrace workspace" in lines[0]


def test_inspect_of_an_unknown_run(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    memtrace("demo", ws)
    result = memtrace("inspect", ws, "no-such-run", check=False)
    assert result.returncode == 1 and "no run 'no-such-run'" in result.stderr


def test_inspect_marks_incomplete_runs_with_their_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    try:
        with mt.run(ws, name="crashed"), mt.op("extract_facts", category="extraction") as op:
            op.output("facts", ["kept"])
            raise ConnectionError("LLM endpoint unreachable")
    except ConnectionError:
        pass
    out = memtrace("inspect", ws).stdout
    assert "incomplete" in out and "LLM endpoint unreachable" in out


def test_export_and_import_round_trip_through_both_formats(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    ws, other = tmp_path / "ws", tmp_path / "other"
    memtrace("demo", ws)
    sc, jl = tmp_path / "demo.json", tmp_path / "demo.jsonl.gz"
    memtrace("export", "demo", "--workspace", ws, "--format", "smartcomment", "--out", sc)
    memtrace("export", "demo", "--workspace", ws, "--format", "jsonl", "--out", jl)
    memtrace("import", sc, "--workspace", other, "--name", "from-smartcomment")
    memtrace("import", jl, "--workspace", other, "--json", tmp_path / "imported.json")
    original = open_ws(ws).view("demo")
    for name in ("from-smartcomment", "demo"):
        copy = open_ws(other).view(name)
        assert len(copy.ops) == len(original.ops)
        # smartcomment stands a placeholder node in for the missing inputs of ingest operations
        assert set(copy.vars) - {"COMMENT:NONE@1"} == set(original.vars)
        assert copy.memory_values_at() == original.memory_values_at()
        # the system and every case survive both formats
        assert copy.run.system == original.run.system is not None
        assert [c.question for c in open_ws(other).cases(name)] == [
            c.question for c in open_ws(ws).cases("demo")
        ]
    assert json.loads((tmp_path / "imported.json").read_text())[0]["cases"] == 4


def test_importing_a_corrupt_file_is_one_line_and_leaves_the_workspace_alone(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    ws = tmp_path / "ws"
    memtrace("demo", ws)
    before = open_ws(ws).runs()
    broken = tmp_path / "broken.json"
    good = tmp_path / "good.json"
    memtrace("export", "demo", "--workspace", ws, "--out", good)
    broken.write_text(good.read_text()[: len(good.read_text()) // 2])
    result = memtrace("import", broken, "--workspace", ws, check=False)
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert str(broken) in line and "JSON" in line
    assert [r.id for r in open_ws(ws).runs()] == [r.id for r in before]


def test_export_rejects_an_unknown_format(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    memtrace("demo", ws)
    result = memtrace("export", "demo", "--workspace", ws, "--format", "xml", check=False)
    assert result.returncode == 1 and "unknown export format 'xml'" in result.stderr


def test_run_records_one_run_per_system_and_prints_accuracy(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    ws = tmp_path / "ws"
    out = memtrace(
        "run", "--workspace", ws, "--system", "long_context,rag", "--questions", "6",
        "--json", tmp_path / "acc.json",
    ).stdout  # fmt: skip
    assert "Accuracy by system and question category" in out
    payload = json.loads((tmp_path / "acc.json").read_text())
    assert set(payload) == {"long_context", "rag"}
    assert all(p["questions"] == 6 for p in payload.values())
    runs = open_ws(ws).runs()
    assert sorted(r.system for r in runs) == ["long_context", "rag"]
    assert all(r.status == "complete" for r in runs)


def test_run_changes_settings_with_set_and_names_a_bad_one(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    ws = tmp_path / "ws"
    memtrace("run", "--workspace", ws, "--system", "rag,long_context", "--set", "top_k=1", "--questions", "3")
    configs = {r.system: r.config for r in open_ws(ws).runs()}
    assert configs["rag"]["top_k"] == 1 and "top_k" not in configs["long_context"]
    for bad, message in (("nope=1", "--set nope: no setting"), ("top_k=abc", "--set for rag: top_k")):
        result = memtrace(
            "run", "--workspace", tmp_path / "other", "--system", "rag", "--set", bad, check=False
        )
        assert result.returncode == 1 and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "other").exists()


def test_run_rejects_unknown_systems_and_datasets(tmp_path: Path) -> None:
    bad_system = memtrace("run", "--workspace", tmp_path / "ws", "--system", "nope", check=False)
    assert bad_system.returncode == 1 and "unknown system 'nope'" in bad_system.stderr
    bad_data = memtrace(
        "run",
        "--workspace",
        tmp_path / "ws",
        "--system",
        "rag",
        "--dataset",
        "locomo:/no/such.json",
        check=False,
    )
    assert bad_data.returncode == 1
    (line,) = bad_data.stderr.strip().splitlines()
    assert "/no/such.json" in line


def test_run_with_an_unreachable_llm_is_one_line_and_keeps_the_run_incomplete(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    ws = tmp_path / "ws"
    result = memtrace(
        "run", "--workspace", ws, "--system", "rag", "--questions", "1", "--llm", "openai",
        "--model", "test-model", "--base-url", "http://127.0.0.1:9/v1", check=False,
    )  # fmt: skip
    assert result.returncode == 1
    *notices, line = result.stderr.strip().splitlines()
    assert "unreachable" in line and "127.0.0.1:9" in line and line.startswith("error:")
    assert notices and all("retry" in notice and "127.0.0.1:9" in notice for notice in notices)
    (run,) = open_ws(ws).runs()
    assert run.status == "incomplete" and "unreachable" in run.error


def test_attribute_groups_a_long_list_of_cases(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    memtrace("run", "--workspace", ws, "--system", "all")
    out = memtrace("attribute", ws, "--json", tmp_path / "a.json").stdout
    attributions = json.loads((tmp_path / "a.json").read_text())
    assert len(attributions) > 40 and "grouped" in out and f"{len(attributions)} cases" in out
    assert "sample-0-q1" not in out  # one row per group, not per case


def test_bench_faults_writes_its_outputs(tmp_path: Path) -> None:
    out = tmp_path / "faults"
    result = memtrace(
        "bench", "faults", "--out", out, "--system", "rag", "--per-type", "1", "--method", "flow,last-op",
        "--memtracebench",
    )  # fmt: skip
    assert "Injected faults" in result.stdout
    assert (out / "faults.json").exists() and (out / "faults.png").exists()
    assert any((out / "memtracebench" / "rag").glob("*.json"))
    assert f"wrote {out / 'memtracebench'}" in " ".join(result.stdout.split())  # says where, and how big
    assert "MiB)" in result.stdout
