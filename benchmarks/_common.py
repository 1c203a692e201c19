"""Helpers the benchmark scripts share: which code was measured, and how a goal is shown."""

from __future__ import annotations

import subprocess
from pathlib import Path


def code_version() -> str:
    """The memtrace commit measured (with '+dirty' when src/ has uncommitted changes)."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def goal_status(met: bool) -> str:
    return "[green]met[/green]" if met else "[red]not met[/red]"
