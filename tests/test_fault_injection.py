"""Fault injection: kills, races, corrupt files, hostile data and bad paths lose nothing and crash nothing."""

from __future__ import annotations

import logging
import multiprocessing
import os
from pathlib import Path

import pytest

import memtrace as mt
from memtrace.graph import journal as journal_module
from memtrace.graph.journal import JOURNAL_DIR


def _record_one_op(workspace: Path, name: str, flush_every: int = 1) -> str:
    with mt.run(workspace, name=name) as run:
        run.flush_every = flush_every
        with mt.op("step") as op:
            op.output("x", name)
        return run.id


# -- data loss and lock-out --------------------------------------------------------------------


def test_a_reader_opening_right_as_the_journal_appears_sees_a_live_run(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The moment a journal is visible it is already locked, so a reader never buries a live run."""
    real_rename = os.rename
    seen_by_reader: list[str] = []

    def rename_then_read(src: str | Path, dst: str | Path) -> None:
        real_rename(src, dst)
        reader = mt.open(workspace)
        seen_by_reader.extend(run.status for run in reader.runs())
        reader.close()

    monkeypatch.setattr(journal_module.os, "rename", rename_then_read)
    run_id = _record_one_op(workspace, "raced")
    monkeypatch.undo()
    assert seen_by_reader == ["running"]
    ws = mt.open(workspace)
    assert ws.run(run_id).status == "complete"
    assert ws.store.count("ops", run_id) == 1


def _open_in_a_loop(workspace: str, stop: multiprocessing.synchronize.Event) -> None:
    while not stop.is_set():
        mt.open(workspace).close()


def test_no_run_is_lost_to_a_reader_opening_the_workspace_in_a_loop(workspace: Path) -> None:
    _record_one_op(workspace, "first")
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    reader = context.Process(target=_open_in_a_loop, args=(str(workspace), stop))
    reader.start()
    try:
        ids = [_record_one_op(workspace, f"run-{i}") for i in range(150)]
    finally:
        stop.set()
        reader.join(timeout=60)
    assert reader.exitcode == 0
    ws = mt.open(workspace)
    lost = [
        run_id for run_id in ids if ws.run(run_id).status != "complete" or ws.store.count("ops", run_id) != 1
    ]
    assert lost == []


@pytest.mark.parametrize("bad_length", [b"\xff" * 8, (1 << 40).to_bytes(8, "little")])
def test_a_corrupt_frame_length_keeps_the_good_prefix_and_warns_once(
    workspace: Path, bad_length: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    with mt.run(workspace, name="r") as run:
        run.flush_every = 1
        with mt.op("a") as op:
            op.output("x", 1)
        run.flush()
        (journal,) = (workspace / JOURNAL_DIR).glob("*.jnl")
        good = journal.stat().st_size
        with mt.op("b") as op:
            op.output("x", 2)
        run.flush()
    data = bytearray(journal.read_bytes())
    data[good : good + 8] = bad_length
    journal.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="memtrace"):
        ws = mt.open(workspace)
    recorded = ws.run(run.id)
    assert recorded.status == "incomplete" and f"damaged at byte {good}" in recorded.error
    assert ws.graph(run.id).value("x@1") == 1
    assert not list((workspace / JOURNAL_DIR).glob("*.jnl"))
    assert list((workspace / JOURNAL_DIR).glob("*.damaged"))
    assert [record.levelname for record in caplog.records] == ["WARNING"]
    assert run.id in caplog.records[0].getMessage()
    ws.close()
    assert mt.open(workspace).run(run.id).status == "incomplete"  # opening again stays quiet and works
