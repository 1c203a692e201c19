"""`bench memtracebench --llm openai` closes the model client it opened (its HTTP pool and LLM-cache
database), as run, attribute and verify do."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memtrace.cli import bench_cmd
from memtrace.cli.app import app

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_bench_memtracebench import write_benchmark


class ClientDouble:
    """Stands in for the OpenAI-compatible client: the baseline never calls it; only closing is watched."""

    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_the_model_client_is_closed_after_the_benchmark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = write_benchmark(tmp_path, tmp_path / "runs")
    opened: list[ClientDouble] = []

    def open_client(*args: Any, **kwargs: Any) -> ClientDouble:
        opened.append(ClientDouble())
        return opened[-1]

    monkeypatch.setattr(bench_cmd, "llm_client", open_client)
    result = CliRunner().invoke(
        app, ["bench", "memtracebench", str(bench), "--method", "last-op", "--llm", "openai"]
    )
    assert result.exit_code == 0, result.output
    assert [client.closed for client in opened] == [1]
