"""A rate-limiting server cannot hold a call past its deadline: `Retry-After: 86400` with a 5 s timeout
used to mean four 60 s waits; now the call fails at once and says what the server asked for."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrace.errors import LLMError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llmhelpers import Reply, ScriptedOpenAIServer, scripted_client

USER = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


def call_within(seconds: float, call: object) -> tuple[object, float]:
    """Run `call` in a thread and give it `seconds`: a test of a wait must not wait the wait itself."""
    outcome: list[object] = []
    started = time.monotonic()

    def target() -> None:
        try:
            outcome.append(call())  # type: ignore[operator]
        except Exception as exc:  # the outcome under test, raised or returned
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the call was still waiting after {seconds}s"
    return outcome[0], time.monotonic() - started


def test_a_retry_after_past_the_calls_deadline_fails_at_once_and_says_so(
    server: ScriptedOpenAIServer,
) -> None:
    """--timeout 5 with 4 retries gives a call 25 s: a server asking for a day gets no retry, and the one
    line says it asked to wait 86400 s (the old client waited 60 s four times)."""
    server.enqueue(*[Reply.error(429, "quota exceeded", headers={"Retry-After": "86400"})] * 5)
    client = scripted_client(server, timeout=5.0, max_retries=4)
    error, elapsed = call_within(15, lambda: client.chat(USER))
    assert isinstance(error, LLMError), error
    line = str(error)
    assert "\n" not in line and "is rate limiting (429): quota exceeded" in line
    assert "the server asked to wait 86400s (24.0h, Retry-After)" in line
    assert "past this call's deadline (25s: 5s per attempt x 5 attempts)" in line
    assert elapsed < 3 and len(server.chat_requests) == 1


def test_a_retry_after_within_the_deadline_is_waited_and_named_in_the_notice(
    server: ScriptedOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wait that fits is honoured, and the retry notice says the server asked for it."""
    server.enqueue(Reply.error(429, "slow down", headers={"Retry-After": "0.4"}), "ok")
    client = scripted_client(server, timeout=2.0, max_retries=2)
    reply, elapsed = call_within(10, lambda: client.chat(USER))
    assert getattr(reply, "text", reply) == "ok" and elapsed >= 0.4
    notice = capsys.readouterr().err
    assert "the server asked to wait 0.4s (Retry-After); retry 1 of 2 in 0.4s" in notice


def test_a_retry_after_longer_than_the_time_left_is_not_waited(server: ScriptedOpenAIServer) -> None:
    """The deadline counts what the call already spent: a wait that fit at first no longer does after
    a timed-out attempt (0.3 s timeout x 3 attempts = 0.9 s; 0.3 s spent, then asked for 0.8 s)."""
    server.enqueue(Reply.slow(1.0), Reply.error(429, "busy", headers={"Retry-After": "0.8"}), "ok")
    client = scripted_client(server, timeout=0.3, max_retries=2)
    error, elapsed = call_within(10, lambda: client.chat(USER))
    assert isinstance(error, LLMError) and "asked to wait 0.8s" in str(error), error
    assert "deadline" in str(error) and elapsed < 0.8
