"""The root package exports replay, attribute and verify without loading the upper layers on import."""

from __future__ import annotations

import subprocess
import sys

import pytest

import memtrace as mt
from memtrace.attribution.engine import attribute
from memtrace.attribution.verify import verify
from memtrace.systems.replay import replay


def python(code: str) -> str:
    """Run `code` in a fresh interpreter, so no earlier import hides a cycle."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_lazy_names_are_the_functions_of_their_modules() -> None:
    assert mt.replay is replay and mt.attribute is attribute and mt.verify is verify
    for name in mt.LAZY_EXPORTS:
        assert name in mt.__all__ and name in dir(mt)


def test_importing_memtrace_does_not_load_the_systems_or_attribution() -> None:
    loaded = python(
        "import sys, memtrace; print(sorted(m for m in sys.modules if m.startswith('memtrace.')))"
    )
    assert "memtrace.systems" not in loaded and "memtrace.attribution" not in loaded
    assert "memtrace.trace" in loaded


@pytest.mark.parametrize(
    "first",
    [
        "from memtrace import replay, attribute, verify",
        "import memtrace.systems.mem0",
        "import memtrace.cli.app",
    ],
)
def test_no_import_order_makes_a_cycle(first: str) -> None:
    out = python(f"{first}\nimport memtrace as mt\nprint(mt.replay.__module__, mt.verify.__name__)")
    assert out == "memtrace.systems.replay verify"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'replya'"):
        _ = mt.replya  # type: ignore[attr-defined]
