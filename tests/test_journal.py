"""The recording journal: indexed on the next open, ingested in parts while live, kept if a process dies."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import memtrace as mt
from conftest import OpenWorkspace, TwoFrameJournal
from memtrace.graph.journal import JOURNAL_DIR


def test_a_closed_run_is_ingested_on_open_and_its_journal_removed(
    workspace: Path, small_run: str, open_ws: OpenWorkspace
) -> None:
    assert list((workspace / JOURNAL_DIR).glob("*.jnl"))
    ws = open_ws(workspace)
    assert ws.run(small_run).status == "complete"
    assert not list((workspace / JOURNAL_DIR).glob("*.jnl"))
    assert ws.graph(small_run).lifecycle("mem-1")


def test_a_live_run_is_ingested_in_parts_without_duplicates(workspace: Path, open_ws: OpenWorkspace) -> None:
    with mt.run(workspace, name="live") as run:
        run.flush_every = 1
        for i in range(5):
            with mt.op("step") as op:
                op.input("x", i)
                op.output("y", i)
        partial = open_ws(workspace)
        assert partial.run(run.id).status == "running"
        assert partial.store.count("ops", run.id) == 5
        partial.close()
        for i in range(5, 8):
            with mt.op("step") as op:
                op.input("x", i)
                op.output("y", i)
    ws = open_ws(workspace)
    assert ws.run(run.id).status == "complete"
    assert ws.store.count("ops", run.id) == 8
    assert ws.store.count("edges", run.id) == 16
    assert open_ws(workspace).store.count("edges", run.id) == 16


def test_a_killed_process_keeps_what_it_flushed_and_is_marked_incomplete(
    workspace: Path, open_ws: OpenWorkspace
) -> None:
    script = textwrap.dedent(
        f"""
        import os, memtrace as mt
        run = mt.run({str(workspace)!r}, name="killed").__enter__()
        run.flush_every = 1
        with mt.op("extract_facts", category="extraction") as op:
            op.output("facts", ["Caroline moved to Boston"])
        run.flush()
        os._exit(9)  # no close, no atexit: as if the process were killed
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 9, result.stderr
    ws = open_ws(workspace)
    (run,) = ws.runs()
    assert run.status == "incomplete" and "ended without closing" in run.error
    assert ws.graph(run.id).value("facts@1") == ["Caroline moved to Boston"]


def test_a_truncated_last_frame_is_ignored(workspace: Path, small_run: str, open_ws: OpenWorkspace) -> None:
    (journal,) = (workspace / JOURNAL_DIR).glob("*.jnl")
    data = journal.read_bytes()
    journal.write_bytes(data + data[:20])  # a frame header and a few bytes of a frame cut off by a crash
    ws = open_ws(workspace)
    assert ws.run(small_run).status == "complete"
    assert ws.graph(small_run).lifecycle("mem-1")


def test_a_damaged_frame_keeps_what_came_before_and_says_where(
    workspace: Path, two_frame_journal: TwoFrameJournal, open_ws: OpenWorkspace
) -> None:
    two_frame_journal.overwrite(8, b"\xff" * 8)  # scribble over the next frame's payload
    ws = open_ws(workspace)
    recorded = ws.run(two_frame_journal.run_id)
    good = two_frame_journal.second_frame_at
    assert recorded.status == "incomplete" and f"damaged at byte {good}" in recorded.error
    assert ws.graph(two_frame_journal.run_id).value("x@1") == 1
    assert list((workspace / JOURNAL_DIR).glob("*.damaged"))


def test_indexing_reports_progress(workspace: Path, small_run: str) -> None:
    from memtrace.graph import Store

    seen: list[tuple[str, int, int]] = []
    Store(workspace, progress=lambda run, done, total: seen.append((run, done, total))).close()
    assert seen and seen[-1][0] == small_run and seen[-1][1] == seen[-1][2]
