"""The system contract (docs/systems.md), checked on every built-in system and a user's own.

`check_system` records the sample conversation and replays it three ways; a system breaking a rule
(state that does not pickle, a context recorded with output() instead of produce(), a route to a
setting without a grid) is refused with a message naming the rule.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from notebook_system import NotebookConfig, NotebookSystem
from pluginhelpers import registered

import memtrace as mt
from memtrace.datasets import Question
from memtrace.systems import RETRIEVAL, Answer, MemorySystem, answer_question, on
from memtrace.systems.contract import SystemContractError, check_declaration, check_system
from memtrace.systems.registry import BUILTIN_SYSTEMS, system_class


@pytest.mark.parametrize("name", BUILTIN_SYSTEMS)
def test_every_builtin_system_keeps_the_contract(tmp_path: Path, name: str) -> None:
    cls = system_class(name)
    if not cls.runs_offline:
        pytest.skip(f"{name} needs a model: the realmodel tier runs it")
    report = check_system(cls, tmp_path)
    assert report.system == name and report.cases == 31 and len(report.replays) == 3


def test_a_users_own_system_keeps_the_contract(tmp_path: Path) -> None:
    with registered(NotebookSystem):
        report = check_system(NotebookSystem, tmp_path)
    assert report.cases == 31
    with mt.open(tmp_path) as ws:
        assert ws.run(report.run_id).system == "test_notebook"
        assert {ws.run(r).parent_run for r in report.replays} == {report.run_id}


def test_an_unregistered_system_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemContractError, match="not registered"):
        check_system(NotebookSystem, tmp_path)


class _OutputNotProduce(NotebookSystem):
    """Breaks the produce() rule: records its context with output() and answers from its own copy."""

    name = "test_output_not_produce"

    def answer(self, question: Question) -> Answer:
        with mt.op("read_notes", category="retrieval") as op:
            context = list(self.notes.values())[: self.config.top_k]
            var = op.output("retrieved", context, category="retrieved")
        return answer_question(question, context, config=self.config, llm=None, context_var=var)


class _LockedState(NotebookSystem):
    """Breaks the snapshot rule: its state holds a lock, which does not pickle."""

    name = "test_locked_state"

    def reset(self) -> None:
        super().reset()
        self.guard = threading.Lock()


@pytest.mark.parametrize(
    ("cls", "rule"),
    [(_OutputNotProduce, "op.produce()"), (_LockedState, "self.guard")],
)
def test_a_system_breaking_a_rule_is_named_with_the_rule(
    tmp_path: Path, cls: type[MemorySystem], rule: str
) -> None:
    with registered(cls), pytest.raises(SystemContractError, match=cls.name) as err:
        check_system(cls, tmp_path)
    assert rule in str(err.value)


def test_declarations_are_checked_before_anything_runs() -> None:
    class Undeclared(NotebookSystem):
        name = "all"
        routes = (on("read_notes", RETRIEVAL, "chunk_size", +1, "no such field"),)

    class Ungridded(NotebookConfig):
        top_k: int = 3

    class NoGrid(NotebookSystem):
        name = "test_no_grid"
        Config = Ungridded

    problems = check_declaration(Undeclared)
    assert any("'all'" in p for p in problems) and any("chunk_size" in p for p in problems)
    assert any("needs a Grid" in p for p in check_declaration(NoGrid))
    assert check_declaration(NotebookSystem) == []
    assert all(check_declaration(system_class(name)) == [] for name in BUILTIN_SYSTEMS)
