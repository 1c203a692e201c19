"""`memtrace ui`: serves the workspace on loopback and prints its URL; a bad folder is one line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import OutputLines, run_cli_in_process, stop_process

LAUNCH = "from memtrace.cli.app import main; main()"


def test_ui_prints_its_url_and_serves_the_workspace(sample_ws: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "ui", str(sample_ws), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    ) as server:
        assert server.stdout is not None
        try:
            line = OutputLines(server.stdout).wait_for("http://127.0.0.1:")
            found = re.search(r"http://127\.0\.0\.1:\d+/", line)
            assert found, line
            deadline = time.monotonic() + 60  # a guard against a hang, not a speed
            while True:
                try:
                    with urllib.request.urlopen(found.group(0) + "api/runs", timeout=5) as response:
                        runs = json.load(response)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
        finally:
            server.terminate()
            stop_process(server)
    assert [r["system"] for r in runs] == ["mem0"]


def test_ui_on_a_missing_workspace_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli_in_process(capsys, "ui", tmp_path / "nowhere", "--port", "0")
    assert code == 1
    assert "not a memtrace workspace" in err and len(err.strip().splitlines()) == 1
