"""An operation's page: what it read and wrote with values, where it sits, and for each memory unit
it wrote, the word-level diff from that unit's previous version."""

from __future__ import annotations

from typing import Any

from ..graph import MEMORY_ENTRY, Graph, VariableVersion
from .text import display_text
from .worddiff import word_diff

#: Characters of one value shown (the full value is one click away in the JSON API).
MAX_VALUE_CHARS = 6000


def operation_detail(graph: Graph, op_id: str) -> dict[str, Any]:
    """Inputs and outputs with values, parent and children, and memory-unit diffs."""
    sub = graph.subgraph(op_id)
    op = sub.op
    values = graph.values([*sub.inputs, *sub.outputs])
    return {
        "run": {"id": graph.run.id, "name": graph.run.name, "system": graph.run.system},
        "op": {
            "id": op.id,
            "name": op.name,
            "category": op.category,
            "seq": op.seq,
            "status": op.status,
            "parent_op": op.parent_op,
            "seconds": None if op.ended_at is None else round(op.ended_at - op.started_at, 6),
            "metadata": op.metadata,
        },
        "inputs": [_var_dict(v, values.get(v.id)) for v in sub.inputs],
        "outputs": [_var_dict(v, values.get(v.id)) for v in sub.outputs],
        "children": [
            {"id": c.id, "name": c.name, "category": c.category, "seq": c.seq} for c in sub.children
        ],
        "unit_diffs": [
            _unit_diff(graph, v, values.get(v.id)) for v in sub.outputs if v.category == MEMORY_ENTRY
        ],
        "blamed_by": [
            {"case_id": a.case_id, "error_type": a.error_type, "method": a.method}
            for a in graph.store.attribution_summaries(graph.run.id)
            if a.op_id == op.id
        ],
    }


def _var_dict(var: VariableVersion, value: Any) -> dict[str, Any]:
    text = display_text(value)
    return {
        "id": var.id,
        "name": var.name,
        "version": var.version,
        "category": var.category,
        "seq": var.seq,
        "deleted": var.deleted,
        "text": text[:MAX_VALUE_CHARS],
        "truncated": len(text) > MAX_VALUE_CHARS,
    }


def _unit_diff(graph: Graph, version: VariableVersion, value: Any) -> dict[str, Any]:
    """The change this operation made to a memory unit, word by word against its previous version."""
    previous = None
    if version.version > 1:
        earlier = [v for v in graph.versions(version.name) if v.version < version.version]
        previous = earlier[-1] if earlier else None
    old = "" if previous is None else display_text(graph.value(previous.id))
    new = "" if version.deleted else display_text(value)
    change = "delete" if version.deleted else ("create" if previous is None else "update")
    return {
        "unit": version.name,
        "from": None if previous is None else previous.id,
        "to": version.id,
        "change": change,
        "segments": [{"kind": kind, "text": text} for kind, text in word_diff(old, new)],
    }
