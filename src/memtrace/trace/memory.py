"""Memory units: variables of category `memory_entry` whose versions are their lifecycle."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..graph.model import MEMORY_ENTRY
from .context import current_op_var
from .patch import MemoryAction

if TYPE_CHECKING:
    from .ports import RunRecorder
    from .scope import NoopOp, OpScope


class MemoryUnit:
    """A handle on one memory unit; each change writes a new version made by an operation.

    After each change `applied` says what really happened — ("create" | "update" | "delete" |
    "cancelled", value) — which differs from what was asked when a replay patch intervenes; a
    system keeps its own store in step with it.
    """

    __slots__ = ("applied", "recorder", "unit_id")

    def __init__(self, recorder: RunRecorder, unit_id: str) -> None:
        self.recorder = recorder
        self.unit_id = unit_id
        self.applied: tuple[str, Any] = ("none", None)

    @property
    def exists(self) -> bool:
        """True while the unit has a live (created and not deleted) version."""
        latest = self.recorder.latest(self.unit_id)
        return latest is not None and not latest[3]

    @property
    def latest_id(self) -> str:
        """The id of the unit's latest version (to record that an operation read it)."""
        latest = self.recorder.latest(self.unit_id)
        if latest is None:
            raise ValueError(f"memory unit {self.unit_id!r} was never created")
        return latest[2]

    @property
    def version(self) -> int:
        latest = self.recorder.latest(self.unit_id)
        return 0 if latest is None else latest[0]

    def create(self, value: Any, by: OpScope | NoopOp | None = None, **metadata: Any) -> str:
        """The unit's first version (or its revival after a deletion)."""
        if self.exists:
            raise ValueError(
                f"memory unit {self.unit_id!r} already exists (version {self.version}); use update()"
            )
        return self._write(value, by, deleted=False, metadata=metadata)

    def update(self, value: Any, by: OpScope | NoopOp | None = None, **metadata: Any) -> str:
        """A new version holding `value`; the previous version is recorded as the operation's input."""
        self._require_live("update")
        return self._write(value, by, deleted=False, metadata=metadata)

    def delete(self, by: OpScope | NoopOp | None = None, **metadata: Any) -> str:
        """A tombstone version: the unit leaves the memory state from this seq on."""
        self._require_live("delete")
        return self._write(None, by, deleted=True, metadata=metadata)

    def _require_live(self, action: str) -> None:
        if not self.exists:
            state = "was deleted" if self.version else "was never created"
            raise ValueError(f"cannot {action} memory unit {self.unit_id!r}: it {state}")

    def _write(self, value: Any, by: OpScope | NoopOp | None, *, deleted: bool, metadata: dict) -> str | None:
        recorder = self.recorder
        op = by if by is not None else current_op_var.get()
        op_id = getattr(op, "id", None)
        previous = recorder.latest(self.unit_id)
        action = "delete" if deleted else ("update" if previous is not None and not previous[3] else "create")
        patch = recorder.patch_for(op_id)
        change = patch.memory.get(self.unit_id) if patch is not None else None
        if change is not None:
            if change.action is MemoryAction.CANCEL:
                self.applied = ("cancelled", None)
                return None
            if change.action is MemoryAction.DELETE:
                if previous is None or previous[3]:
                    self.applied = ("cancelled", None)
                    return None
                deleted, value, action = True, None, "delete"
            else:
                value = change.value
        self.applied = (action, value)
        if op_id is not None and previous is not None and not previous[3]:
            recorder.edge(op_id, previous[2], "in")
        blob = None if deleted else recorder.blob_for(value)
        var_id = recorder.new_version(
            self.unit_id, blob, MEMORY_ENTRY, deleted=deleted, metadata=metadata or None, value=value
        )
        if op_id is not None:
            recorder.edge(op_id, var_id, "out")
        return var_id

    def __repr__(self) -> str:
        return f"<memory unit {self.unit_id!r} v{self.version}>"
