"""Replay patches: what a re-executed operation does differently, and the policy a replaying recorder follows.

A `Patch` belongs to one operation: outputs it replaces (the pipeline carries on with the new value),
memory changes it cancels, turns into deletions or replaces, and memory items later operations must
keep. Replay hands the recorder a `PatchPolicy` (patches by operation id, plus the parent run's
prefix to resume after); the policy is stored in the replayed run's metadata so that replaying a
replay starts from its parent with the same patches.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["CANCEL", "DELETE", "MemoryAction", "MemoryChange", "Patch", "PatchPolicy"]

#: Legacy markers of the dict patch format ({"memory": {unit: CANCEL}}), still read: runs replayed by
#: earlier versions store them in their metadata. New code says `Patch().cancel(unit)`.
CANCEL = "__memtrace_cancel__"
DELETE = "__memtrace_delete__"


class MemoryAction(StrEnum):
    """What a patch does to an operation's change of one memory unit."""

    CANCEL = "cancel"  # the change does not happen: the unit keeps its previous version
    DELETE = "delete"  # the change becomes a deletion of the unit
    REPLACE = "replace"  # the change writes `value` instead


@dataclass(frozen=True, slots=True)
class MemoryChange:
    action: MemoryAction
    value: Any = None


@dataclass(slots=True)
class Patch:
    """The repair of one operation; build it with the chainable methods, e.g. `Patch().cancel("mem-3")`."""

    outputs: dict[str, Any] = field(default_factory=dict)
    memory: dict[str, MemoryChange] = field(default_factory=dict)
    keep: dict[str, list[Any]] = field(default_factory=dict)

    def replace_output(self, name: str, value: Any) -> Patch:
        """The operation's output `name` (recorded with `op.produce`) becomes `value`."""
        self.outputs[name] = value
        return self

    def cancel(self, unit_id: str) -> Patch:
        """The operation's change of memory unit `unit_id` does not happen."""
        self.memory[unit_id] = MemoryChange(MemoryAction.CANCEL)
        return self

    def delete(self, unit_id: str) -> Patch:
        """The operation deletes memory unit `unit_id` instead of changing it."""
        self.memory[unit_id] = MemoryChange(MemoryAction.DELETE)
        return self

    def replace(self, unit_id: str, value: Any) -> Patch:
        """The operation writes `value` to memory unit `unit_id` instead of what it wrote."""
        self.memory[unit_id] = MemoryChange(MemoryAction.REPLACE, value)
        return self

    def keeping(self, unit_id: str, items: list[Any]) -> Patch:
        """Later operations must not drop `items` from unit `unit_id` (systems that trim it honour this)."""
        self.keep[unit_id] = list(items)
        return self

    def to_json(self) -> dict[str, Any]:
        """The JSON form stored in a replayed run's metadata."""
        out: dict[str, Any] = {}
        if self.outputs:
            out["outputs"] = dict(self.outputs)
        if self.memory:
            out["memory"] = {
                unit: {"action": str(change.action), "value": change.value}
                if change.action is MemoryAction.REPLACE
                else {"action": str(change.action)}
                for unit, change in self.memory.items()
            }
        if self.keep:
            out["keep"] = {unit: list(items) for unit, items in self.keep.items()}
        return out

    @classmethod
    def from_json(cls, data: Patch | Mapping[str, Any]) -> Patch:
        """A patch from its JSON form, or from the older dict form with CANCEL/DELETE markers."""
        if isinstance(data, Patch):
            return data
        unknown = set(data) - {"outputs", "memory", "keep"}
        if unknown:
            raise ValueError(f"patch has unknown key(s) {sorted(unknown)}: expected outputs, memory, keep")
        patch = cls(outputs=dict(data.get("outputs") or {}))
        for unit, change in (data.get("memory") or {}).items():
            patch.memory[unit] = _memory_change(unit, change)
        for unit, items in (data.get("keep") or {}).items():
            patch.keep[unit] = list(items)
        return patch


def _memory_change(unit: str, change: Any) -> MemoryChange:
    if isinstance(change, MemoryChange):
        return change
    if change == CANCEL:
        return MemoryChange(MemoryAction.CANCEL)
    if change == DELETE:
        return MemoryChange(MemoryAction.DELETE)
    if isinstance(change, Mapping) and set(change) <= {"action", "value"} and "action" in change:
        try:
            action = MemoryAction(change["action"])
        except ValueError:
            raise ValueError(
                f"patch of memory unit {unit!r}: unknown action {change['action']!r}"
                " (expected cancel, delete or replace)"
            ) from None
        return MemoryChange(action, change.get("value"))
    return MemoryChange(MemoryAction.REPLACE, change)  # the older form: the replacing value itself


class PatchPolicy:
    """What a replaying recorder does differently from recording: the patches it applies, by operation id,
    and the parent run whose first `upto_seq` seqs it reuses instead of re-running."""

    def __init__(
        self,
        patches: Mapping[str, Patch | Mapping[str, Any]] | None = None,
        *,
        resume_from: tuple[str, int] | None = None,
    ) -> None:
        self.patches: dict[str, Patch] = {op: Patch.from_json(p) for op, p in (patches or {}).items()}
        self.resume_from = resume_from
        #: The patched operations that actually ran, in the order they ran.
        self.applied: list[str] = []

    def patch_for(self, op_id: str | None) -> Patch | None:
        """The patch of an operation about to change something (None when it runs as recorded)."""
        if op_id is None or not self.patches:
            return None
        patch = self.patches.get(op_id)
        if patch is not None and op_id not in self.applied:
            self.applied.append(op_id)
        return patch

    def kept(self, unit_id: str) -> list[Any]:
        """Items of a memory unit that the patches applied so far ask later changes not to drop."""
        return [item for op_id in self.applied for item in self.patches[op_id].keep.get(unit_id, [])]

    def describe(self) -> dict[str, Any]:
        """The `replay` entry of the replayed run's metadata."""
        out: dict[str, Any] = {}
        if self.patches:
            out["patches"] = {op_id: patch.to_json() for op_id, patch in self.patches.items()}
        if self.resume_from is not None:
            out["resumed_after_seq"] = self.resume_from[1]
        return out

    @staticmethod
    def patches_of(run_metadata: Mapping[str, Any]) -> dict[str, Patch] | None:
        """The patches a replayed run was recorded with (None for a run that is not a replay)."""
        stored = (run_metadata.get("replay") or {}).get("patches")
        if stored is None:
            return None
        return {op_id: Patch.from_json(p) for op_id, p in stored.items()}
