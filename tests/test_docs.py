"""The Python in the user docs runs as written: each file's blocks in order, in an empty folder."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

from memtrace import Workspace
from memtrace.attribution.registry import method_names, unregister_attributor
from memtrace.systems.registry import system_names, unregister_system

ROOT = Path(__file__).resolve().parents[1]
DOCS = [
    ROOT / "README.md",
    ROOT / "docs" / "python-api.md",
    ROOT / "docs" / "systems.md",
    ROOT / "docs" / "opentelemetry.md",
]
USER_DOCS = [*DOCS, ROOT / "docs" / "concepts.md", ROOT / "docs" / "mem0ai.md"]


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_the_python_blocks_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = python_blocks(path)
    assert blocks, f"{path.name} has no python block"
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType(f"doc_{path.stem}")  # importable, as a user's module is: snapshots pickle
    monkeypatch.setitem(sys.modules, module.__name__, module)  # instances of its classes by reference
    namespace = module.__dict__
    systems, methods = set(system_names()), set(method_names())
    try:
        for number, block in enumerate(blocks, 1):
            exec(compile(block, f"{path.name} block {number}", "exec", dont_inherit=True), namespace)
    finally:  # what a doc registers or opens is not left for the tests that follow
        for value in list(namespace.values()):
            if isinstance(value, Workspace):  # a REPL-style `ws = mt.open(...)`, closed as its session ends
                value.close()
        for name in set(system_names()) - systems:
            unregister_system(name)
        for name in set(method_names()) - methods:
            unregister_attributor(name)


@pytest.mark.parametrize("path", USER_DOCS, ids=lambda p: p.name)
def test_links_stay_inside_the_project(path: Path) -> None:
    """A user's clone has no ../shared: every relative link must point at a file in the repository."""
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        resolved = (path.parent / target).resolve()
        assert resolved.is_relative_to(ROOT) and resolved.exists(), f"{path.name} links to {target}"
    assert "DESIGN.md" not in path.read_text(encoding="utf-8")  # the team notes are not shipped
