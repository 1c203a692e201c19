"""Damaged journals (a crash, a disk, or someone who hands over a workspace): the workspace still opens,
the good frames are kept, and the damaged file is set aside as `.damaged` with a warning naming the run."""

from __future__ import annotations

import fcntl
import logging
import marshal
import struct
from pathlib import Path

import pytest

from conftest import OpenWorkspace, TwoFrameJournal
from memtrace.graph.journal import DAMAGED_SUFFIX, JOURNAL_DIR

HEADER = struct.Struct("<Q")


def frame_bytes(frame: tuple) -> bytes:
    """One journal frame as the writer lays it out: a length, then a marshalled tuple."""
    payload = marshal.dumps(frame)
    return HEADER.pack(len(payload)) + payload


def set_aside(workspace: Path) -> list[Path]:
    return sorted((workspace / JOURNAL_DIR).glob(f"*{DAMAGED_SUFFIX}"))


def assert_set_aside_with_warning(
    workspace: Path, run_id: str, caplog: pytest.LogCaptureFixture, original: bytes
) -> None:
    """The journal is out of the way but whole (nothing is lost), and a warning names its run."""
    assert not list((workspace / JOURNAL_DIR).glob("*.jnl"))
    (aside,) = set_aside(workspace)
    assert aside.read_bytes() == original
    assert any(run_id in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


def test_a_length_past_the_end_keeps_the_good_frames_and_sets_the_journal_aside(
    workspace: Path,
    two_frame_journal: TwoFrameJournal,
    open_ws: OpenWorkspace,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Was: a dead writer's frame claiming more bytes than the file holds read as 'still being written',
    so the journal was deleted with everything after the damage."""
    journal = two_frame_journal
    content = journal.path.read_bytes()
    journal.overwrite(0, HEADER.pack(len(content) * 4))  # the second frame's length now overshoots
    damaged = journal.path.read_bytes()
    ws = open_ws(workspace)
    run = ws.run(journal.run_id)
    assert run.status == "incomplete" and f"damaged at byte {journal.second_frame_at}" in (run.error or "")
    assert "past the end" in (run.error or "")
    assert ws.graph(journal.run_id).value("x@1") == 1  # the first frame was ingested
    assert ws.store.count("ops", journal.run_id) == 1
    assert_set_aside_with_warning(workspace, journal.run_id, caplog, damaged)


def test_a_first_frame_past_the_end_is_set_aside_not_deleted(
    workspace: Path,
    two_frame_journal: TwoFrameJournal,
    open_ws: OpenWorkspace,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The probe's case: a complete run showed as incomplete with 0 operations and no trace of its data."""
    journal = two_frame_journal
    content = bytearray(journal.path.read_bytes())
    content[: HEADER.size] = HEADER.pack(len(content) * 4)
    journal.path.write_bytes(bytes(content))
    ws = open_ws(workspace)
    assert ws.run(journal.run_id).status == "incomplete"
    assert ws.store.count("ops", journal.run_id) == 0
    assert_set_aside_with_warning(workspace, journal.run_id, caplog, bytes(content))


@pytest.mark.parametrize(
    "frame",
    [
        ("rows",),
        ("rows", [], [], [], []),
        ("rows", [(1, 2)], [], [], [], []),
        ("close", "complete"),
        ("flat", [1, 2, 3], [], [], [], []),
        ("flat", (), [], [], [], []),
        ("flat", [["not", "an", "id"], *[None] * 9], [], [], [], []),
        ("rows", [(["not", "an", "id"], *[None] * 9)], [], [], [], []),
    ],
    ids=[
        "rows-alone",
        "four-tables-of-five",
        "short-op-row",
        "short-close",
        "flat-short-op-row",
        "flat-table-not-a-list",
        "flat-run-not-an-id",
        "rows-run-not-an-id",
    ],
)
def test_a_well_formed_frame_of_the_wrong_shape_does_not_stop_the_workspace_opening(
    workspace: Path,
    two_frame_journal: TwoFrameJournal,
    open_ws: OpenWorkspace,
    caplog: pytest.LogCaptureFixture,
    frame: tuple,
) -> None:
    """Was: `("rows",)` unpacked into six names raised ValueError on every open of the workspace."""
    journal = two_frame_journal
    content = journal.path.read_bytes()
    at = journal.second_frame_at
    damaged = content[:at] + frame_bytes(frame) + content[at:]
    journal.path.write_bytes(damaged)
    ws = open_ws(workspace)
    run = ws.run(journal.run_id)
    assert run.status == "incomplete" and f"damaged at byte {at}" in (run.error or "")
    assert ws.graph(journal.run_id).value("x@1") == 1
    assert_set_aside_with_warning(workspace, journal.run_id, caplog, damaged)
    assert open_ws(workspace).run(journal.run_id).status == "incomplete"  # and it opens again


@pytest.mark.parametrize("flat", [False, True], ids=["rows", "flat"])
def test_a_row_naming_another_run_is_damage_not_a_write_into_that_run(
    workspace: Path,
    two_frame_journal: TwoFrameJournal,
    open_ws: OpenWorkspace,
    caplog: pytest.LogCaptureFixture,
    flat: bool,
) -> None:
    """A journal may only write its own run: a frame whose op row names another run is refused."""
    journal = two_frame_journal
    content = journal.path.read_bytes()
    foreign = ("other-run", "op-x", 1, None, "evil", "llm", 0.0, 0.0, "ok", None)
    own = (journal.run_id, *foreign[1:])
    frame = ("flat", [*own, *foreign], [], [], [], []) if flat else ("rows", [foreign], [], [], [], [])
    at = journal.second_frame_at
    journal.path.write_bytes(content[:at] + frame_bytes(frame) + content[at:])
    ws = open_ws(workspace)
    assert "another run" in (ws.run(journal.run_id).error or "")
    assert ws.store.count("ops", "other-run") == 0
    assert set_aside(workspace)


def test_a_live_writers_half_written_frame_waits_and_is_set_aside_only_once_the_writer_is_gone(
    workspace: Path, two_frame_journal: TwoFrameJournal, open_ws: OpenWorkspace
) -> None:
    """A partial trailing frame is normal while its writer appends: only a dead writer's is damage."""
    journal = two_frame_journal
    content = journal.path.read_bytes()
    at = journal.second_frame_at
    journal.path.write_bytes(content[: at + HEADER.size + 3])  # the second frame is half written
    with open(journal.path, "rb") as held:  # the writer's lock, as a live recorder holds it
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        live = open_ws(workspace)
        assert live.run(journal.run_id).status == "running"
        assert live.store.count("ops", journal.run_id) == 1
        assert journal.path.exists() and not set_aside(workspace)
        live.close()
    ws = open_ws(workspace)
    assert ws.run(journal.run_id).status == "incomplete"
    assert ws.store.count("ops", journal.run_id) == 1
    assert set_aside(workspace) and not journal.path.exists()


@pytest.mark.parametrize("flat", [False, True], ids=["rows", "flat"])
def test_rows_the_store_refuses_keep_the_frames_before_them(
    workspace: Path,
    two_frame_journal: TwoFrameJournal,
    open_ws: OpenWorkspace,
    caplog: pytest.LogCaptureFixture,
    flat: bool,
) -> None:
    """A row of the right shape holding a value SQLite cannot bind (a dict) is damage at its frame,
    found one frame at a time after the batch failed, not an exception out of every open."""
    journal = two_frame_journal
    content = journal.path.read_bytes()
    bad = (journal.run_id, "op-x", 9, None, "evil", "llm", 0.0, 0.0, "ok", {"not": "bindable"})
    frame = ("flat", list(bad), [], [], [], []) if flat else ("rows", [bad], [], [], [], [])
    at = journal.second_frame_at
    damaged = content[:at] + frame_bytes(frame) + content[at:]
    journal.path.write_bytes(damaged)
    ws = open_ws(workspace)
    run = ws.run(journal.run_id)
    assert run.status == "incomplete" and f"damaged at byte {at}" in (run.error or "")
    assert ws.store.count("ops", journal.run_id) == 1
    assert_set_aside_with_warning(workspace, journal.run_id, caplog, damaged)
