"""A sample workspace the UI tests share: the bundled sample through mem0, attributed, a few verified."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from memtrace.cli.app import app


@pytest.fixture(scope="session")
def sample_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mem0 over the sample conversation, with flow attributions and three replay verifications."""
    path = tmp_path_factory.mktemp("ui") / "ws"
    runner = CliRunner()
    for args in (
        ["run", str(path), "--system", "mem0", "--dataset", "sample"],
        ["attribute", str(path)],
        ["verify", str(path), "--limit", "3"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    return path
