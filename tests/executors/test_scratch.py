"""A worker's scratch folder outlives a worker killed mid-task only until the next process sweeps it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from memtrace.executors.scratch import PREFIX, sweep, worker_folder


def test_a_gone_process_folder_is_swept_and_a_live_one_kept() -> None:
    mine = worker_folder()
    gone = Path(tempfile.mkdtemp(prefix=PREFIX))  # as a killed worker leaves it: its lock is free
    (gone / ".held").touch()
    (gone / "run-1").mkdir()
    making = Path(tempfile.mkdtemp(prefix=PREFIX))  # no lock yet: a process is making it
    try:
        sweep()
        assert not gone.exists()
        assert mine.is_dir() and worker_folder() == mine  # held by this process: kept, and reused
        assert making.is_dir()
    finally:
        making.rmdir()
