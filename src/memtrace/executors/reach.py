"""What a worker needs of the driver besides its task: the plugins code registered, and where to find them.

A fresh worker knows memtrace's built-ins and the installed entry points, not the systems and methods a
script or a test registered at run time. The driver sends those with every task (pickled, so by
module and name: the worker imports the module that defines them, with the driver's `sys.path`), plus
its `MEMTRACE_*` settings for local workers (a forkserver keeps the environment it started with).
A plugin no worker could import (a lambda, a class made inside a function or typed into an
interactive session) makes the tasks run in the driver instead, with the reason, never a wrong result.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import pickle
import sys
from dataclasses import dataclass
from typing import Any

from ..plugins import Registration, code_registrations, restore_registrations

#: The environment variables a local worker takes from the driver at every task.
ENV_PREFIX = "MEMTRACE_"


@dataclass(slots=True, frozen=True)
class WorkerSetup:
    """What a worker sets up before a task: the driver's registrations, import path and settings."""

    registrations: bytes = b""
    sys_path: tuple[str, ...] = ()
    #: The driver's MEMTRACE_* variables (None: leave the worker's own, as on a Ray cluster).
    environment: tuple[tuple[str, str], ...] | None = None


def driver_setup(kind: str) -> tuple[WorkerSetup, str | None]:
    """This process's setup for workers of executor `kind`, or why they cannot have it (then the tasks
    run in this process)."""
    items = code_registrations()
    for item in items:
        problem = unreachable(item.plugin, kind)
        if problem is not None:
            why = f"{item.kind} {item.name!r} {problem}, so a worker process cannot have it"
            return WorkerSetup(), f"{why}: running in this process"
    environment = None
    if kind == "local":
        environment = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX)))
    blob = pickle.dumps(items) if items else b""
    return WorkerSetup(blob, tuple(sys.path), environment), None


def unreachable(plugin: Any, kind: str) -> str | None:
    """Why a worker could not rebuild `plugin` from its pickle, or None when it can."""
    found = _Referenced(io.BytesIO())
    try:
        found.dump(plugin)
    except Exception as exc:  # pickle raises many types; each means the same here
        return _by_name(found.names, kind) or f"does not pickle ({exc})"
    return _by_name(found.names, kind)


def _by_name(names: list[tuple[str, str]], kind: str) -> str | None:
    """Why a class or function a pickle refers to (module, qualified name) is out of a worker's reach."""
    for module, qualname in names:
        if "<lambda>" in qualname:
            return "is a lambda"
        if "<locals>" in qualname:
            return f"is defined inside a function ({qualname})"
        if module == "__main__":
            if not getattr(sys.modules.get("__main__"), "__file__", None):
                return "is defined in __main__ of an interactive session"
            if kind != "local":  # a process pool imports the script again; Ray workers do not
                return "is defined in the script run as __main__, which Ray workers do not import"
        elif module and importlib.util.find_spec(module.partition(".")[0]) is None:
            return f"comes from module {module}, which a worker cannot import"
    return None


class _Referenced(pickle.Pickler):
    """A pickler noting every class and function it pickles by reference (module, qualified name)."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file)
        self.names: list[tuple[str, str]] = []

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type) or (callable(obj) and hasattr(obj, "__qualname__")):
            self.names.append((getattr(obj, "__module__", None) or "", obj.__qualname__))
        return NotImplemented


#: Digests of the registrations this worker process already restored.
_restored: set[bytes] = set()


def set_up(setup: WorkerSetup) -> None:
    """In a worker, before a task: the driver's settings and import path, its registrations once."""
    if setup.environment is not None:
        wanted = dict(setup.environment)
        for key in [k for k in os.environ if k.startswith(ENV_PREFIX) and k not in wanted]:
            del os.environ[key]
        os.environ.update(wanted)
    for path in setup.sys_path:
        if path not in sys.path:
            sys.path.append(path)
    if setup.registrations:
        digest = hashlib.sha256(setup.registrations).digest()
        if digest not in _restored:
            items: list[Registration] = pickle.loads(setup.registrations)
            restore_registrations(items)
            _restored.add(digest)
