"""`memtrace optimize --workers N`: the evaluations (every proposal on every validation conversation,
training and holdout runs) in workers give the history and the workspace of one worker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from outputs import optimized

from memtrace.executors import CRASH_ONCE_ENV


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return optimized(tmp_path_factory.mktemp("o1") / "ws", "--workers", 1)


def test_two_workers_optimise_as_one(one_worker: dict[str, Any], tmp_path: Path) -> None:
    (first,) = one_worker["history"]["rounds"]
    assert len(first["proposals"]) == 4 and first["kept"]
    assert optimized(tmp_path / "ws", "--workers", 2) == one_worker


def test_a_dead_evaluation_is_retried(
    one_worker: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CRASH_ONCE_ENV, str(tmp_path / "crashed"))
    assert optimized(tmp_path / "ws", "--workers", 2) == one_worker
    assert (tmp_path / "crashed").exists()
