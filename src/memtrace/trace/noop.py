"""What `memtrace.run(...)` returns while recording is disabled: the same surface, doing nothing.

Instrumented code keeps working unchanged, and nothing touches the disk: no workspace, no run.
"""

from __future__ import annotations

from typing import Any


class NoopMemoryUnit:
    """A memory unit handle that records nothing."""

    __slots__ = ("applied", "unit_id")
    exists = False
    version = 0
    latest_id = None

    def __init__(self, unit_id: str) -> None:
        self.unit_id = unit_id
        self.applied: tuple[str, Any] = ("none", None)

    def create(self, value: Any, by: Any = None, **metadata: Any) -> None:
        self.applied = ("create", value)

    def update(self, value: Any, by: Any = None, **metadata: Any) -> None:
        self.applied = ("update", value)

    def delete(self, by: Any = None, **metadata: Any) -> None:
        self.applied = ("delete", None)


class NoopCase:
    """A case handle that records nothing."""

    __slots__ = ("id",)

    def __init__(self, case_id: str | None) -> None:
        self.id = case_id

    def predict(self, prediction: str, var: str | None = None) -> None:
        return None

    def judge(self, correct: bool, score: float | None = None, **metadata: Any) -> None:
        return None


class NoopRecorder:
    """A disabled run."""

    id = None
    run = None
    flush_every = 0

    def memory(self, unit_id: str) -> NoopMemoryUnit:
        return NoopMemoryUnit(unit_id)

    def case(self, question: str, *, id: str | None = None, **kwargs: Any) -> NoopCase:
        return NoopCase(id)

    def latest(self, name: str) -> None:
        return None

    def flush(self) -> None:
        return None

    def close(self, error: BaseException | None = None) -> None:
        return None

    def __enter__(self) -> NoopRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
