"""Token accounting per run and per case, kept apart between concurrent cases by contextvars.

The paper's code shares one global counter between concurrent cases, so per-case costs mix. Here each
`with usage_scope("case q1"):` pushes a counter onto the current context; every model call adds its
usage to every enclosing scope (nesting: a case inside a batch counts in both) and to the run that is
recording. Threads that start from a copied context (`memtrace.propagate`, `asyncio.to_thread`) and
asyncio tasks each see their own innermost scope, so two cases never count each other's tokens.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..trace import current_run

if TYPE_CHECKING:
    from ..graph.queries import GraphQueries
    from ..trace import Recorder

_lock = threading.Lock()


@dataclass(slots=True)
class Usage:
    """Model calls and tokens. Tokens count every call, cached or not (the work it stands for);
    `cached_calls` says how many of the calls were answered from the record/replay cache."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add(self, other: Usage) -> None:
        """Add `other` in place (callers hold the module lock when the object is shared)."""
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cached_calls += other.cached_calls

    def __add__(self, other: Usage) -> Usage:
        total = Usage()
        total.add(self)
        total.add(other)
        return total

    def copy(self) -> Usage:
        return Usage(self.calls, self.input_tokens, self.output_tokens, self.cached_calls)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Usage:
        data = data or {}
        return cls(
            **{k: int(data.get(k) or 0) for k in ("calls", "input_tokens", "output_tokens", "cached_calls")}
        )


class UsageScope:
    """One counting scope (a run, a case, a batch); read its totals while or after it is open."""

    __slots__ = ("_usage", "label", "parent")

    def __init__(self, label: str, parent: UsageScope | None) -> None:
        self.label = label
        self.parent = parent
        self._usage = Usage()

    @property
    def usage(self) -> Usage:
        """A snapshot of the totals so far."""
        with _lock:
            return self._usage.copy()

    @property
    def calls(self) -> int:
        return self.usage.calls

    @property
    def input_tokens(self) -> int:
        return self.usage.input_tokens

    @property
    def output_tokens(self) -> int:
        return self.usage.output_tokens

    @property
    def cached_calls(self) -> int:
        return self.usage.cached_calls

    def __repr__(self) -> str:
        return f"<usage scope {self.label!r} {self.usage}>"


_current: ContextVar[UsageScope | None] = ContextVar("memtrace_llm_usage", default=None)
_run_totals: weakref.WeakKeyDictionary[Recorder, Usage] = weakref.WeakKeyDictionary()


@contextmanager
def usage_scope(label: str = "") -> Iterator[UsageScope]:
    """Count the model calls made inside the block (and in tasks/threads started from its context)."""
    scope = UsageScope(label, _current.get())
    token = _current.set(scope)
    try:
        yield scope
    finally:
        _current.reset(token)


def current_usage_scope() -> UsageScope | None:
    """The innermost open usage scope of this context, or None."""
    return _current.get()


def add_usage(delta: Usage) -> None:
    """Count `delta` in every enclosing scope and in the run recording now (called per model call)."""
    recorder = current_run()
    with _lock:
        scope = _current.get()
        while scope is not None:
            scope._usage.add(delta)
            scope = scope.parent
        if recorder is not None:
            _run_totals.setdefault(recorder, Usage()).add(delta)


def run_usage(run: Recorder | None = None) -> Usage:
    """Totals of a run still open in this process (default: the current one); empty when none."""
    recorder = run if run is not None else current_run()
    if recorder is None:
        return Usage()
    with _lock:
        return _run_totals.get(recorder, Usage()).copy()


def recorded_usage(graph: GraphQueries) -> Usage:
    """Totals over the `llm` operations of a recorded graph (read back from their metadata)."""
    total = Usage()
    for op in graph.ops_by_category("llm"):
        total.add(Usage.from_dict(op.metadata.get("usage")))
    return total
