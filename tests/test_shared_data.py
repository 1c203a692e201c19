"""Tests that need the shared LoCoMo file: one fixture finds it, one variable moves it, one reason skips."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHARED_DATA_ENV, locomo_dev_file, missing_locomo_reason

TESTS = Path(__file__).resolve().parent


def test_the_variable_names_the_folder_of_the_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(SHARED_DATA_ENV, str(tmp_path))
    assert locomo_dev_file() == tmp_path / "locomo-dev.json"
    monkeypatch.delenv(SHARED_DATA_ENV)
    assert locomo_dev_file().parent.parts[-2:] == ("shared", "data")


def test_no_test_module_looks_for_the_shared_data_on_its_own() -> None:
    own_paths = [
        path.relative_to(TESTS)
        for path in TESTS.rglob("*.py")
        if path.name != "conftest.py" and re.search(r"""/ ["']shared["']""", path.read_text(encoding="utf-8"))
    ]
    assert own_paths == []


def test_without_the_file_every_locomo_test_skips_with_the_one_reason(tmp_path: Path) -> None:
    env = {**os.environ, SHARED_DATA_ENV: str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-m", "locomo", "-p", "no:cacheprovider", str(TESTS)],
        capture_output=True,
        text=True,
        env=env,
        cwd=TESTS.parent,
        timeout=300,
    )
    skipped = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    summary = result.stdout.strip().splitlines()[-1]
    assert "passed" not in summary and "failed" not in summary, result.stdout
    reasons = {line.split(": ", 1)[1] for line in skipped}
    assert reasons == {missing_locomo_reason(tmp_path / "locomo-dev.json")}
    count = sum(int(n) for n in re.findall(r"\[(\d+)\]", " ".join(skipped)))
    assert count >= 11
