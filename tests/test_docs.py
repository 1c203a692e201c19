"""The Python in the user docs runs as written: each file's blocks in order, in an empty folder."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest
from rich.console import Console

import memtrace as mt
from memtrace import Workspace
from memtrace.attribution.registry import method_names, unregister_attributor
from memtrace.cli.attribute_cmd import grouped_table
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


def attribute_readme_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: str) -> tuple[str, list]:
    """Record `block` (the README's first example or a variant) in tmp_path, then run `memtrace
    attribute` on it as a user would: the table it prints and the --json rows."""
    from typer.testing import CliRunner

    from memtrace.cli.app import app

    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md block 1", "exec", dont_inherit=True), {"__name__": "readme_example"})
    result = CliRunner().invoke(app, ["attribute", "ws", "--json", "out.json"])
    assert result.exit_code == 0, result.output
    return result.output, json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))


def test_the_readme_first_example_attributes_to_the_update_that_overwrote_boston(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """concepts.md's criterion: mem-17 held Boston and update_memory replaced it with Paris before the
    question, so the update is the earliest decisive fault (not the answer step that said Paris)."""
    output, rows = attribute_readme_example(tmp_path, monkeypatch, python_blocks(ROOT / "README.md")[0])
    (row,) = rows
    assert row["error_type"] == "UpdateError"
    assert row["op_id"] == "update_memory#5" and row["confidence"] > 0.5
    assert "UpdateError" in output and "update_memory" in output
    assert "why undetermined" not in output  # the column appears only when a row needs it


def test_an_undetermined_row_prints_its_reason_in_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's example without `var=`: Undetermined, and the table (not only --json) says why."""
    block = python_blocks(ROOT / "README.md")[0]
    unlinked = block.replace('case.predict("Paris", var=prediction)', 'case.predict("Paris")')
    assert unlinked != block
    output, rows = attribute_readme_example(tmp_path, monkeypatch, unlinked)
    (row,) = rows
    assert row["error_type"] == "Undetermined" and "no prediction variable" in row["explanation"]
    assert "why undetermined" in output
    assert row["explanation"] in " ".join(output.split())
    with mt.open(tmp_path / "ws") as ws:  # past 40 rows the table groups cases: it gives an example
        grouped = grouped_table(ws, mt.attribute(ws), "grouped")
    console = Console(width=200, record=True)
    console.print(grouped)
    assert f"e.g. {row['explanation']}" in " ".join(console.export_text().split())
