"""The model-call limiter: K slots per endpoint, a "not before" time a 429 sets for every caller,
slots given back by callers that died; and the backend that holds a slot per attempt.

No test measures a duration: a fake clock drives the back-off, and "still waiting" is checked by a
thread that has not returned (a slow machine can only make such a check pass, never fail).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from llmhelpers import Reply, ScriptedOpenAIServer, scripted_client

from memtrace.executors.shared_limits import LimiterServer
from memtrace.llm.limiter import LocalLimiters, SlotLimiter


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def in_thread(fn: Callable[[], object]) -> threading.Thread:
    """`fn` on a daemon thread, started."""
    thread = threading.Thread(target=fn, daemon=True)
    thread.start()
    return thread


def still_waiting(thread: threading.Thread) -> bool:
    thread.join(timeout=0.2)
    return thread.is_alive()


def test_no_more_than_capacity_slots_are_out_at_once() -> None:
    limiter = SlotLimiter(2)
    first, second = limiter.acquire(60), limiter.acquire(60)
    third = in_thread(lambda: limiter.acquire(60))
    assert still_waiting(third) and limiter.in_use == 2
    limiter.release(first)
    third.join(timeout=30)
    assert not third.is_alive() and limiter.in_use == 2
    limiter.release(second)


def test_a_back_off_holds_every_caller_until_its_time() -> None:
    clock = FakeClock()
    limiter = SlotLimiter(4, clock)
    limiter.back_off(5.0)
    assert limiter.waiting() == 5.0
    clock.now = 4.0
    caller = in_thread(lambda: limiter.acquire(60))
    assert still_waiting(caller) and limiter.in_use == 0  # free slots, but not yet
    clock.now = 5.0
    caller.join(timeout=30)
    assert not caller.is_alive() and limiter.in_use == 1
    limiter.back_off(1.0)
    limiter.back_off(0.5)  # a shorter wait never cuts a longer one short
    assert limiter.waiting() == 1.0


def test_a_lapsed_lease_gives_its_slot_back() -> None:
    clock = FakeClock()
    limiter = SlotLimiter(1, clock)
    limiter.acquire(hold=10.0)  # a holder that will never release (it died)
    clock.now = 10.0
    limiter.acquire(hold=10.0)  # would block for ever without the lapse
    assert limiter.in_use == 1


@pytest.fixture
def served() -> Iterator[tuple[LocalLimiters, LimiterServer]]:
    limiters = LocalLimiters(2)
    server = LimiterServer(limiters)
    yield limiters, server
    server.close()


def test_the_served_limiter_counts_every_worker_and_frees_a_dead_one(
    served: tuple[LocalLimiters, LimiterServer],
) -> None:
    limiters, server = served
    worker_a, worker_b = server.ticket.connect(), server.ticket.connect()
    try:
        a = worker_a.limiter("http://model/v1/")
        a.acquire(60), a.acquire(60)
        b = worker_b.limiter("http://model/v1")
        waiting = in_thread(lambda: b.acquire(60))
        assert still_waiting(waiting) and limiters.limiter("http://model/v1").in_use == 2
        worker_a.close()  # its process died: the connection closes, both slots come back
        waiting.join(timeout=30)
        assert not waiting.is_alive()
        b.back_off(100.0)
        assert limiters.limiter("http://model/v1").waiting() > 0  # the driver's own calls wait too
        assert limiters.limiter("http://other/v1").waiting() == 0  # another endpoint does not
    finally:
        worker_a.close()
        worker_b.close()


def test_a_connection_without_the_secret_gets_nothing(served: tuple[LocalLimiters, LimiterServer]) -> None:
    import dataclasses

    from memtrace.errors import LLMError

    _, server = served
    intruder = dataclasses.replace(server.ticket, token="wrong").connect()
    try:
        with pytest.raises(LLMError, match="closed the connection"):
            intruder.limiter("http://model/v1").acquire(60)
    finally:
        intruder.close()


def test_a_429_moves_the_shared_not_before_and_a_500_does_not() -> None:
    seen: list[tuple[str, float]] = []
    limiters = LocalLimiters(2)
    with ScriptedOpenAIServer() as server:
        limiter = limiters.limiter(server.url)

        def notice(line: str) -> None:  # called after the back-off is set, before the retry
            seen.append((line, limiter.waiting()))

        client = scripted_client(server, limiters=limiters, notify=notice, max_backoff=0.01)
        other = scripted_client(server, limiters=limiters, notify=None)
        assert other.backend.limiter is client.backend.limiter  # one endpoint, one limiter
        server.enqueue(Reply.error(500), "ok", Reply.error(429, headers={"Retry-After": "0.3"}), "ok")
        assert client.chat([{"role": "user", "content": "a"}]).text == "ok"
        assert client.chat([{"role": "user", "content": "b"}]).text == "ok"
        assert other.chat([{"role": "user", "content": "c"}]).text.startswith("echo")
    (failed, after_500), (limited, after_429) = seen
    assert "500" in failed and after_500 == 0  # a server error: only this call backs off
    assert "429" in limited and after_429 > 0  # rate limited: every caller waits
    assert limiter.in_use == 0
