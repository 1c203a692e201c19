"""Run names of imported graphs: split-qualified, and a name shared by several runs is refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from membase_graphs import write_membase_bench

import memtrace as mt
from memtrace.graph import AmbiguousRunError, NotFoundError
from memtrace.interop import import_smartcomment, load_memtracebench, write_smartcomment

MEMTRACE = Path(sys.executable).with_name("memtrace")


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_membase_bench(tmp_path_factory.mktemp("bench"))


def test_benchmark_runs_get_unique_split_qualified_names(tmp_path, bench):
    """Three splits hold a graph called conv-h01: each run is named after its split too."""
    ws = mt.open(tmp_path / "ws", create=True)
    runs = load_memtracebench(ws.store, bench)
    assert sorted(r.name for r in runs) == [
        "long_context/conv-h01",
        "mem0/conv-h01",
        "mem0/conv-h02",
        "rag/conv-h01",
    ]
    assert ws.graph("rag/conv-h01").run.system == "rag"
    with pytest.raises(NotFoundError, match="conv-h01"):
        ws.graph("conv-h01")
    ws.close()


def test_a_shared_run_name_is_refused_with_its_candidates(tmp_path, bench):
    ws = mt.open(tmp_path / "ws", create=True)
    graph = bench / "mem0" / "conv-h01.json"
    first = import_smartcomment(ws.store, graph, name="conv", system="mem0")
    second = import_smartcomment(ws.store, graph, name="conv", system="copy")
    assert first.id != second.id
    for lookup in (ws.graph, ws.view, ws.run, ws.cases):
        with pytest.raises(AmbiguousRunError) as err:
            lookup("conv")
        assert first.id in str(err.value) and second.id in str(err.value) and "copy" in str(err.value)
    assert ws.graph(second.id).run.system == "copy"  # an id still resolves
    ws.close()


def test_the_cli_refuses_an_ambiguous_export_in_one_line(tmp_path, bench):
    ws = tmp_path / "ws"
    graph = bench / "rag" / "conv-h01.json"
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    for system in ("a", "b"):
        args = [MEMTRACE, "import", graph, "-w", ws, "--name", "conv-h01", "--system", system]
        subprocess.run([str(a) for a in args], check=True, capture_output=True, env=env, timeout=120)
    out = tmp_path / "out.json"
    result = subprocess.run(
        [str(MEMTRACE), "export", "conv-h01", "-w", str(ws), "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 1 and not out.exists()
    (line,) = result.stderr.strip().splitlines()
    assert "ambiguous" in line and "system a" in line and "system b" in line


def test_an_imported_benchmark_run_exported_and_imported_again_keeps_name_system_and_cases(tmp_path, bench):
    ws = mt.open(tmp_path / "ws", create=True)
    load_memtracebench(ws.store, bench, splits="rag")
    run = ws.run("rag/conv-h01")
    path = tmp_path / "again.json"
    write_smartcomment(ws.store, run.id, path)
    other = mt.open(tmp_path / "other", create=True)
    again = import_smartcomment(other.store, path)
    assert (again.name, again.system) == ("rag/conv-h01", "rag")
    assert [(c.id, c.verdict) for c in other.cases(again.id)] == [(c.id, c.verdict) for c in ws.cases(run.id)]
    assert len(other.store.annotations(again.id)) == len(ws.store.annotations(run.id)) == 3
    ws.close()
    other.close()
