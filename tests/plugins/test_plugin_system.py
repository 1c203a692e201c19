"""A user's own memory system takes part in run, replay, verification and optimisation: no edit to memtrace.

Two ways in: `register_system()` in the user's process, and a `memtrace.systems` entry point declared
by an installed distribution (here a `.dist-info` folder on PYTHONPATH, read by a fresh `memtrace`
process exactly as pip would leave it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from notebook_system import NotebookSystem
from pluginhelpers import registered

import memtrace as mt
from conftest import run_cli_in_process
from memtrace.bench.fault_bench import fault_benchmark
from memtrace.cli import run_cmd
from memtrace.graph import MemtraceError
from memtrace.optimize import optimize
from memtrace.systems.registry import (
    memtracebench_splits,
    register_system,
    system_class,
    system_names,
    unregister_system,
)

MEMTRACE = Path(sys.executable).with_name("memtrace")
HERE = Path(__file__).parent


def test_register_system_makes_it_runnable_replayable_and_verifiable(tmp_path: Path, capsys: Any) -> None:
    ws = tmp_path / "ws"
    with registered(NotebookSystem):
        assert "test_notebook" in system_names() and system_class("test_notebook") is NotebookSystem
        args = ("run", ws, "--system", "test_notebook", "--json", tmp_path / "run.json")
        code, _, err = run_cli_in_process(capsys, *args)
        assert code == 0, err
        assert json.loads((tmp_path / "run.json").read_text())["test_notebook"]["questions"] == 31
        code, _, err = run_cli_in_process(capsys, "attribute", ws)
        assert code == 0, err
        code, _, err = run_cli_in_process(capsys, "verify", ws, "--json", tmp_path / "verify.json")
        assert code == 0, err
        with mt.open(ws) as opened:
            replays = [r for r in opened.runs() if r.parent_run]
    assert json.loads((tmp_path / "verify.json").read_text())["verified_now"] > 0
    assert replays and all(r.system == "test_notebook" for r in replays)  # verification replayed it


def test_the_optimiser_tunes_a_users_system_along_its_declared_grid(tmp_path: Path) -> None:
    with registered(NotebookSystem):
        result = optimize(
            "test_notebook", "sample", tmp_path, train=1, validation=1, holdout=1, rounds=1, questions=12
        )
    tried = [(p.tunable, p.new) for r in result.rounds for p in r.proposals]
    # Its route sends RetrievalErrors at `read_notes` to top_k, larger first: 8 -> 16, then smaller ones,
    # every value on its Grid (1, 2, 4, 8, 16).
    top_k = [v for t, v in tried if t == "top_k"]
    assert top_k[:2] == [16, 4] and set(top_k) <= {1, 2, 4, 16}, tried
    assert (tmp_path / "optimize-history-test_notebook.json").exists()


def test_fault_injection_labels_a_users_system(tmp_path: Path) -> None:
    """bench/ knows no system: faults are planned by operation category and replayed through the registry."""
    with registered(NotebookSystem):
        result = fault_benchmark(
            ["test_notebook"], "sample", tmp_path / "ws", tmp_path / "out", per_type=2, methods=["flow"]
        )
    assert result["labelled"] > 0
    assert result["results"]["flow"]["all"]["cases"] == result["labelled"]


def test_registering_a_taken_name_or_a_non_system_is_refused() -> None:
    with registered(NotebookSystem), pytest.raises(MemtraceError, match="already registered"):
        register_system(type("Other", (NotebookSystem,), {}))
    with pytest.raises(MemtraceError, match="not a MemorySystem"):
        register_system(dict)  # type: ignore[arg-type]
    with pytest.raises(MemtraceError, match="needs name="):
        register_system("notebook_system:NotebookSystem")
    assert memtracebench_splits() == {s: s for s in ("long_context", "rag", "mem0", "evermemos")}


def test_an_entry_point_adds_a_system_to_a_fresh_memtrace(tmp_path: Path) -> None:
    """No register_system() call anywhere: the installed distribution's entry point is all it takes."""
    site = tmp_path / "site"
    dist = site / "notebook_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: notebook-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[memtrace.systems]\ntest_notebook = notebook_system:NotebookSystem\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(HERE)]), "NO_COLOR": "1"}

    def memtrace(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(MEMTRACE), *map(str, args)], capture_output=True, text=True, env=env, timeout=300
        )

    ws = tmp_path / "ws"
    ran = memtrace("run", ws, "--system", "test_notebook", "--questions", "6", "--json", tmp_path / "r.json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads((tmp_path / "r.json").read_text())["test_notebook"]["questions"] == 6
    verified = memtrace("verify", ws, "--limit", "2")
    assert verified.returncode == 0, verified.stderr
    tuned = memtrace(
        "optimize", "-w", tmp_path / "opt", "--system", "test_notebook", "--dataset", "sample",
        "--train", "1", "--validation", "1", "--holdout", "1", "--rounds", "1", "--questions", "12",
    )  # fmt: skip
    assert tuned.returncode == 0, tuned.stderr
    assert (tmp_path / "opt" / "optimize-history-test_notebook.json").exists()
    # Without the distribution on the path, the same command names the unknown system.
    env["PYTHONPATH"] = str(HERE)
    missing = memtrace("run", ws, "--system", "test_notebook")
    assert missing.returncode == 1 and "unknown system 'test_notebook'" in missing.stderr


class _NeedsModel(NotebookSystem):
    """A system with no offline engine, like an adapter of a library that always calls a model."""

    name = "test_needs_model"
    runs_offline = False


def test_a_system_without_offline_engine_is_left_out_of_an_offline_all(tmp_path: Path, capsys: Any) -> None:
    with registered(_NeedsModel):
        assert "test_needs_model" not in run_cmd.system_names("all", offline=True)
        assert "test_needs_model" in run_cmd.system_names("all", offline=False)
        code, _, err = run_cli_in_process(capsys, "run", tmp_path / "ws", "--system", "test_needs_model")
        assert code == 1 and "'test_needs_model' needs a model" in err
        with pytest.raises(MemtraceError, match="no offline engine"):
            _NeedsModel()


def test_a_plugin_that_cannot_load_breaks_only_itself(tmp_path: Path, capsys: Any) -> None:
    register_system("no_such_package.memory:System", name="test_broken")
    try:
        with pytest.warns(UserWarning, match="test_broken.*no_such_package"):
            names = run_cmd.system_names("all")
        assert "test_broken" not in names and names[:4] == ["long_context", "rag", "mem0", "evermemos"]
        with pytest.warns(UserWarning, match="test_broken"):
            assert set(memtracebench_splits()) == {"long_context", "rag", "mem0", "evermemos"}
        code, _, err = run_cli_in_process(capsys, "run", tmp_path / "ws", "--system", "test_broken")
        assert code == 1 and "system 'test_broken': cannot load no_such_package.memory:System" in err
    finally:
        unregister_system("test_broken")
