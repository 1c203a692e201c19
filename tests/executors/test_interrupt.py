"""Ctrl-C while tasks run: the results that came back are kept, and the workers still busy are stopped."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memtrace.executors import ExecutorSpec, run_tasks


def note_pid_then_sleep(job: tuple[Path, float]) -> int:
    """A task: say which process runs it, then take `seconds` (a long one stands for a busy worker)."""
    folder, seconds = job
    (folder / f"{os.getpid()}-{seconds}").touch()
    time.sleep(seconds)
    return os.getpid()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_keeps_what_came_back_and_stops_the_busy_workers(tmp_path: Path) -> None:
    delivered: list[int] = []

    def deliver(index: int, pid: int) -> None:
        delivered.append(index)
        if len(delivered) == 2:  # the quick tasks are back: wait for both workers to be busy, then Ctrl-C
            give_up = time.monotonic() + 120  # a worker that never starts fails the check below
            while len(list(tmp_path.glob("*-600.0"))) < 2 and time.monotonic() < give_up:
                time.sleep(0.05)
            raise KeyboardInterrupt

    jobs = [(tmp_path, 0.0), (tmp_path, 0.0), (tmp_path, 600.0), (tmp_path, 600.0)]
    with pytest.raises(KeyboardInterrupt):
        run_tasks(note_pid_then_sleep, jobs, ExecutorSpec(workers=2), deliver)
    assert delivered == [0, 1]
    busy = [int(path.name.partition("-")[0]) for path in tmp_path.glob("*-600.0")]
    assert len(busy) == 2 and not any(_alive(pid) for pid in busy)
