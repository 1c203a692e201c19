"""`memtrace attribute --workers N`: one run's cases per task; the same attributions (ids included)."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_dump import store_rows
from typer.testing import CliRunner

from memtrace.cli.app import app
from memtrace.executors import CRASH_ONCE_ENV


def _cli(*args: str | Path) -> None:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output


def _attributed(workspace: Path, workers: int) -> Path:
    _cli("run", workspace, "--system", "all", "--dataset", "sample", "--workers", "1")
    _cli("attribute", workspace, "--workers", workers)
    return workspace


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _attributed(tmp_path_factory.mktemp("a1") / "ws", 1)


def test_two_workers_store_the_attributions_of_one(one_worker: Path, tmp_path: Path) -> None:
    expected = store_rows(one_worker)
    assert len({row[1] for row in expected["attributions"]}) == 4  # every system has failed cases
    assert store_rows(_attributed(tmp_path / "ws", 2)) == expected


def test_a_dead_attribution_task_is_retried(
    one_worker: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CRASH_ONCE_ENV, str(tmp_path / "crashed"))
    got = _attributed(tmp_path / "ws", 2)
    assert (tmp_path / "crashed").exists()
    assert store_rows(got) == store_rows(one_worker)
