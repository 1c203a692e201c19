"""A user's own attribution method, registered or installed as an entry point, used by `--method NAME`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pluginhelpers import registered_attributor, write_distribution
from retrieval_blame_attributor import RetrievalBlame

from conftest import run_cli_in_process
from memtrace.attribution import make_method, method_names, register_attributor
from memtrace.graph import MemtraceError

MEMTRACE = Path(sys.executable).with_name("memtrace")
HERE = Path(__file__).parent


def test_a_registered_method_attributes_verifies_and_reports(tmp_path: Path, capsys: Any) -> None:
    ws = tmp_path / "ws"
    assert run_cli_in_process(capsys, "run", ws, "--system", "rag")[0] == 0
    with registered_attributor("retrieval-blame", RetrievalBlame):
        args = ("attribute", ws, "--method", "retrieval-blame", "--json", tmp_path / "a.json")
        code, _, err = run_cli_in_process(capsys, *args)
        assert code == 0, err
        for step in (
            ("verify", ws, "--method", "retrieval-blame"),
            ("report", ws, "--method", "retrieval-blame"),
        ):
            code, _, err = run_cli_in_process(capsys, *step)
            assert code == 0, err
    attributions = json.loads((tmp_path / "a.json").read_text())
    assert attributions and {a["method"] for a in attributions} == {"retrieval-blame"}
    assert {a["error_type"] for a in attributions} == {"RetrievalError"}
    code, _, err = run_cli_in_process(capsys, "attribute", ws, "--method", "retrieval-blame")
    assert code == 1 and "unknown attribution method 'retrieval-blame'" in err  # gone once unregistered


def test_make_method_passes_what_the_factory_takes() -> None:
    with registered_attributor("retrieval-blame", RetrievalBlame):
        assert make_method("retrieval-blame", confidence=0.9).settings() == {"confidence": 0.9}
        assert make_method("retrieval-blame", llm=object(), seed=4).settings() == {"confidence": 0.5}
        with pytest.raises(MemtraceError, match="takes no option 'k'"):
            make_method("retrieval-blame", k=3)
        with pytest.raises(MemtraceError, match="already registered"):
            register_attributor("retrieval-blame", RetrievalBlame)
    needs_model = pytest.raises(MemtraceError, match="'needs-model' needs an LLM")
    with registered_attributor("needs-model", RetrievalBlame, needs_llm=True), needs_model:
        make_method("needs-model")
    assert method_names()[:5] == ["flow", "agent", "all-at-once", "last-op", "random"]


def test_an_entry_point_adds_a_method_to_a_fresh_memtrace(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_distribution(
        site, "memtrace.attributors", "retrieval-blame = retrieval_blame_attributor:RetrievalBlame"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(HERE)]), "NO_COLOR": "1"}
    ws = tmp_path / "ws"
    for args in (
        ("run", ws, "--system", "mem0", "--questions", "10"),
        ("attribute", ws, "--method", "retrieval-blame", "--json", tmp_path / "a.json"),
    ):
        done = subprocess.run(
            [str(MEMTRACE), *map(str, args)], capture_output=True, text=True, env=env, timeout=300
        )
        assert done.returncode == 0, done.stderr
    attributions = json.loads((tmp_path / "a.json").read_text())
    assert attributions and all(a["method"] == "retrieval-blame" for a in attributions)
