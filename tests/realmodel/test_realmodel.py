"""The real-model tier: every LLM command of memtrace against a real OpenAI-compatible model server.

Opt-in: set MEMTRACE_TEST_LLM_URL (e.g. http://127.0.0.1:8080/v1, a llama.cpp `llama-server` or
llama-cpp-python server; README "A local model server") and optionally MEMTRACE_TEST_LLM_MODEL (else
the first model the server lists). Select the tier alone with `pytest -m realmodel`. The commands run
as a user runs them (the installed entry point); a weak model may answer badly, but no command may
abort, hang past its timeout or print a traceback. Unless set, MEMTRACE_LLM_TIMEOUT is 600 s and
MEMTRACE_LLM_MAX_TOKENS 256 here: a 135M model on two cores writes about 15 tokens a second.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

import memtrace as mt

URL = os.environ.get("MEMTRACE_TEST_LLM_URL", "").strip()
MEMTRACE = Path(sys.executable).with_name("memtrace")
SYSTEMS = ("long_context", "rag", "mem0", "evermemos")
#: Per command: a 135M model on two CPU cores needs minutes for mem0 and evermemos.
COMMAND_SECONDS = 3600
#: Limits for a slow local model, unless the environment sets its own.
SLOW_MODEL_LIMITS = {"MEMTRACE_LLM_TIMEOUT": "600", "MEMTRACE_LLM_MAX_TOKENS": "256"}

#: A mark, not a module-level skip: `-m` selections of other tiers then never see this one.
pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.timeout(4 * COMMAND_SECONDS),
    pytest.mark.skipif(
        not URL, reason="MEMTRACE_TEST_LLM_URL is not set (the URL of a model server, see README)"
    ),
]


def served_model() -> str:
    """MEMTRACE_TEST_LLM_MODEL, else the first model the server lists at /models."""
    named = os.environ.get("MEMTRACE_TEST_LLM_MODEL", "").strip()
    if named:
        return named
    try:
        with urllib.request.urlopen(f"{URL.rstrip('/')}/models", timeout=30) as response:
            return str(json.load(response)["data"][0]["id"])
    except (OSError, ValueError, KeyError, IndexError) as exc:
        pytest.fail(f"{URL}/models did not name a model ({exc}); set MEMTRACE_TEST_LLM_MODEL")


def memtrace(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run one command against the server; it must succeed without a traceback."""
    llm = ["--llm", "openai", "--model", served_model(), "--base-url", URL]
    env = {**SLOW_MODEL_LIMITS, **os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    result = subprocess.run(
        [str(MEMTRACE), *map(str, args), *llm],
        capture_output=True,
        text=True,
        env=env,
        timeout=COMMAND_SECONDS,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 0, f"memtrace {args} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every system run over the sample's first three questions, into one workspace."""
    ws = tmp_path_factory.mktemp("realmodel") / "ws"
    for system in SYSTEMS:
        out = ws.parent / f"{system}.json"
        memtrace(
            "run", "-w", ws, "--system", system, "--dataset", "sample", "--questions", "3", "--json", out
        )
    return ws


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_system_completes_its_run(workspace: Path, system: str) -> None:
    payload = json.loads((workspace.parent / f"{system}.json").read_text())[system]
    assert payload["questions"] == 3 and payload["failed_operations"] == len(payload["failures"])
    with mt.open(workspace) as ws:
        [run] = [r for r in ws.runs() if r.system == system]
        assert run.status == "complete" and len(ws.cases(run.id)) == 3


def test_the_agent_attributes_the_failures_of_one_run(workspace: Path, tmp_path: Path) -> None:
    """One run (rag's) bounds the time: each failed case is up to 30 agent steps."""
    with mt.open(workspace) as ws:
        [run] = [r for r in ws.runs() if r.system == "rag"]
        failed = sum(c.verdict == "wrong" for c in ws.cases(run.id))
    memtrace("attribute", workspace, "--run", run.id, "--method", "agent", "--json", tmp_path / "agent.json")
    results = json.loads((tmp_path / "agent.json").read_text())
    assert len(results) == failed and all(r["method"] == "agent" for r in results)


def test_report_with_a_narrative(workspace: Path, tmp_path: Path) -> None:
    memtrace("attribute", workspace)  # the report needs stored (flow) attributions
    memtrace("report", workspace, "--out", tmp_path, "--timeout", "600")
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["narrative"] is not None and report["narrative"]["generated"] is True


def test_one_optimisation_round(tmp_path: Path) -> None:
    ws = tmp_path / "opt"
    result = memtrace(
        "optimize", "-w", ws, "--system", "rag", "--dataset", "sample", "--train", "1", "--validation", "1",
        "--holdout", "1", "--rounds", "1", "--questions", "3", "--judge", "f1",
    )  # fmt: skip
    assert "round 1:" in result.stdout and (ws / "optimize-history-rag.json").is_file()
