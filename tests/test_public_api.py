"""The root package exports replay, attribute and verify plainly: no layer below imports it back."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import memtrace as mt
from memtrace.attribution.engine import attribute
from memtrace.attribution.verify.counterfactual import verify
from memtrace.systems.replay import replay
from memtrace.vocabulary import ErrorType, Verdict

PACKAGE = Path(mt.__file__).parent


def python(code: str) -> str:
    """Run `code` in a fresh interpreter, so no earlier import hides a cycle."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_exported_names_are_the_functions_of_their_modules() -> None:
    assert mt.replay is replay and mt.attribute is attribute and mt.verify is verify
    assert mt.ErrorType is ErrorType and mt.Verdict is Verdict
    for name in mt.__all__:
        assert hasattr(mt, name), name


def imports_the_root(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name == "memtrace" for alias in node.names)
    return isinstance(node, ast.ImportFrom) and node.module == "memtrace" and node.level == 0


def test_no_layer_below_the_front_doors_imports_the_root_package() -> None:
    """The systems once imported `memtrace` itself, which made a cycle of the root's upper-layer exports."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] in ("cli", "ui"):
            continue
        tree = ast.parse(path.read_text(), str(path))
        offenders += [str(path.relative_to(PACKAGE)) for node in ast.walk(tree) if imports_the_root(node)]
    assert offenders == []


@pytest.mark.parametrize(
    "first",
    [
        "from memtrace import replay, attribute, verify",
        "import memtrace.systems.mem0",
        "import memtrace.graph",
        "import memtrace.cli.app",
    ],
)
def test_no_import_order_makes_a_cycle(first: str) -> None:
    out = python(f"{first}\nimport memtrace as mt\nprint(mt.replay.__module__, mt.verify.__name__)")
    assert out == "memtrace.systems.replay verify"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'replya'"):
        _ = mt.replya  # type: ignore[attr-defined]


def test_importing_memtrace_to_record_loads_no_upper_layer() -> None:
    """Recording needs only the tracing API: the attributors, systems and numpy load on first use."""
    out = python(
        "import sys\nimport memtrace as mt\n"
        "heavy = ('numpy', 'memtrace.attribution', 'memtrace.systems')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "mt.attribute\nprint('memtrace.attribution' in sys.modules)"
    )
    assert out.splitlines() == ["[]", "True"]


def test_the_command_line_starts_without_the_systems_retrievers_or_methods() -> None:
    """Every `memtrace` command, `--help` included, pays the CLI's import: the heavy layers load when
    a command runs. `memtrace.attribution`'s own exports load on first use too."""
    out = python(
        "import sys\nimport memtrace.cli.app\n"
        "heavy = ('numpy', 'bm25s', 'memtrace.systems', 'memtrace.datasets',"
        " 'memtrace.attribution.methods.flow')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "from memtrace.attribution import FlowMethod\nprint(FlowMethod.name)"
    )
    assert out.splitlines() == ["[]", "flow"]
