"""The model-call limiters on Ray: a named actor holds them, every task's client asks it.

The actor runs its methods on threads, so a waiting `acquire` does not hold up a `release`. A task
finds the actor by name (`RayTicket`), so nothing but the name travels; it is killed when the command
ends. A slot whose holder died is taken back when its lease lapses (the call's timeout and a margin).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..llm.limiter import LocalLimiters
from .ray_backend import connect
from .spec import ExecutorSpec

#: Calls the actor serves at once: every waiting `acquire` holds one of its threads.
_ACTOR_THREADS = 1000


class LimiterActor:
    """The actor's body: `LocalLimiters` behind three plain methods."""

    def __init__(self, capacity: int) -> None:
        self.limiters = LocalLimiters(capacity)

    def acquire(self, endpoint: str, hold: float) -> int:
        return self.limiters.limiter(endpoint).acquire(hold)

    def release(self, endpoint: str, lease: int) -> None:
        self.limiters.limiter(endpoint).release(lease)

    def back_off(self, endpoint: str, seconds: float) -> None:
        self.limiters.limiter(endpoint).back_off(seconds)


@contextlib.contextmanager
def ray_limiters(spec: ExecutorSpec, capacity: int) -> Iterator[RayTicket]:
    """A limiter actor for the tasks of one command, killed afterwards."""
    ray = connect(spec)
    name = f"memtrace-limiter-{uuid.uuid4().hex[:12]}"
    namespace = ray.get_runtime_context().namespace
    actor_class = ray.remote(num_cpus=0, max_concurrency=_ACTOR_THREADS)(LimiterActor)
    actor = actor_class.options(name=name, namespace=namespace).remote(capacity)
    try:
        yield RayTicket(name, namespace)
    finally:
        ray.kill(actor)


@dataclass(frozen=True, slots=True)
class RayTicket:
    """The limiter actor's name and namespace."""

    name: str
    namespace: str

    def connect(self) -> RayLimiters:
        import ray

        return RayLimiters(ray.get_actor(self.name, namespace=self.namespace))


@dataclass(slots=True)
class RayLimiters:
    """A task's handle on the actor."""

    actor: Any

    def limiter(self, endpoint: str) -> _RayLimiter:
        return _RayLimiter(self.actor, endpoint.rstrip("/"))

    def close(self) -> None:
        """Nothing to close: the actor lives until the command ends."""


@dataclass(slots=True)
class _RayLimiter:
    actor: Any
    endpoint: str

    def acquire(self, hold: float) -> int:
        import ray

        return int(ray.get(self.actor.acquire.remote(self.endpoint, hold)))

    def release(self, lease: int) -> None:
        import ray

        ray.get(self.actor.release.remote(self.endpoint, lease))

    def back_off(self, seconds: float) -> None:
        import ray

        ray.get(self.actor.back_off.remote(self.endpoint, seconds))
