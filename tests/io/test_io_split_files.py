"""One file of a MemTraceBench split imported on its own becomes the run a directory import makes, and a
run reference several runs match (a split-less name, an id prefix) is refused with the candidates.

Before, `import mem0/conv-h01.json` after `import rag/conv-h01.json` replaced the rag run (same
graph_id, same file name, no system: the same run id), and an ambiguous id prefix read "no run".
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from membase_graphs import write_membase_bench

import memtrace as mt
from memtrace.graph import AmbiguousRunError, NotFoundError

MEMTRACE = Path(sys.executable).with_name("memtrace")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_membase_bench(tmp_path_factory.mktemp("bench"))


def memtrace(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [str(MEMTRACE), *map(str, args)], capture_output=True, text=True, env=env, timeout=120
    )


def test_split_files_imported_one_by_one_keep_both_runs(tmp_path: Path, bench: Path) -> None:
    ws = tmp_path / "ws"
    for split in ("rag", "mem0"):
        assert memtrace("import", ws, bench / split / "conv-h01.json").returncode == 0
    with mt.open(ws) as workspace:
        runs = {r.name: r for r in workspace.runs()}
        assert {name: r.system for name, r in runs.items()} == {
            "rag/conv-h01": "rag",
            "mem0/conv-h01": "mem0",
        }
        assert len(workspace.cases(runs["rag/conv-h01"].id)) == 5  # the rag graph, not replaced by mem0's
    assert memtrace("import", ws, bench).returncode == 0
    with mt.open(ws) as workspace:  # the directory import finds the same runs: none doubled
        assert sorted(r.name for r in workspace.runs()) == [
            "long_context/conv-h01",
            "mem0/conv-h01",
            "mem0/conv-h02",
            "rag/conv-h01",
        ]


def test_a_split_less_name_resolves_when_one_run_has_it_and_lists_candidates_otherwise(
    tmp_path: Path, bench: Path
) -> None:
    ws = tmp_path / "ws"
    assert memtrace("import", ws, bench).returncode == 0
    with mt.open(ws) as workspace:
        assert workspace.run("conv-h02").name == "mem0/conv-h02"
        with pytest.raises(AmbiguousRunError) as err:
            workspace.run("conv-h01")
        assert len(err.value.candidates) == 3 and "rag/conv-h01" in str(err.value)
        with pytest.raises(AmbiguousRunError, match="run id prefix 'sc-'"):
            workspace.run("sc-")
        with pytest.raises(NotFoundError, match="no run 'conv-h09'"):
            workspace.run("conv-h09")
    result = memtrace("export", "conv-h01", "-w", ws, "--out", tmp_path / "out.json")
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "mem0/conv-h01" in result.stderr
    assert not (tmp_path / "out.json").exists()
