"""`memtrace run --llm openai --workers N --concurrency K`: K calls in flight for all workers together,
a 429 seen by one worker holds back the others, and the store is the one a single worker making one
call at a time makes (`--workers 1 --concurrency 1`), fetching the questions' replies ahead or not.

The model is a scripted OpenAI-compatible server (tests/llm/llmhelpers.py, a test double) answering
every prompt of the four systems from the request's own words (scripted_replies.py), so any two
runs of the same request get the same reply wherever they run.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from scripted_replies import scripted_reply
from store_dump import store_rows
from typer.testing import CliRunner

from memtrace.cli.app import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llmhelpers import Reply, ScriptedOpenAIServer

SYSTEMS = "long_context,rag,mem0,evermemos"  # mem0ai names its memories with random ids


def run_model(workspace: Path, server: ScriptedOpenAIServer, *flags: str) -> None:
    args = ["run", str(workspace), "--system", SYSTEMS, "--dataset", "sample", "--questions", "3"]
    args += ["--llm", "openai", "--model", "scripted", "--base-url", server.url, *flags]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def slow_reply(body: dict[str, Any]) -> Reply:
    """The scripted reply after a short wait, so calls of different workers overlap."""
    return Reply(scripted_reply(body), delay=0.02)


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of one worker making one model call at a time."""
    path = tmp_path_factory.mktemp("model-w1") / "ws"
    with ScriptedOpenAIServer(default=slow_reply) as server:
        run_model(path, server, "--workers", "1", "--concurrency", "1")
    assert server.max_in_flight == 1
    return path


def test_eight_workers_against_a_slow_model_give_the_store_of_one(one_worker: Path, tmp_path: Path) -> None:
    """benchmarks/model_bound.py made small: no time is asserted, only that nothing changed."""
    with ScriptedOpenAIServer(default=slow_reply) as server:
        run_model(tmp_path / "ws", server, "--workers", "8", "--concurrency", "8")
    assert 1 < server.max_in_flight <= 8
    assert store_rows(tmp_path / "ws") == store_rows(one_worker)


def test_concurrency_bounds_the_calls_of_all_workers_together(one_worker: Path, tmp_path: Path) -> None:
    with ScriptedOpenAIServer(default=slow_reply) as server:
        run_model(tmp_path / "ws", server, "--workers", "4", "--concurrency", "2")
    assert server.max_in_flight == 2  # 4 workers, 2 calls at a time: not 2 each
    assert store_rows(tmp_path / "ws") == store_rows(one_worker)


class RateLimited:
    """Replies of a server that answers its 12th request with a 429 (Retry-After: 1 s) and counts
    the requests that arrive before that second is over."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.quiet_until: float | None = None
        self.early: list[int] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self.lock:
            self.requests += 1
            now = time.monotonic()
            if self.quiet_until is not None and now < self.quiet_until:
                self.early.append(self.requests)
            if self.requests == 12:
                self.quiet_until = now + 1.0
                return Reply.error(429, "slow down", headers={"Retry-After": "1"})
        return slow_reply(body)


def test_a_429_seen_by_one_worker_holds_back_the_others(one_worker: Path, tmp_path: Path) -> None:
    replies = RateLimited()
    with ScriptedOpenAIServer(default=replies) as server:
        run_model(tmp_path / "ws", server, "--workers", "4", "--concurrency", "2")
    assert replies.quiet_until is not None and replies.requests > 12
    # Only a call already let through on the other slot when the 429 came back may arrive in the
    # second the server asked for; every later call of every worker waits it out.
    assert len(replies.early) <= 1, replies.early
    assert store_rows(tmp_path / "ws") == store_rows(one_worker)


def test_workers_are_served_from_the_cache_of_an_earlier_command(tmp_path: Path) -> None:
    """A second `memtrace run` into the same workspace: every call was cached by the first one, and
    a worker (whose own cache starts empty) is served from the driver's, as a run here would be."""
    stores = {}
    with ScriptedOpenAIServer(default=slow_reply) as server:  # one endpoint: the cache key holds it
        run_model(tmp_path / "first", server, "--workers", "1")
        made = len(server.chat_requests)
        for name, workers in (("here", "1"), ("workers", "4")):
            shutil.copytree(tmp_path / "first", tmp_path / name)
            run_model(tmp_path / name, server, "--workers", workers, "--concurrency", "2")
            stores[name] = store_rows(tmp_path / name)
    assert len(server.chat_requests) == made  # not one call of the second commands reached the model
    assert stores["workers"] == stores["here"] != store_rows(tmp_path / "first")
