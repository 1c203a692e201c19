"""Fault injection, data: kills, reader races, corrupt journals, tampered snapshots, empty memory.

Nothing recorded is lost and nothing crashes. The command-line half (hostile data, bad paths,
read-only workspaces, Ctrl-C) is in test_fault_injection_cli.py.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memtrace as mt
from conftest import OpenWorkspace, TwoFrameJournal
from memtrace.datasets import NOT_MENTIONED
from memtrace.datasets.model import Conversation, Question, Session, Turn
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
    workspace: Path, monkeypatch: pytest.MonkeyPatch, open_ws: OpenWorkspace
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
    ws = open_ws(workspace)
    assert ws.run(run_id).status == "complete"
    assert ws.store.count("ops", run_id) == 1


def _open_in_a_loop(workspace: str, stop: multiprocessing.synchronize.Event) -> None:
    while not stop.is_set():
        mt.open(workspace).close()


def test_no_run_is_lost_to_a_reader_opening_the_workspace_in_a_loop(
    workspace: Path, open_ws: OpenWorkspace
) -> None:
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
    ws = open_ws(workspace)
    lost = [
        run_id for run_id in ids if ws.run(run_id).status != "complete" or ws.store.count("ops", run_id) != 1
    ]
    assert lost == []


@pytest.mark.parametrize("bad_length", [b"\xff" * 8, (1 << 40).to_bytes(8, "little")])
def test_a_corrupt_frame_length_keeps_the_good_prefix_and_warns_once(
    workspace: Path,
    two_frame_journal: TwoFrameJournal,
    bad_length: bytes,
    caplog: pytest.LogCaptureFixture,
    open_ws: OpenWorkspace,
) -> None:
    two_frame_journal.overwrite(0, bad_length)
    run_id, good = two_frame_journal.run_id, two_frame_journal.second_frame_at
    with caplog.at_level(logging.WARNING, logger="memtrace"):
        ws = mt.open(workspace)
    recorded = ws.run(run_id)
    assert recorded.status == "incomplete" and f"damaged at byte {good}" in recorded.error
    assert ws.graph(run_id).value("x@1") == 1
    assert not list((workspace / JOURNAL_DIR).glob("*.jnl"))
    assert list((workspace / JOURNAL_DIR).glob("*.damaged"))
    assert [record.levelname for record in caplog.records] == ["WARNING"]
    assert run_id in caplog.records[0].getMessage()
    ws.close()
    assert open_ws(workspace).run(run_id).status == "incomplete"  # opening again stays quiet and works


class CodeRunningPickleDouble:
    """A pickle that, when loaded, creates a marker file: what a tampered snapshot could do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (Path.touch, (self.marker,))


