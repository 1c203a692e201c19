"""The folder a process keeps its tasks' scratch workspaces in, and its removal once that process is gone.

Ctrl-C, a dead sibling or a Ray cluster's shutdown ends workers without any clean-up of theirs. So each
process holds a lock on its folder while it lives (an exit that runs clean-up removes the folder at
once), and the next process to make a folder removes every other one whose lock it can take.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from multiprocessing.util import Finalize
from pathlib import Path
from typing import IO

PREFIX = "memtrace-worker-"
_LOCK = ".held"

#: This process's folder: (pid that made it, path, the open locked file).
_mine: tuple[int, Path, IO[bytes]] | None = None


def worker_folder() -> Path:
    """This process's scratch folder: made and locked on first use, after sweeping abandoned ones."""
    global _mine
    if _mine is not None and _mine[0] == os.getpid() and _mine[1].is_dir():
        return _mine[1]
    sweep()
    path = Path(tempfile.mkdtemp(prefix=PREFIX))
    draft = path / f"{_LOCK}.new"
    handle = open(draft, "wb")  # noqa: SIM115 - held open for the life of the process
    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.rename(draft, path / _LOCK)  # a sweeper only looks at a lock already held
    _mine = (os.getpid(), path, handle)
    Finalize(None, _remove, args=(path, handle), exitpriority=10)
    return path


def sweep() -> None:
    """Remove the folders of processes that are gone (their lock is free)."""
    for path in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            handle = open(path / _LOCK, "rb")  # noqa: SIM115 - closed below
        except OSError:  # no lock yet (being made) or not ours to read
            continue
        with handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its process lives
            shutil.rmtree(path, ignore_errors=True)


def _remove(path: Path, handle: IO[bytes]) -> None:
    """At a clean exit: this process's folder goes with it."""
    if _mine is not None and _mine[0] == os.getpid():
        shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(OSError):
        handle.close()
