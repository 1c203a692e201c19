"""The suite's own guard: pytest as this project configures it fails a run that leaves a workspace open.

Each case runs a small test file in a child pytest with the project's pyproject.toml, as `make test` does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LEAKING = """
import memtrace as mt

def test_reads_a_workspace(tmp_path):
    ws = mt.open(tmp_path / "ws", create=True)
    assert ws.runs() == []
"""

CLOSING = """
import memtrace as mt

def test_reads_a_workspace(tmp_path):
    with mt.open(tmp_path / "ws", create=True) as ws:
        assert ws.runs() == []
"""


def run_pytest_on(source: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """pytest with the project's configuration on one test file written into `folder`."""
    test_file = folder / "test_case.py"
    test_file.write_text(source)
    command = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(folder)]
    command += ["-p", "no:cacheprovider", "--basetemp", str(folder / "tmp"), "-q", str(test_file)]
    return subprocess.run(command, capture_output=True, text=True, cwd=folder, timeout=300)


@pytest.mark.parametrize(("source", "fails"), [(LEAKING, True), (CLOSING, False)], ids=["open", "closed"])
def test_a_workspace_left_open_fails_the_run(tmp_path: Path, source: str, fails: bool) -> None:
    result = run_pytest_on(source, tmp_path)
    output = result.stdout + result.stderr
    assert (result.returncode != 0) == fails, output
    assert ("ResourceWarning: unclosed database" in output) == fails, output
