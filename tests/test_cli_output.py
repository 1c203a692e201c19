"""Output written to a file or pipe keeps every table cell: no 80-column cut when no terminal is asked."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from memtrace.cli.consoles import PIPED_WIDTH, RULE_WIDTH, output_console, rule_width

MEMTRACE = Path(sys.executable).with_name("memtrace")


def piped(*args: str | Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")} | {"NO_COLOR": "1"}
    result = subprocess.run(
        [str(MEMTRACE), *map(str, args)], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_piped_tables_are_written_at_full_width(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    piped("example", ws)
    out = piped("inspect", ws)
    header = next(line for line in out.splitlines() if "┃ run" in line)
    assert "versions" in header and "…" not in header
    assert max(len(line) for line in out.splitlines()) > 80
    rules = [line for line in out.splitlines() if line.startswith("─")]
    assert rules and all(len(line) <= RULE_WIDTH for line in rules)


def test_a_piped_console_is_wide_unless_columns_says_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # a file, not a terminal
    assert output_console().width == PIPED_WIDTH
    monkeypatch.setenv("COLUMNS", "123")
    assert output_console().width == 123


def test_rules_fill_a_terminal_but_not_a_wide_pipe() -> None:
    assert rule_width(Console(width=90)) == 90
    assert rule_width(Console(width=PIPED_WIDTH)) == RULE_WIDTH
