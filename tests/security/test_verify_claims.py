"""Verification state shared by processes: two `memtrace verify` on one workspace replay each claim
once (they replayed every claim twice), and a killed verify's half-recorded replay is cleaned up by the
next one (it stayed as an orphan incomplete run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import memtrace as mt
from memtrace.graph import Run
from memtrace.graph.claims import ClaimHolder, take_claim

#: `memtrace ARGS` with each counterfactual replay slowed by SLOW seconds, so two verifiers started
#: together are sure to overlap (the timing changes, the code path does not).
SLOW_VERIFY = textwrap.dedent(
    """
    import sys, time
    import memtrace.attribution.verify.counterfactual as counterfactual
    real, pause = counterfactual.replay, float(sys.argv[1])
    def slow(*args, **kwargs):
        time.sleep(pause)
        return real(*args, **kwargs)
    counterfactual.replay = slow
    sys.argv = ["memtrace", *sys.argv[2:]]
    from memtrace.cli.app import main
    main()
    """
)

#: `memtrace verify WS` killed (no cleanup, as by kill -9) in the middle of its first replay, after the
#: replay run started recording and before it answered.
KILLED_VERIFY = textwrap.dedent(
    """
    import os, sys
    import memtrace.systems.replay as replaying
    def die(*args, **kwargs):
        os._exit(9)
    replaying.answer_questions = die
    sys.argv = ["memtrace", "verify", sys.argv[1], "--workers", "1"]
    from memtrace.cli.app import main
    main()
    """
)


@pytest.fixture(scope="module")
def attributed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Mem0 (offline) over three sample conversations, flow-attributed: 18 claims a replay verifies."""
    from memtrace.attribution.engine import attribute
    from memtrace.datasets import sample_conversation
    from memtrace.systems import run_conversation
    from memtrace.systems.mem0 import Mem0System

    workspace = tmp_path_factory.mktemp("claims") / "ws"
    for seed in range(3):
        run_conversation(Mem0System(), sample_conversation(seed), workspace)
    with mt.open(workspace) as ws:
        assert attribute(ws, "flow")
    return workspace


@pytest.fixture(scope="module")
def verified_once(attributed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same workspace verified by one process: what two processes together must come to."""
    workspace = tmp_path_factory.mktemp("baseline") / "ws"
    shutil.copytree(attributed, workspace)
    result = subprocess.run(verify_command(workspace), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return workspace


def verify_command(workspace: Path, *, slow: float = 0.0) -> list[str]:
    # One process each: the replay is patched in the process that verifies (workers: test_verify_workers).
    return [sys.executable, "-c", SLOW_VERIFY, str(slow), "verify", str(workspace), "--workers", "1"]


def replay_runs(workspace: Path) -> list[Run]:
    with mt.open(workspace) as ws:
        return [run for run in ws.runs() if run.parent_run]


def verdicts(workspace: Path) -> dict[tuple[str, str], str | None]:
    with mt.open(workspace) as ws:
        return {(a.run_id, a.case_id): a.verified for a in ws.store.attributions(method="flow")}


def test_two_verify_processes_replay_each_claim_once(
    attributed: Path, verified_once: Path, tmp_path: Path
) -> None:
    """Both processes run the whole pass at once; between them every claim is replayed exactly once and
    the verdicts are those one process reaches alone."""
    workspace = tmp_path / "ws"
    shutil.copytree(attributed, workspace)
    processes = [
        subprocess.Popen(
            verify_command(workspace, slow=0.1), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=300) for process in processes]
    for process, (out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, out + err
    expected = len(replay_runs(verified_once))
    assert expected >= 18
    replays = replay_runs(workspace)
    assert len(replays) == expected, f"{len(replays)} replays for {expected} (each claim replayed by both?)"
    assert all(run.status == "complete" for run in replays)
    assert verdicts(workspace) == verdicts(verified_once)
    now = [int(out.rsplit("verified now: ", 1)[1].split()[0]) for out, _ in outputs]
    assert sum(now) == len(verdicts(workspace)) and min(now) > 0, now  # the work was split


def test_a_killed_verify_leaves_no_orphan_replay_after_the_next_one(
    attributed: Path, verified_once: Path, tmp_path: Path
) -> None:
    """The killed process's claim and half-recorded replay are taken over by the next verify, which
    deletes the replay and verifies the claim: the workspace ends as if nothing had been killed."""
    workspace = tmp_path / "ws"
    shutil.copytree(attributed, workspace)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_VERIFY, str(workspace)], capture_output=True, text=True, timeout=300
    )
    assert killed.returncode == 9, killed.stderr
    (orphan,) = replay_runs(workspace)
    assert orphan.status == "incomplete"  # what the killed process left behind
    result = subprocess.run(verify_command(workspace), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert orphan.id in result.stderr and "ended before finishing" in result.stderr
    replays = replay_runs(workspace)
    assert all(run.status == "complete" for run in replays)
    # Replay ids derive from the claim, so the orphan's id is recorded again, complete this time.
    assert {run.id for run in replays} == {run.id for run in replay_runs(verified_once)}
    assert verdicts(workspace) == verdicts(verified_once)


def test_a_claim_is_held_while_its_process_lives_and_taken_over_after(tmp_path: Path) -> None:
    """Liveness is the holder's lock, not a timeout: a live holder keeps its claim however long it
    takes, and the moment it is gone the claim is free, with the time it was taken."""
    workspace = tmp_path / "ws"
    key = ("run-1", "q1", "flow", "")
    with mt.open(workspace, create=True) as ws:
        first, second = ClaimHolder(workspace), ClaimHolder(workspace)
        assert take_claim(ws.store, workspace, key, first.id, since=0.0) == (True, None)
        assert take_claim(ws.store, workspace, key, second.id, since=0.0) == (False, None)
        first.close()  # as if its process ended without finishing
        taken, stale = take_claim(ws.store, workspace, key, second.id, since=0.0)
        assert taken and stale is not None and stale.holder == first.id
        second.close()
    assert not list((workspace / "claims").glob("*.lock"))
    assert os.listdir(workspace / "claims") == []
