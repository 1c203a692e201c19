"""Large values many tasks share (a run's rows and snapshots), sent once instead of with every task.

The driver puts a value in a `Stash` and each task's payload carries the small `Stashed` handle; a
worker fetches the value when it first needs it. On Ray the stash is the object store, so no
filesystem is shared; for the local pool, whose workers run on the driver's machine, it is a private
temporary folder of the driver's, removed when the stash closes.
"""

from __future__ import annotations

import pickle
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .spec import ExecutorSpec


@dataclass(frozen=True, slots=True)
class Stashed:
    """A stashed value's handle: `key` names it uniquely (a worker caches by it), `where` finds it."""

    key: str
    where: Any  # a file path (local pool) or a Ray ObjectRef


class Stash:
    """The driver's side: values put here stay fetchable until the stash is closed."""

    def __init__(self, spec: ExecutorSpec) -> None:
        self.id = secrets.token_hex(8)  # keys of one stash never name another stash's values
        self._ray: Any = None
        self._folder: Path | None = None
        if spec.kind == "ray":
            from .ray_backend import connect

            self._ray = connect(spec)
        else:
            self._folder = Path(tempfile.mkdtemp(prefix="memtrace-stash-"))
        self._count = 0

    @property
    def folder(self) -> str | None:
        """The local stash's folder (None on Ray): a local worker's scratch files go there too, so
        that closing the stash removes them even when the worker was stopped mid-task (Ctrl-C)."""
        return None if self._folder is None else str(self._folder)

    def put(self, name: str, value: Any) -> Stashed:
        """Keep `value` (picklable) for the workers; the handle is what a task payload carries."""
        self._count += 1
        key = f"{self.id}/{name}"
        if self._ray is not None:
            return Stashed(key, self._ray.put(value))
        assert self._folder is not None
        path = self._folder / f"{self._count}.pkl"
        path.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        return Stashed(key, str(path))

    def close(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def __enter__(self) -> Stash:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def fetch(stashed: Stashed) -> Any:
    """In a worker: the value behind `stashed` (the caller keeps it if it wants it again)."""
    if isinstance(stashed.where, str):
        return pickle.loads(Path(stashed.where).read_bytes())
    import ray

    return ray.get(stashed.where)
