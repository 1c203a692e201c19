"""The memory store of a run as of any seq, and the diff between two seqs."""

from __future__ import annotations

from typing import Any

from .context import RunContext
from .text import display_text
from .worddiff import word_diff

#: Units listed at most on one page of the state (the API says how many there were).
MAX_UNITS = 500


def memory_state(ctx: RunContext, seq: int | None) -> dict[str, Any]:
    """Every live unit as of `seq` (the end of the run when None)."""
    at = ctx.max_seq if seq is None else max(0, min(seq, ctx.max_seq))
    state = ctx.graph.memory_state_at(at)
    shown = sorted(state.values(), key=lambda v: v.seq)[-MAX_UNITS:]
    values = ctx.graph.values(shown)
    return {
        "run": {"id": ctx.graph.run.id, "name": ctx.graph.run.name, "system": ctx.graph.run.system},
        "seq": at,
        "max_seq": ctx.max_seq,
        "sessions": [{"seq": s.seq, "label": s.label} for s in ctx.sessions],
        "count": len(state),
        "units": [
            {"unit": v.name, "version": v.id, "seq": v.seq, "text": display_text(values[v.id])} for v in shown
        ],
    }


def memory_diff(ctx: RunContext, seq_a: int, seq_b: int) -> dict[str, Any]:
    """Units created, changed (with a word diff) and deleted between two seqs."""
    diff = ctx.graph.diff(seq_a, seq_b)
    return {
        "from": min(seq_a, seq_b),
        "to": max(seq_a, seq_b),
        "created": [{"unit": u, "text": display_text(v)} for u, v in diff.created.items()],
        "deleted": [{"unit": u, "text": display_text(v)} for u, v in diff.deleted.items()],
        "changed": [
            {
                "unit": u,
                "segments": [
                    {"kind": k, "text": t} for k, t in word_diff(display_text(old), display_text(new))
                ],
            }
            for u, (old, new) in diff.changed.items()
        ],
    }
