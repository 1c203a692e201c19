"""The part of a run's graph a case page draws: never the whole run, at most MAX_NODES nodes.

Core nodes are the attribution's path, the blamed operation, the evidence messages, the lanes'
memory unit versions with the operations that wrote them, and the question's retrieval, answer and
prediction. A variable between two core operations (an extraction's facts read by the update that
wrote a unit) joins them so the evidence path reads left to right without gaps.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from ..graph import Graph, NotFoundError, Operation, VariableVersion
from .text import display_text, shorten

MAX_NODES = 200
#: Readers of an evidence message followed at most (the extraction that read it).
MAX_READERS = 3


def case_subgraph(graph: Graph, story: dict[str, Any]) -> dict[str, Any]:
    """Nodes and edges (Cytoscape's element format) around one case's story."""
    ops: dict[str, Operation] = {}
    var_ids: list[str] = []

    def add_op(op_id: str | None) -> None:
        if op_id and op_id not in ops and len(ops) + len(var_ids) < MAX_NODES:
            with suppress(NotFoundError):
                ops[op_id] = graph.op(op_id)

    def add_var(var_id: str | None) -> None:
        if var_id and var_id not in var_ids and len(ops) + len(var_ids) < MAX_NODES:
            var_ids.append(var_id)

    highlighted = {a["op_id"] for a in story["attributions"][:1] if a["op_id"]}
    path_ids = [step["id"] for a in story["attributions"][:1] for step in a["path"]]
    for op_id in highlighted:
        add_op(op_id)
    for step in (s for a in story["attributions"][:1] for s in a["path"]):
        (add_op if step["kind"] == "op" else add_var)(step["id"])
    steps = story["steps"]
    for op_id in (steps["retrieval_op"], steps["answer_op"]):
        add_op(op_id)
    for message in story["evidence"]["messages"]:
        add_var(message["id"])
        for reader in graph.consumers(message["id"])[:MAX_READERS]:
            add_op(reader.id)
    for lane in story["timeline"]["lanes"]:
        for change in lane["changes"][-12:]:
            add_var(change["version"])
            add_op(change["op_id"])
    for item in story["context"]:
        add_var(item["id"])
    _join_core_ops(graph, ops, var_ids, add_var)

    variables = _existing_vars(graph, var_ids)
    values = graph.values(variables)
    nodes = [_op_node(op, op.id in highlighted, op.id in path_ids) for op in ops.values()]
    nodes += [_var_node(v, values.get(v.id), v.id in path_ids) for v in variables]
    shown = {v.id for v in variables}
    edges = []
    for op in ops.values():
        for role, found in (("in", graph.inputs(op.id)), ("out", graph.outputs(op.id))):
            for var in found:
                if var.id not in shown:
                    continue
                source, target = (var.id, op.id) if role == "in" else (op.id, var.id)
                edges.append({"data": {"id": f"{source}->{target}", "source": source, "target": target}})
    return {"nodes": nodes, "edges": edges, "limit": MAX_NODES, "truncated": len(nodes) >= MAX_NODES}


def _join_core_ops(graph: Graph, ops: dict[str, Operation], var_ids: list[str], add_var: Any) -> None:
    """Add each variable written by one core operation and read by another."""
    written: dict[str, str] = {}
    for op_id in list(ops):
        for var in graph.outputs(op_id):
            written[var.id] = op_id
    for op_id in list(ops):
        for var in graph.inputs(op_id):
            if var.id in written and written[var.id] != op_id:
                add_var(var.id)


def _existing_vars(graph: Graph, var_ids: list[str]) -> list[VariableVersion]:
    found = []
    for var_id in var_ids:
        try:
            found.append(graph.var(var_id))
        except NotFoundError:
            continue
    return found


def _op_node(op: Operation, blamed: bool, on_path: bool) -> dict[str, Any]:
    classes = ["op", f"cat-{op.category}"] + (["blamed"] if blamed else []) + (["path"] if on_path else [])
    return {
        "data": {"id": op.id, "label": op.name, "seq": op.seq, "kind": "op", "category": op.category},
        "classes": " ".join(classes),
    }


def _var_node(var: VariableVersion, value: Any, on_path: bool) -> dict[str, Any]:
    classes = ["var", f"vcat-{var.category}"] + (["path"] if on_path else [])
    return {
        "data": {
            "id": var.id,
            "label": var.id,
            "seq": var.seq,
            "kind": "var",
            "category": var.category,
            "text": shorten(display_text(value), 200),
        },
        "classes": " ".join(classes),
    }
