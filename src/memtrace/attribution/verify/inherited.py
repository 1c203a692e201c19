"""A run that is itself a replay (an injected fault, an earlier repair) carries its patches: a repair
replay of it must apply them again, or it answers for another run.

Replaying a replay merges its patches with the repair's, addressed by operation id. A repair that adds
an operation (an extraction writing one more fact) moves the ids of every later operation, so a patch
addressed to a later one (a planted fault at the answer step) no longer finds it: the replay then
flips the answer by undoing the planted fault, not by the repair.
"""

from __future__ import annotations

from ...graph import Workspace
from ...trace.patch import PatchPolicy
from ..model import Attribution


def inherited_patches_lost(ws: Workspace, attribution: Attribution, patched: list[str]) -> list[str]:
    """The patches of the run being verified that a repair replay of it did not apply again."""
    own = PatchPolicy.patches_of(ws.run(attribution.run_id).metadata) or {}
    return sorted(op_id for op_id in own if op_id not in patched and op_id != attribution.op_id)
