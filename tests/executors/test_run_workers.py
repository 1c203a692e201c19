"""`memtrace run --workers N`: the same store for one worker or two, and after a worker dies."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_dump import store_rows
from typer.testing import CliRunner

from memtrace.cli.app import app
from memtrace.cli.executor_options import executor_spec
from memtrace.executors import CRASH_ONCE_ENV, ExecutorSpec, usable_cores
from memtrace.systems.run_tasks import derived_run_id


def _run(workspace: Path, workers: int) -> None:
    result = CliRunner().invoke(
        app, ["run", str(workspace), "--system", "all", "--dataset", "sample", "--workers", str(workers)]
    )
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("w1") / "ws"
    _run(path, 1)
    return path


def test_two_workers_give_the_store_of_one(one_worker: Path, tmp_path: Path) -> None:
    _run(tmp_path / "ws", 2)
    expected, got = store_rows(one_worker), store_rows(tmp_path / "ws")
    assert {row[2] for row in expected["runs"]} == {"long_context", "rag", "mem0", "evermemos"}
    assert got == expected
    assert len(list((tmp_path / "ws" / "snapshots").iterdir())) == 4  # the snapshots came back too


def test_a_task_that_dies_is_retried(
    one_worker: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "crashed"
    monkeypatch.setenv(CRASH_ONCE_ENV, str(marker))
    _run(tmp_path / "ws", 2)
    assert marker.exists()  # a worker did die
    assert store_rows(tmp_path / "ws") == store_rows(one_worker)


def test_a_repeated_run_gets_the_next_id_of_its_chain() -> None:
    first = derived_run_id("rag", "c1", "sample", {"top_k": 5}, ())
    assert first == derived_run_id("rag", "c1", "sample", {"top_k": 5}, ())
    second = derived_run_id("rag", "c1", "sample", {"top_k": 5}, {first})
    assert second != first and len(second) == 12
    assert derived_run_id("rag", "c1", "sample", {"top_k": 6}, ()) != first


def test_workers_default_to_the_usable_cores() -> None:
    assert ExecutorSpec().count == usable_cores() >= 1
    assert executor_spec(None).count == executor_spec(0).count == usable_cores()  # the CLI's default
    assert ExecutorSpec(workers=1).in_process and not ExecutorSpec(workers=2).in_process
