"""The suite's own hygiene: pytest as this project configures it fails a run that leaves a workspace
open (a child pytest with the project's pyproject.toml, as `make test` runs), and the temporary mem0
home the mem0ai tests make is gone when their process ends.
"""

from __future__ import annotations

import os
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


def test_the_mem0_home_made_for_a_test_process_is_removed_when_it_ends(tmp_path: Path) -> None:
    """mem0helpers points MEM0_DIR at a fresh temporary folder (mem0 reads it once, at import)."""
    helpers = ROOT / "tests" / "mem0ai"
    script = f"import sys; sys.path.insert(0, {str(helpers)!r}); import os, mem0helpers; "
    script += "print(os.environ['MEM0_DIR'])"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("MEM0_DIR", None)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    home = Path(result.stdout.strip())
    assert home.parent == tmp_path and home.name.startswith("memtrace-test-mem0-home-")
    assert not home.exists() and list(tmp_path.iterdir()) == []
