"""Compact text renderings of a graph for LLM prompts: value previews, operation blocks, lineage, logs.

The paper's agent sees operation subgraphs as XML paged at 128k characters, so one step can cost a
whole context window. Here one line carries one variable (`id s<seq> category: preview`) and one
block carries one operation, and every rendering is cut to a character budget the caller chooses:
token cost is decided by the attributor, not by the size of the run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ...graph import GraphQueries, LineageNode, Operation, VariableVersion
from ...graph.values import value_text

#: Variables listed per side (inputs/outputs) of one operation block before the rest is counted.
MAX_VARS_PER_SIDE = 16


def clip(text: str, width: int) -> str:
    """`text` cut to `width` characters, saying how much was left out."""
    if len(text) <= width:
        return text
    keep = max(width - 12, 1)
    return f"{text[:keep]}…(+{len(text) - keep} chars)"


def preview(value: Any, width: int = 160) -> str:
    """A one-line preview of a value: whitespace collapsed, cut to `width`."""
    text = "None" if value is None else value_text(value)
    return clip(" ".join(text.split()), width)


def full_text(value: Any) -> str:
    """A value as text (for `view` and `grep`): strings unchanged, structures as compact JSON."""
    return "None" if value is None else value_text(value)


def var_head(version: VariableVersion) -> str:
    """`id s<seq> category` (plus a deletion mark) for one variable version."""
    gone = " DELETED" if version.deleted else ""
    return f"{version.id} s{version.seq} {version.category}{gone}"


def var_line(version: VariableVersion, value: Any, width: int = 160) -> str:
    """`id s<seq> category: preview` for one variable version."""
    return f"{var_head(version)}: {preview(value, width)}"


def op_label(op: Operation) -> str:
    """`id [category] s<seq>`, with the name when the id does not start with it."""
    name = "" if op.id.startswith(op.name) else f" {op.name}"
    return f"{op.id}{name} [{op.category}] s{op.seq}"


def op_header(op: Operation, meta_width: int = 200) -> str:
    """The label plus parent and metadata (rankings, decisions, scores) in compact JSON."""
    parts = [op_label(op)]
    if op.parent_op:
        parts.append(f"in {op.parent_op}")
    if op.status and op.status != "ok":
        parts.append(f"status={op.status}")
    if op.metadata:
        meta = json.dumps(op.metadata, ensure_ascii=False, separators=(",", ":"), default=str)
        parts.append(clip(meta, meta_width))
    return " ".join(parts)


def op_block(
    graph: GraphQueries,
    op_id: str,
    *,
    width: int = 160,
    mark: str | None = None,
    role: str | None = None,
) -> str:
    """One operation with its inputs, outputs and nested operations; `mark` stars one variable.

    When `mark` is one of the outputs, the other outputs are listed by id only: the siblings of a
    message written by a session loader are noise, while an operation's inputs explain the output."""
    sub = graph.subgraph(op_id)
    outputs = sub.outputs
    siblings: list[str] = []
    if role == "output" and mark is not None:
        siblings = [v.id for v in outputs if v.id != mark]
        outputs = [v for v in outputs if v.id == mark]
    values = graph.values([*sub.inputs, *outputs])
    head = f"op {op_header(sub.op)}"
    if role:
        head = f"{head}  <- {mark} is its {role}"
    lines = [head]
    for side, versions in (("in ", sub.inputs), ("out", outputs)):
        for version in versions[:MAX_VARS_PER_SIDE]:
            star = "*" if version.id == mark else " "
            lines.append(f" {star}{side} {var_line(version, values.get(version.id), width)}")
        if len(versions) > MAX_VARS_PER_SIDE:
            rest = ", ".join(v.id for v in versions[MAX_VARS_PER_SIDE:][:20])
            lines.append(f"  {side} (+{len(versions) - MAX_VARS_PER_SIDE} more: {clip(rest, 200)})")
    if siblings:
        lines.append(f"  out (+{len(siblings)} other outputs: {clip(', '.join(siblings), 200)})")
    if sub.children:
        kids = ", ".join(op_label(child) for child in sub.children[:8])
        more = f" (+{len(sub.children) - 8} more)" if len(sub.children) > 8 else ""
        lines.append(f"  sub {kids}{more}")
    return "\n".join(lines)


def lineage_lines(graph: GraphQueries, nodes: list[LineageNode], width: int = 100) -> list[str]:
    """One line per lineage node: depth, kind and id, with a preview for variables."""
    versions = [graph.var(n.id) for n in nodes if n.kind == "var"]
    values = graph.values(versions)
    by_id = {v.id: v for v in versions}
    lines = []
    for node in nodes:
        if node.kind == "var":
            lines.append(f"d{node.depth} {var_line(by_id[node.id], values.get(node.id), width)}")
        else:
            lines.append(f"d{node.depth} op {op_label(graph.op(node.id))}")
    return lines


def paginate(blocks: Iterable[str], budget: int) -> list[str]:
    """Pack blocks into pages of at most `budget` characters; an oversized block is cut."""
    pages: list[str] = []
    current: list[str] = []
    size = 0
    for block in blocks:
        block = clip(block, budget)
        if current and size + len(block) + 1 > budget:
            pages.append("\n".join(current))
            current, size = [], 0
        current.append(block)
        size += len(block) + 1
    if current:
        pages.append("\n".join(current))
    return pages


# -- whole runs ---------------------------------------------------------------------------------


def all_ops(graph: GraphQueries) -> list[Operation]:
    """Every operation of the run in seq order (from memory for a GraphView, else from the store)."""
    ordered = getattr(graph, "ops_in_order", None)
    if callable(ordered):
        return list(ordered())
    store = graph.store  # type: ignore[attr-defined]
    return sorted(store.ops(graph.run.id), key=lambda op: op.seq)


def all_vars(graph: GraphQueries) -> list[VariableVersion]:
    """Every variable version of the run in seq order."""
    held = getattr(graph, "vars", None)
    if isinstance(held, dict):
        return sorted(held.values(), key=lambda v: v.seq)
    store = graph.store  # type: ignore[attr-defined]
    return sorted(store.variables(graph.run.id), key=lambda v: v.seq)


def log_blocks(graph: GraphQueries, ops: list[Operation], width: int = 200) -> list[str]:
    """A flat log of operations: each output shown with its value once, inputs by id when their value
    was already shown above (a memory entry read by thirty searches is printed once, not thirty times)."""
    shown: set[str] = set()
    blocks = []
    for op in ops:
        sub = graph.subgraph(op.id)
        fresh = [v for v in (*sub.inputs, *sub.outputs) if v.id not in shown]
        values = graph.values(fresh)
        lines = [f"[{op_header(op, meta_width=width)}]"]
        known = [v.id for v in sub.inputs if v.id in shown]
        if known:
            lines.append(f"  in  {clip(', '.join(known), 4 * width)}")
        for side, versions in (("in ", sub.inputs), ("out", sub.outputs)):
            for version in versions:
                if version.id in shown:
                    if side == "out":
                        lines.append(f"  out {version.id}")
                    continue
                lines.append(f"  {side} {var_line(version, values.get(version.id), width)}")
                shown.add(version.id)
        blocks.append("\n".join(lines))
    return blocks
