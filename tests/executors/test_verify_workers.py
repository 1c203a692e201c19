"""`memtrace verify --workers N`: one claim per task; the same verdicts and replay runs (ids and seq
included) for one worker or two, after a worker dies, and after Ctrl-C and a second pass."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from store_dump import store_rows
from typer.testing import CliRunner

import memtrace as mt
from conftest import CTRL_C_AS_IN_A_TERMINAL
from memtrace.attribution.model import Attribution, load_attributions
from memtrace.cli.app import app
from memtrace.executors import CRASH_ONCE_ENV


def _cli(*args: str | Path) -> None:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output


def _attributed(workspace: Path) -> Path:
    _cli("run", workspace, "--system", "all", "--dataset", "sample", "--workers", "1")
    _cli("attribute", workspace, "--workers", "1")
    return workspace


def _verified(workspace: Path, *flags: str | Path) -> Path:
    _cli("verify", _attributed(workspace), *flags)
    return workspace


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("v1")
    return _verified(folder / "ws", "--workers", "1", "--json", folder / "verify.json")


def _claims(workspace: Path) -> tuple[list[Attribution], dict[str, str]]:
    """The attributions and each run's system (nothing read copies a replay's deferred prefix)."""
    with mt.open(workspace) as ws:
        return load_attributions(ws.store), {run.id: run.system or "" for run in ws.runs()}


def test_two_workers_store_the_verdicts_and_replays_of_one(one_worker: Path, tmp_path: Path) -> None:
    expected = store_rows(one_worker)
    claims, systems = _claims(one_worker)
    assert all(a.verified is not None for a in claims)
    assert {systems[a.run_id] for a in claims} == {"long_context", "rag", "mem0", "evermemos"}
    assert any(a.replay_run for a in claims)
    got, temporary = _attributed(tmp_path / "ws"), tmp_path / "tmp"
    temporary.mkdir()
    command = ["verify", got, "--workers", "2", "--json", tmp_path / "verify.json"]
    result = subprocess.run(
        [sys.executable, "-m", "memtrace.cli.app", *map(str, command)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "TMPDIR": str(temporary)},
    )
    assert result.returncode == 0, result.stderr
    assert store_rows(got) == expected
    assert not list(temporary.iterdir())  # the stash and the workers' scratch workspaces are gone
    # Under workers too a replay resumes from the nearest snapshot: a question-time repair re-runs a
    # question's operations, not the run's (verify --json counts them per claim).
    replayed = json.loads((tmp_path / "verify.json").read_text())["replayed_ops"]["per_claim"]
    alone = json.loads((one_worker.parent / "verify.json").read_text())["replayed_ops"]["per_claim"]
    assert replayed == alone
    kinds = {(a.run_id, a.case_id): a.error_type for a in claims}
    run_ops = Counter(row[0] for row in expected["ops"])
    late = [c for c in replayed if kinds[c["run"], c["case"]] == "RetrievalError"]
    assert late and all(c["ops"] * 10 < run_ops[c["run"]] for c in late)


def test_a_dead_verify_task_is_retried(
    one_worker: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CRASH_ONCE_ENV, str(tmp_path / "crashed"))
    got = _verified(tmp_path / "ws", "--workers", "2")
    assert (tmp_path / "crashed").exists()  # a worker did die mid-claim
    assert store_rows(got) == store_rows(one_worker)


# SIGINT raised in the driver once it has saved three verdicts: what came back stays, the rest of the
# claims are given back, and a second pass finishes them into the store a single pass makes.
INTERRUPTING_VERIFY = f"""
import signal, sys
{CTRL_C_AS_IN_A_TERMINAL}
from memtrace.attribution.verify.claims import VerifyClaims
finish, saved = VerifyClaims.finish, []
def finish_then_interrupt(self, attribution):
    finish(self, attribution)
    saved.append(attribution)
    if len(saved) == 3:
        signal.raise_signal(signal.SIGINT)
VerifyClaims.finish = finish_then_interrupt
from memtrace.cli.app import main
sys.argv = ["memtrace", "verify", sys.argv[1], "--workers", "2"]
main()
"""


def test_ctrl_c_keeps_the_verdicts_that_came_back(one_worker: Path, tmp_path: Path) -> None:
    workspace, temporary = _attributed(tmp_path / "ws"), tmp_path / "tmp"
    temporary.mkdir()
    result = subprocess.run(
        [sys.executable, "-c", INTERRUPTING_VERIFY, str(workspace)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "TMPDIR": str(temporary)},
    )
    assert "Traceback" not in result.stderr and result.returncode == 130, result.stderr
    assert not list(temporary.iterdir())  # stopped workers' scratch workspaces went with the stash
    claims, systems = _claims(workspace)
    verified = [a for a in claims if a.verified is not None]
    assert 3 <= len(verified) < len(claims)
    assert all(a.replay_run in systems for a in verified if a.replay_run)  # its replay was kept too
    conn = sqlite3.connect(workspace / "memtrace.db")
    try:
        held = conn.execute("SELECT COUNT(*) FROM verify_claims WHERE finished_at IS NULL").fetchone()[0]
    finally:
        conn.close()
    assert held == 0  # the claims not done were given back
    _cli("verify", workspace, "--workers", "2")
    assert store_rows(workspace) == store_rows(one_worker)
