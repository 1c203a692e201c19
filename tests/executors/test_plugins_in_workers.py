"""Systems and methods registered at run time reach the workers; one that cannot runs in the driver.

The plugins here are defined in this test module, as a user's script would define its own: a worker
imports this module again to have them. Each notes the process it ran in, so a test tells a run in
a worker from the fallback in the driver.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from store_dump import store_rows

from conftest import run_cli_in_process
from memtrace.attribution.methods.baselines import LastOpMethod
from memtrace.attribution.registry import register_attributor, unregister_attributor
from memtrace.executors.reach import unreachable
from memtrace.systems.rag import RAGSystem
from memtrace.systems.registry import register_system, unregister_system

#: A MEMTRACE_* variable: local workers take the driver's, so they write their pids here too.
PIDS_ENV = "MEMTRACE_TEST_PIDS"


def _note_pid() -> None:
    if path := os.environ.get(PIDS_ENV):
        with open(path, "a") as handle:
            handle.write(f"{os.getpid()}\n")


class PidRag(RAGSystem):
    """RAG under a name of its own, noting the process that records it."""

    name = "test_pid_rag"

    def reset(self) -> None:
        _note_pid()
        super().reset()


class PidLastOp(LastOpMethod):
    """The last-op baseline under a name of its own, noting the process that attributes."""

    name = "test-pid-last-op"

    def attribute(self, graph: Any, case: Any) -> Any:
        _note_pid()
        return super().attribute(graph, case)


@pytest.fixture
def pids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "pids"
    monkeypatch.setenv(PIDS_ENV, str(path))
    return path


@pytest.fixture
def plugins() -> Iterator[None]:
    register_system(PidRag)
    register_attributor(PidLastOp.name, PidLastOp)
    try:
        yield
    finally:
        unregister_system(PidRag.name)
        unregister_attributor(PidLastOp.name)


def _both(capsys: Any, workspace: Path, workers: int, system: str, method: str) -> str:
    """`run` then `attribute` with `workers`: what they printed."""
    printed = []
    for args in (
        ("run", workspace, "--system", system, "--conversations", 2),
        ("attribute", workspace, "--method", method),
    ):
        code, out, err = run_cli_in_process(capsys, *args, "--workers", workers)
        assert code == 0, err
        printed.append(out)
    return "".join(printed)


def _seen(pids: Path) -> set[int]:
    seen = {int(line) for line in pids.read_text().split()}
    pids.unlink()
    return seen


def test_a_registered_system_and_method_run_in_workers(
    plugins: None, pids: Path, tmp_path: Path, capsys: Any
) -> None:
    printed = _both(capsys, tmp_path / "one", 1, PidRag.name, PidLastOp.name)
    assert _seen(pids) == {os.getpid()}
    printed = _both(capsys, tmp_path / "two", 2, PidRag.name, PidLastOp.name)
    workers = _seen(pids)
    assert "note:" not in printed
    assert os.getpid() not in workers and len(workers) >= 1  # both stages ran in worker processes
    expected = store_rows(tmp_path / "one")
    assert {row[2] for row in expected["runs"]} == {PidRag.name} and expected["attributions"]
    assert store_rows(tmp_path / "two") == expected


def test_a_lambda_method_runs_in_the_driver_with_a_notice(
    plugins: None, pids: Path, tmp_path: Path, capsys: Any
) -> None:
    register_attributor("test-lambda", lambda: PidLastOp())
    try:
        _both(capsys, tmp_path / "one", 1, PidRag.name, "test-lambda")
        _seen(pids)
        printed = _both(capsys, tmp_path / "two", 2, PidRag.name, "test-lambda")
    finally:
        unregister_attributor("test-lambda")
    notice = "note: attribution method 'test-lambda' is a lambda, so a worker process cannot have it"
    assert printed.count(notice) == 2  # once per command: run and attribute both stayed here
    assert f"{notice}: running in this process" in printed
    assert _seen(pids) == {os.getpid()}
    assert store_rows(tmp_path / "two") == store_rows(tmp_path / "one")


def test_a_system_made_inside_a_function_runs_in_the_driver(pids: Path, tmp_path: Path, capsys: Any) -> None:
    class LocalRag(PidRag):
        name = "test_local_rag"

    register_system(LocalRag)
    try:
        code, out, err = run_cli_in_process(
            capsys, "run", tmp_path / "ws", "--system", LocalRag.name, "--conversations", 2
        )
    finally:
        unregister_system(LocalRag.name)
    assert code == 0, err
    assert "note: system 'test_local_rag' is defined inside a function" in out
    assert _seen(pids) == {os.getpid()}


def test_what_an_interactive_session_defines_cannot_reach_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    main = sys.modules["__main__"]
    typed = type("Typed", (PidRag,), {"name": "typed", "__module__": "__main__"})
    monkeypatch.setattr(main, "Typed", typed, raising=False)
    assert unreachable(typed, "local") is None  # a script's __main__: a process pool imports it again
    assert "Ray workers do not import" in (unreachable(typed, "ray") or "")
    monkeypatch.delattr(main, "__file__", raising=False)
    assert unreachable(typed, "local") == "is defined in __main__ of an interactive session"
    assert unreachable(PidRag, "ray") is None
