"""Shared fixtures: temporary workspaces, a small recorded pipeline, and the shared LoCoMo file.

The LoCoMo dev file is not part of the project: tests that need it ask for the `locomo_dev` fixture,
which skips them with one reason when it is absent. MEMTRACE_SHARED_DATA names the folder holding it
(default ../shared/data beside the project); every test that uses the fixture is marked `locomo`.
"""

from __future__ import annotations

import atexit
import gc
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest

import memtrace as mt
from memtrace.cli.app import main
from memtrace.graph.journal import JOURNAL_DIR
from memtrace.llm.cache import LLMCache
from memtrace.systems.signing import KEY_ENV

SHARED_DATA_ENV = "MEMTRACE_SHARED_DATA"

#: Snapshots recorded by tests (and the processes they start) are signed with a key of the test run's
#: own, never the user's ~/.config/memtrace/snapshot-key; the folder goes when the run ends.
_SNAPSHOT_KEY_HOME = tempfile.mkdtemp(prefix="memtrace-test-key-")
os.environ[KEY_ENV] = os.path.join(_SNAPSHOT_KEY_HOME, "snapshot-key")
atexit.register(shutil.rmtree, _SNAPSHOT_KEY_HOME, True)


def locomo_dev_file() -> Path:
    """locomo-dev.json in $MEMTRACE_SHARED_DATA, else in ../shared/data beside the project."""
    folder = os.environ.get(SHARED_DATA_ENV)
    base = Path(folder) if folder else Path(__file__).resolve().parents[2] / "shared" / "data"
    return base / "locomo-dev.json"


def missing_locomo_reason(path: Path) -> str:
    return f"needs the LoCoMo dev file {path} (set {SHARED_DATA_ENV} to the folder that holds it)"


@pytest.fixture(scope="session")
def locomo_dev() -> Path:
    """The shared LoCoMo dev file; the test is skipped when it is absent."""
    path = locomo_dev_file()
    if not path.is_file():
        pytest.skip(missing_locomo_reason(path))
    return path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs the LoCoMo file, so `-m "not locomo"` leaves them all out."""
    for item in items:
        if "locomo_dev" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.locomo)
    if any(item.nodeid.startswith("tests/mem0ai/") for item in items):
        absorb_qdrant_thread_probe()


def absorb_qdrant_thread_probe() -> None:
    """qdrant-client's local mode asks SQLite once per process whether it is thread-safe, through a
    connection it never closes (`with sqlite3.connect(":memory:")` only commits): ask it here, where
    that one unclosed in-memory database is expected, so the mem0 test that first opens qdrant is not
    failed for a leak of qdrant-client's own."""
    try:
        from qdrant_client.local.persistence import CollectionPersistence
    except ImportError:
        return
    if getattr(CollectionPersistence, "CHECK_SAME_THREAD", False) is not None:
        return
    with tempfile.TemporaryDirectory(prefix="memtrace-test-qdrant-") as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        CollectionPersistence(folder).close()
        gc.collect()


#: Python code that gives a child process Python's Ctrl-C handler back: a test runner started in the
#: background (a CI job, `pytest &`) ignores SIGINT, its children inherit that, and Python then never
#: raises KeyboardInterrupt, so a test sending Ctrl-C would see the child run on.
CTRL_C_AS_IN_A_TERMINAL = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)"


