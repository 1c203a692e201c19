"""`bench faults` (one injected fault per task) and `bench memtracebench` (one graph's cases per task):
the same labels, scores, files and store for one worker, two, and two after a worker dies."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from outputs import faults, scored

from memtrace.bench import fault_bench
from memtrace.executors import CRASH_ONCE_ENV


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    root = tmp_path_factory.mktemp("bench1")
    made = faults(root, "--workers", 1)
    layout = root / "out" / "memtracebench"
    return layout, made, scored(layout, root / "scored", "--workers", 1)


def test_two_workers_label_and_score_as_one(one_worker: Any, tmp_path: Path) -> None:
    layout, labels, scores = one_worker
    labelled = json.loads(labels["json"])["labelled"]
    assert labelled >= 8 and len(labels["graphs"]) == labelled
    assert faults(tmp_path, "--workers", 2) == labels
    assert scores["json"]["all"]["cases"] == labelled and scores["store"]["attributions"]
    assert scored(layout, tmp_path / "scored", "--workers", 2) == scores


def test_a_dead_fault_task_or_attribution_task_is_retried(
    one_worker: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout, labels, scores = one_worker
    marker = tmp_path / "crashed"
    injecting = fault_bench.inject_all

    def crash_once_while_injecting(*args: Any, **kwargs: Any) -> None:
        """The recordings run first: the hook is armed for the injections only."""
        os.environ[CRASH_ONCE_ENV] = str(marker)
        try:
            injecting(*args, **kwargs)
        finally:
            del os.environ[CRASH_ONCE_ENV]

    monkeypatch.setattr(fault_bench, "inject_all", crash_once_while_injecting)
    assert faults(tmp_path, "--workers", 2) == labels
    assert marker.exists()  # a fault task's worker did die
    marker.unlink()
    monkeypatch.setenv(CRASH_ONCE_ENV, str(marker))
    assert scored(layout, tmp_path / "scored", "--workers", 2) == scores
    assert marker.exists()
