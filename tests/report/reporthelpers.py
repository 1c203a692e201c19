"""Workspaces for the report tests: the four systems over the bundled sample, recorded once per session.

`attributed_workspace()` holds flow attributions; `verified_workspace()` is the same verified by replay,
so it also holds replay runs and verification outcomes. Tests copy them before changing them.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from memtrace import Workspace
from memtrace.attribution.engine import attribute
from memtrace.attribution.verify.counterfactual import verify_all
from memtrace.datasets import load_dataset
from memtrace.systems import run_conversation
from memtrace.systems.registry import BUILTIN_SYSTEMS, system_class

_CACHE: dict[str, Path] = {}


def record_sample(workspace: Path, systems: list[str] | None = None) -> list[str]:
    """Run systems (default: the offline built-ins) over sample conversation 0 into `workspace`."""
    (conversation,) = load_dataset("sample")
    offline = [name for name in BUILTIN_SYSTEMS if system_class(name).runs_offline]
    return [
        run_conversation(system_class(name)(), conversation, workspace, dataset="sample").run_id
        for name in systems or offline
    ]


def _build() -> None:
    """Record the sample once; keep an attributed copy, then verify the original."""
    folder = Path(tempfile.mkdtemp(prefix="memtrace-report-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    workspace = folder / "verified"
    record_sample(workspace)
    with Workspace(workspace) as ws:
        attribute(ws, "flow")
    _CACHE["attributed"] = copy_workspace(workspace, folder / "attributed")
    verify_all(workspace, method="flow")
    _CACHE["verified"] = workspace


def attributed_workspace() -> Path:
    """The four systems over the sample with flow attributions, not verified (do not modify)."""
    if "attributed" not in _CACHE:
        _build()
    return _CACHE["attributed"]


def verified_workspace() -> Path:
    """The same, verified by replay: it holds replay runs and verification outcomes (do not modify)."""
    if "verified" not in _CACHE:
        _build()
    return _CACHE["verified"]


def copy_workspace(source: Path, target: Path) -> Path:
    """A private copy of a workspace folder (its database and snapshots)."""
    shutil.copytree(source, target)
    return target