def run_cli_in_process(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `memtrace ARGS` run in this process through the entry point."""
    argv = sys.argv
    sys.argv = ["memtrace", *map(str, args)]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = argv
    out, err = capsys.readouterr()
    return code, out, err


class OutputLines:
    """A child process's output read line by line in a thread, so a test waits for a line with a
    deadline (and a hung or crashed child fails the test with what it printed, instead of blocking)."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)

    def wait_for(self, text: str, timeout: float = 120) -> str:
        """The first unread line containing `text`; a generous deadline guards a hang, not a speed."""
        while True:
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(
                    f"no line with {text!r} within {timeout}s; printed {self.seen}"
                ) from None
            if line is None:
                raise AssertionError(f"the output ended without a line with {text!r}; printed {self.seen}")
            self.seen.append(line)
            if text in line:
                return line

    def rest(self, timeout: float = 120) -> str:
        """Everything printed after the lines read so far, once the stream closes."""
        self._reader.join(timeout)
        tail = []
        while not self._lines.empty():
            line = self._lines.get()
            if line is not None:
                tail.append(line)
        return "".join(tail)


def stop_process(process: subprocess.Popen[str], timeout: float = 60) -> None:
    """Wait for `process` to end on its own, killing it after `timeout` seconds (a test's cleanup)."""
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def opened_llm_caches(monkeypatch: pytest.MonkeyPatch) -> list[LLMCache]:
    """Every LLM-cache database opened during the test (a spy on the real class), to check that the
    command that opened it also closed it."""
    opened: list[LLMCache] = []
    real_init = LLMCache.__init__

    def recording_init(self: LLMCache, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(LLMCache, "__init__", recording_init)
    return opened


def is_closed(cache: LLMCache) -> bool:
    """Whether the cache's database connection was closed (reading it then raises)."""
    try:
        len(cache)
    except sqlite3.ProgrammingError:
        return True
    return False


OpenWorkspace = Callable[..., mt.Workspace]


@pytest.fixture
def open_ws() -> Iterator[OpenWorkspace]:
    """`mt.open` for one test: every workspace opened through it is closed when the test ends, so an
    assertion can read a workspace inline without leaking its database connection."""
    opened: list[mt.Workspace] = []

    def opening(path: str | Path, **options: Any) -> mt.Workspace:
        ws = mt.open(path, **options)
        opened.append(ws)
        return ws

    yield opening
    for ws in opened:
        ws.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path / "ws"


@dataclass(frozen=True)
class TwoFrameJournal:
    """A closed run's journal of two flushed frames: where the second frame starts, to damage it."""

    run_id: str
    path: Path
    second_frame_at: int

    def overwrite(self, offset: int, data: bytes) -> None:
        """Write `data` at `offset` bytes past the second frame's start, as a crash or a disk might."""
        content = bytearray(self.path.read_bytes())
        start = self.second_frame_at + offset
        content[start : start + len(data)] = data
        self.path.write_bytes(bytes(content))


@pytest.fixture
def two_frame_journal(workspace: Path) -> TwoFrameJournal:
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
    return TwoFrameJournal(run.id, journal, good)


@pytest.fixture
def small_run(workspace: Path) -> str:
    """The id of a recorded small pipeline (see `record_small_pipeline`)."""
    return record_small_pipeline(workspace)


def record_small_pipeline(workspace: Path, name: str = "small") -> str:
    """A run with a message, an extraction, a unit created, updated and deleted, and a question."""
    with mt.run(workspace, name=name, system="toy") as run:
        with mt.op("ingest", category="construction") as op:
            message = op.output("message", "Caroline: I moved to Boston last May.", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(message)
            op.output("facts", ["Caroline moved to Boston in May"])
            run.memory("mem-1").create({"memory": "Caroline lives in Boston"}, by=op)
            run.memory("mem-2").create({"memory": "Caroline likes hiking"}, by=op)
        with mt.op("update_memory", category="update") as op:
            run.memory("mem-1").update({"memory": "Caroline lives in Paris"}, by=op)
        with mt.op("delete_memory", category="deletion") as op:
            run.memory("mem-2").delete(by=op)
        with mt.op("search", category="retrieval") as op:
            op.input("query", "Where does Caroline live?", category="query")
            op.output("retrieved", ["Caroline lives in Paris"], category="retrieved")
        with mt.op("answer", category="response") as op:
            op.input("retrieved", ["Caroline lives in Paris"], category="retrieved")
            prediction = op.output("prediction", "Paris", category="prediction")
        case = run.case("Where does Caroline live?", gold="Boston", evidence=["D1:1"], category="single-hop")
        case.predict("Paris", var=prediction)
        case.judge(False, score=0.0)
        return run.id


@pytest.fixture(scope="session")
def sample_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mem0 over the sample conversation, with flow attributions and three replay verifications
    (the web UI's tests share it)."""
    from typer.testing import CliRunner

    from memtrace.cli.app import app

    path = tmp_path_factory.mktemp("ui") / "ws"
    runner = CliRunner()
    for args in (
        ["run", str(path), "--system", "mem0", "--dataset", "sample"],
        ["attribute", str(path)],
        ["verify", str(path), "--limit", "3"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    return path