@pytest.fixture(scope="module")
def rag_recording(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    from memtrace.datasets import sample_conversation
    from memtrace.systems import run_conversation
    from memtrace.systems.rag import RAGSystem

    workspace = tmp_path_factory.mktemp("rag-recording")
    return workspace, run_conversation(RAGSystem(), sample_conversation(0), workspace).run_id


def _private_copy(recording: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    import shutil

    source, run_id = recording
    shutil.copytree(source, tmp_path / "ws")
    return tmp_path / "ws", run_id


def test_a_tampered_snapshot_is_refused_before_it_can_run_code(
    rag_recording: tuple[Path, str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A state snapshot changed after it was signed is never unpickled: the replay re-runs from the
    first message instead, and says so in one warning line."""
    import pickle

    from memtrace.systems.replay import replay
    from memtrace.systems.signing import user_key_path
    from memtrace.systems.snapshots import snapshot_dir

    workspace, run_id = _private_copy(rag_recording, tmp_path)
    assert user_key_path().stat().st_mode & 0o777 == 0o600
    assert not (workspace / ".snapshot-key").exists()  # the key is the user's, not the folder's
    directory = snapshot_dir(workspace, run_id)
    marker = tmp_path / "code-ran"
    for victim in directory.glob("*.pkl"):
        victim.write_bytes(pickle.dumps(CodeRunningPickleDouble(marker)))
    ws = mt.open(workspace)
    construction = [op for op in ws.view(run_id).ops_in_order() if op.name == "add_document"]
    ws.close()
    result = replay(workspace, run_id, {construction[-1].id: {}})
    assert result.resumed_after_seq == 0 and result.cases
    assert not marker.exists()
    assert any("not signed by your key" in r.getMessage() for r in caplog.records)


def test_snapshots_signed_by_another_key_are_refused(rag_recording: tuple[Path, str], tmp_path: Path) -> None:
    """Another user's key (here: a fresh one) trusts none of these snapshots: the replay starts over."""
    from memtrace.systems.replay import replay
    from memtrace.systems.signing import KEY_ENV

    workspace, run_id = _private_copy(rag_recording, tmp_path)
    other = tmp_path / "other-user" / "snapshot-key"
    with pytest.MonkeyPatch.context() as env:
        env.setenv(KEY_ENV, str(other))
        assert replay(workspace, run_id).resumed_after_seq == 0


# -- crashes: empty memory ---------------------------------------------------------------------


def _conversation_with(texts: list[str]) -> Conversation:
    """A conversation of one session holding `texts` (none: no session at all) and one question."""
    date = "1 May 2023"
    turns = [Turn(f"D1:{i}", "Caroline", text, 1, date) for i, text in enumerate(texts, 1)]
    question = Question("q1", "Where does Caroline live?", ["Boston"], ["D1:1"], "single-hop")
    sessions = [Session(1, date, turns)] if turns else []
    return Conversation("empty", ["Caroline", "Mel"], sessions, [question], "test")


@pytest.mark.parametrize("system", ["long_context", "rag", "mem0", "evermemos"])
@pytest.mark.parametrize("texts", [[], ["the and of", "ok"], [""]], ids=["no-session", "no-facts", "blank"])
def test_a_system_with_empty_memory_still_answers(
    tmp_path: Path, system: str, texts: list[str], open_ws: OpenWorkspace
) -> None:
    from memtrace.systems import run_conversation
    from memtrace.systems.registry import system_class

    result = run_conversation(system_class(system)(), _conversation_with(texts), tmp_path)
    (case,) = result.cases
    assert case.prediction
    if not texts:
        assert case.prediction == NOT_MENTIONED
    assert open_ws(tmp_path).run(result.run_id).status == "complete"


def test_bm25_over_documents_without_a_single_token_scores_zero() -> None:
    from memtrace.retrieval import BM25Index

    index = BM25Index(["the and", "of"])
    index.fit()
    assert index.search("the") == [] and list(index.scores("boston")) == [0.0, 0.0]
    index.add(["Caroline lives in Boston"])
    assert [hit.index for hit in index.search("Boston")] == [2]
    assert BM25Index().search("anything") == []


# -- kill -9 mid-run -----------------------------------------------------------------------------

RECORD_UNTIL_KILLED = """
import sys, memtrace as mt
with mt.run(sys.argv[1], name="killed") as run:
    run.flush_every = 1
    for step in range(60):
        with mt.op("step") as op:
            op.output("x", step)
    with mt.op("stuck") as op:  # killed inside this operation
        print("flushed", flush=True)
        sys.stdin.readline()
"""


def test_a_process_killed_mid_run_keeps_what_it_flushed(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    import signal

    workspace = tmp_path / "ws"
    with subprocess.Popen(
        [sys.executable, "-c", RECORD_UNTIL_KILLED, str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as recorder:
        assert recorder.stdout is not None and recorder.stdout.readline().strip() == "flushed"
        live = mt.open(workspace)  # a reader while it records: sees it running, buries nothing
        (running,) = live.runs()
        assert running.status == "running"
        live.close()
        recorder.send_signal(signal.SIGKILL)
        recorder.wait(timeout=60)
    ws = open_ws(workspace)
    (run,) = ws.runs()
    assert run.status == "incomplete" and "ended without closing" in (run.error or "")
    assert ws.store.count("ops", run.id) == 60
    assert not list((workspace / JOURNAL_DIR).glob("*"))
