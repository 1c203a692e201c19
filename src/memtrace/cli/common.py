"""What every command shares: the consoles, the progress bar, `--json` output and the LLM client options.

Commands import these from here, never from `app` (which imports every command): no circle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.progress import Progress

from .consoles import JsonOption, console, errors, write_json
from .llm_options import (
    DEFAULT_CONCURRENCY,
    ConcurrencyOption,
    JudgeBaseUrlOption,
    JudgeModelOption,
    JudgeOption,
    LLMLimits,
    MaxTokensOption,
    RetriesOption,
    TimeoutOption,
    closing_client,
)
from .progress import progress_bar

__all__ = [
    "DEFAULT_CONCURRENCY",
    "ConcurrencyOption",
    "JsonOption",
    "JudgeBaseUrlOption",
    "JudgeModelOption",
    "JudgeOption",
    "LLMLimits",
    "MaxTokensOption",
    "RetriesOption",
    "TimeoutOption",
    "closing_client",
    "console",
    "errors",
    "llm_client",
    "progress",
    "write_json",
]


def llm_client(
    kind: str, model: str | None, base_url: str | None, workspace: Path, limits: LLMLimits | None = None
) -> Any:
    """The model client a command's `--llm/--model/--base-url` options ask for (None offline)."""
    from .llm_options import llm_client as build

    return build(kind, model, base_url, workspace, limits)


def progress() -> Progress:
    """The command line's progress bar on its console."""
    return progress_bar(console)
