"""How many model calls may be in flight to one endpoint, and the "not before" time a 429 sets.

A `SlotLimiter` is the state: K slots and a time before which nobody may start a call. A backend
holds a slot per HTTP attempt (never while backing off); on a 429 or a Retry-After it moves the
"not before" time, which every caller of that limiter then respects. `Limiters` hands out one
limiter per endpoint; `LocalLimiters` keeps them in this process (threads share them), while
executors/ serves the same object to worker processes or Ray (a `LimiterTicket` travels with each
task and `connect()`s to it), so K bounds the calls of all workers together, not of each.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol, runtime_checkable

#: Model calls in flight to one endpoint unless configured (`--concurrency`).
DEFAULT_CONCURRENCY = 4


@runtime_checkable
class Limiter(Protocol):
    """One endpoint's gate: slots for calls in flight and a shared "not before" time."""

    def acquire(self, hold: float) -> int:
        """Wait for a free slot and for the "not before" time; the lease lapses after `hold` seconds
        (a holder that died gives its slot back then)."""
        ...

    def release(self, lease: int) -> None: ...

    def back_off(self, seconds: float) -> None:
        """Nobody starts a call for `seconds` from now (a 429 or a Retry-After was seen)."""
        ...


class Limiters(Protocol):
    """The limiters of every endpoint a process talks to, one per endpoint."""

    def limiter(self, endpoint: str) -> Limiter: ...

    def close(self) -> None:
        """Close what this handle opened (connections to a shared limiter); the limits stay."""
        ...


class LimiterTicket(Protocol):
    """What a task carries to reach the shared limiters from another process (picklable)."""

    def connect(self) -> Limiters: ...


@contextmanager
def slot(limiter: Limiter, hold: float) -> Iterator[None]:
    """One slot of `limiter` for the duration of a `with` block."""
    lease = limiter.acquire(hold)
    try:
        yield
    finally:
        limiter.release(lease)


class SlotLimiter:
    """K slots and a "not before" time, guarded by one condition (thread-safe, in one process)."""

    def __init__(self, capacity: int, clock: Callable[[], float] = time.monotonic) -> None:
        if capacity < 1:
            raise ValueError(f"a limiter needs at least 1 slot, got {capacity}")
        self.capacity = capacity
        self._clock = clock
        self._changed = threading.Condition()
        self._leases: dict[int, float] = {}  # lease -> when it lapses
        self._ids = itertools.count(1)
        self._not_before = 0.0
        #: Slots handed out so far (every call that went to the endpoint took one).
        self.granted = 0

    def acquire(self, hold: float) -> int:
        with self._changed:
            while True:
                now = self._clock()
                self._reclaim(now)
                wait = self._not_before - now
                if wait <= 0 and len(self._leases) < self.capacity:
                    lease = next(self._ids)
                    self._leases[lease] = now + hold
                    self.granted += 1
                    return lease
                lapse = min(self._leases.values(), default=now) - now
                timeouts = [t for t in (wait, lapse) if t > 0]
                self._changed.wait(min(timeouts) if timeouts else None)

    def release(self, lease: int) -> None:
        with self._changed:
            if self._leases.pop(lease, None) is not None:
                self._changed.notify()

    def back_off(self, seconds: float) -> None:
        with self._changed:
            self._not_before = max(self._not_before, self._clock() + max(0.0, seconds))

    def release_all(self, leases: list[int]) -> None:
        """Give back every lease of a holder that went away (a worker's closed connection)."""
        with self._changed:
            for lease in leases:
                self._leases.pop(lease, None)
            self._changed.notify_all()

    @property
    def in_use(self) -> int:
        with self._changed:
            return len(self._leases)

    def waiting(self) -> float:
        """Seconds until calls may start again (0 when no back-off is running)."""
        with self._changed:
            return max(0.0, self._not_before - self._clock())

    def _reclaim(self, now: float) -> None:
        for lease in [lease for lease, lapse in self._leases.items() if lapse <= now]:
            del self._leases[lease]


class LocalLimiters:
    """One `SlotLimiter` of `capacity` slots per endpoint, in this process; it is its own ticket for
    work that stays in this process."""

    def __init__(
        self, capacity: int = DEFAULT_CONCURRENCY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if capacity < 1:
            raise ValueError(f"--concurrency {capacity}: give 1 or more")
        self.capacity = capacity
        self._clock = clock
        self._limiters: dict[str, SlotLimiter] = {}
        self._lock = threading.Lock()

    def limiter(self, endpoint: str) -> SlotLimiter:
        key = endpoint.rstrip("/")
        with self._lock:
            if key not in self._limiters:
                self._limiters[key] = SlotLimiter(self.capacity, self._clock)
            return self._limiters[key]

    def connect(self) -> LocalLimiters:
        return self

    def close(self) -> None:
        """Nothing to close: the limiters live as long as this object, shared by its clients."""
