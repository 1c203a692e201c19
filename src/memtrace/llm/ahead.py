"""Model replies fetched ahead: a run asks several requests at once, then records them in order.

A run's steps are recorded one after another (the seq order is the run's meaning), so its model
calls are made one after another too, each waiting on the model. When the requests a later step
will make can be worked out early (a question's answer and judge calls need only the memory as it
stands after construction), the run can ask them first, many at a time, `fetching_into` a
`Replies`; the recorded pass then runs as ever, `served_from` those replies: an exact request
fetched ahead is answered at once, as the model answered it, and anything else goes to the model.
The recorded graph is therefore the one a run without fetching ahead records.

Both sides live in contextvars, so a thread fetching ahead and the recording thread do not mix.
While fetching, a client neither caches nor counts: the recorded pass does both when it is served.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .base import Backend, Completion, Message
from .cache import request_key

_fetching: ContextVar[Replies | None] = ContextVar("memtrace_fetching_ahead", default=None)
_serving: ContextVar[Replies | None] = ContextVar("memtrace_served_ahead", default=None)


class Replies:
    """Replies fetched ahead, by request; each is handed out once."""

    def __init__(self) -> None:
        self._kept: dict[str, list[Any]] = {}
        self._lock = threading.Lock()
        self.fetched = 0
        self.served = 0

    def keep(self, key: str, completion: Any) -> None:
        with self._lock:
            self._kept.setdefault(key, []).append(completion)
            self.fetched += 1

    def peek(self, key: str) -> Any:
        with self._lock:
            kept = self._kept.get(key)
            return kept[0] if kept else None

    def take(self, key: str) -> Any:
        with self._lock:
            kept = self._kept.get(key)
            if not kept:
                return None
            self.served += 1
            return kept.pop(0)

    @property
    def unused(self) -> int:
        """Replies fetched that no recorded call asked for (model calls spent for nothing)."""
        with self._lock:
            return sum(len(kept) for kept in self._kept.values())


@contextmanager
def fetching_into(replies: Replies) -> Iterator[None]:
    """Calls made in this context go to the model and their replies are kept in `replies`."""
    token = _fetching.set(replies)
    try:
        yield
    finally:
        _fetching.reset(token)


@contextmanager
def served_from(replies: Replies | None) -> Iterator[None]:
    """Calls made in this context take a reply fetched ahead for their exact request when there is one."""
    token = _serving.set(replies)
    try:
        yield
    finally:
        _serving.reset(token)


def fetching() -> bool:
    """Is this context only fetching ahead (so nothing is to be cached or counted)?"""
    return _fetching.get() is not None


def complete(backend: Backend, model: str, messages: list[Message], **options: Any) -> Completion:
    """`backend.complete(...)`, answered from the replies fetched ahead when this context has them."""
    if _serving.get() is None and _fetching.get() is None:
        return backend.complete(model, messages, **options)
    request = {"endpoint": backend.endpoint, "model": model, "messages": messages, **options}
    return through(request, lambda: backend.complete(model, messages, **options))


def through[T](request: dict[str, Any], send: Callable[[], T]) -> T:
    """`send()`, or the reply fetched ahead for `request` when this context has one: any call to a
    model endpoint (a chat, another library's embedding call) can be fetched ahead this way."""
    serving, keeping = _serving.get(), _fetching.get()
    if serving is None and keeping is None:
        return send()
    key = request_key(request)
    if serving is not None and (reply := serving.take(key)) is not None:
        return reply
    if keeping is not None and (reply := keeping.peek(key)) is not None:
        return reply  # asked twice while fetching: once to the model is enough
    reply = send()
    if keeping is not None:
        keeping.keep(key, reply)
    return reply
