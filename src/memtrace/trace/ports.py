"""What the handles a run gives out (operation scopes, memory units, cases) need of the recorder.

They are made by the recorder and must not import it: these protocols name the parts they use,
and `Recorder` (recorder.py) provides them. The underscored members are the sink fan-outs the
operation scope calls on its hot path, bound once per run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .patch import Patch


class OpenOp(Protocol):
    """An operation that is current in this context (an `OpScope`)."""

    id: str
    seq: int
    name: str
    category: str


class RunRecorder(Protocol):
    """The recorder of one run, as its operation scopes, memory units and cases see it."""

    id: str
    capture_source: bool
    next_seq: Callable[[], int]
    _latest: dict[str, tuple[int, str | None, str, bool]]
    _open_ops: dict[str, Any]
    _op_row: Callable[..., None] | None
    _edge_row: Callable[..., None] | None
    _on_op_started: Callable[..., None] | None
    _on_op_ended: Callable[..., None] | None
    _on_edge: Callable[..., None] | None

    def blob_for(self, value: Any) -> str: ...

    def new_version(
        self,
        name: str,
        blob: str | None,
        category: str,
        *,
        deleted: bool = False,
        metadata: dict[str, Any] | None = None,
        value: Any = None,
    ) -> str: ...

    def latest(self, name: str) -> tuple[int, str | None, str, bool] | None: ...

    def edge(self, op_id: str, var_id: str, role: str) -> None: ...

    def patch_for(self, op_id: str | None) -> Patch | None: ...

    def track(self, obj: object, name: str) -> None: ...

    def tracked_name(self, obj: object) -> str | None: ...

    def mark_case_dirty(self, case_id: str) -> None: ...
