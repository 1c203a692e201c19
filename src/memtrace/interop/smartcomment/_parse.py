"""Validation and ordering of a parsed smartcomment graph, before anything becomes a memtrace row.

`parse_graph` checks every record the importer relies on (types, required keys, unique ids,
edges pointing at known nodes and operations) and fails with one line naming the record.
`assign_seqs` gives nodes and operations a total order (see `_order.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import FormatError
from ...graph.model import MEMORY_ENTRY
from .._common import parse_sc_time, stable_id
from ._order import priority_order
from ._schema import NONE_NODE, NONE_OP, RETRIEVAL, full_name_of


class Checker:
    """Type checks that fail with one line naming the file and the record."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> FormatError:
        return FormatError(self.path, f"{where}: {problem}")

    def get(
        self, rec: Mapping[str, Any], key: str, types: tuple[type, ...], where: str, *, required: bool = False
    ) -> Any:
        value = rec.get(key)
        if value is None:
            if required:
                raise self.fail(where, f"'{key}' is missing")
            return None
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            expected = " or ".join(t.__name__ for t in types)
            raise self.fail(where, f"'{key}' must be {expected}, not {type(value).__name__}")
        return value

    def time(self, rec: Mapping[str, Any], where: str) -> float | None:
        text = self.get(rec, "created_at", (str,), where)
        if text is None:
            return None
        try:
            return parse_sc_time(text)
        except ValueError:
            raise self.fail(where, f"'created_at' {text!r} is not 'YYYY-MM-DD HH:MM:SS.fff'") from None

    def records(self, data: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
        items = data.get(key)
        if items is None:
            return []
        if not isinstance(items, list):
            raise self.fail(f"data.{key}", f"must be a list, not {type(items).__name__}")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise self.fail(f"data.{key}[{i}]", f"must be an object, not {type(item).__name__}")
        return items


@dataclass(slots=True)
class ParsedGraph:
    """The validated lists of a graph with the indexes the importer needs."""

    sessions: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    operations: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    node_ids: list[str] = field(default_factory=list)
    node_index: dict[str, int] = field(default_factory=dict)
    full_names: dict[str, str] = field(default_factory=dict)
    node_times: list[float | None] = field(default_factory=list)
    op_index: dict[str, int] = field(default_factory=dict)
    op_times: list[float | None] = field(default_factory=list)
    edge_ids: list[str] = field(default_factory=list)
    edge_times: list[float | None] = field(default_factory=list)
    edges_by_op: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: True when edges use `__none_op__` but the file has no such operation.
    invented_none_op: bool = False


def parse_graph(data: Mapping[str, Any], check: Checker, run_id: str) -> ParsedGraph:
    """Validate sessions, nodes, operations and edges; index them by id."""
    g = ParsedGraph(
        check.records(data, "sessions"),
        check.records(data, "nodes"),
        check.records(data, "operations"),
        check.records(data, "edges"),
    )
    seen_sessions: set[str] = set()
    for i, session in enumerate(g.sessions):
        sid = check.get(session, "session_id", (str,), f"data.sessions[{i}]", required=True)
        if sid in seen_sessions:
            raise check.fail(f"data.sessions[{i}]", f"duplicate session_id {sid!r}")
        seen_sessions.add(sid)

    for i, node in enumerate(g.nodes):
        where = f"data.nodes[{i}]"
        if not check.get(node, "name", (str,), where, required=True):
            raise check.fail(where, "'name' is empty")
        version = check.get(node, "version", (int,), where)
        if version is not None and version < 1:
            raise check.fail(where, f"'version' must be >= 1, not {version}")
        check.get(node, "value", (str,), where, required=True)
        _check_common(check, node, where, ("class_name", "category"))
        full_name = full_name_of(node.get("class_name"), node["name"])
        node_id = f"{full_name}@{version or 1}"
        if node_id in g.node_index:
            raise check.fail(where, f"duplicate node {node_id!r} (also data.nodes[{g.node_index[node_id]}])")
        g.node_index[node_id] = i
        g.node_ids.append(node_id)
        g.full_names[node_id] = full_name
        g.node_times.append(check.time(node, where))

    for i, op in enumerate(g.operations):
        where = f"data.operations[{i}]"
        op_id = check.get(op, "op_id", (str,), where, required=True)
        _check_common(check, op, where, ("op_name", "category"))
        if op_id in g.op_index:
            raise check.fail(where, f"duplicate op_id {op_id!r}")
        g.op_index[op_id] = i
        g.op_times.append(check.time(op, where))

    seen_edges: set[str] = set()
    for i, edge in enumerate(g.edges):
        edge_id = check.get(edge, "edge_id", (str,), f"data.edges[{i}]") or stable_id("edge-", run_id, i)
        where = f"data.edges[{i}] ({edge_id})"
        op_id = check.get(edge, "op_id", (str,), where, required=True)
        src = check.get(edge, "source_full_node_id", (str,), where, required=True)
        dst = check.get(edge, "target_full_node_id", (str,), where, required=True)
        _check_common(check, edge, where, ("category",))
        for role, ref in (("source", src), ("target", dst)):
            if ref not in g.node_index:
                raise check.fail(where, f"{role} {ref!r} is not among data.nodes")
        if op_id not in g.op_index and op_id != NONE_OP:
            raise check.fail(where, f"op_id {op_id!r} is not among data.operations")
        if edge_id in seen_edges:
            raise check.fail(where, f"duplicate edge_id {edge_id!r}")
        seen_edges.add(edge_id)
        g.edge_ids.append(edge_id)
        g.edges_by_op.setdefault(op_id, []).append((src, dst))
        g.edge_times.append(check.time(edge, where))

    if NONE_OP in g.edges_by_op and NONE_OP not in g.op_index:
        g.invented_none_op = True
        times = [t for t, e in zip(g.edge_times, g.edges, strict=True) if e["op_id"] == NONE_OP and t]
        g.op_index[NONE_OP] = len(g.operations)
        g.op_times.append(min(times, default=None))
    return g


def _check_common(check: Checker, rec: Mapping[str, Any], where: str, strings: tuple[str, ...]) -> None:
    for key in (*strings, "session_id", "filename", "comment"):
        check.get(rec, key, (str,), where)
    check.get(rec, "lineno", (int,), where)
    check.get(rec, "metadata", (dict,), where)


def retrieval_reads(g: ParsedGraph) -> dict[str, set[str]]:
    """Per retrieval operation, the nodes it re-emitted: they were read, not written, by it.

    MemBase's search links the query straight to the memory entries it returns, so in the file a
    search looks like the writer of every memory it found. A memory entry, or a target some
    non-retrieval operation writes, is read by a retrieval step; everything else is its output.
    """
    categories = {op["op_id"]: op.get("category") for op in g.operations}
    written_by: dict[str, set[str]] = {}
    for op_id, pairs in g.edges_by_op.items():
        for _, target in pairs:
            written_by.setdefault(target, set()).add(op_id)
    reads: dict[str, set[str]] = {}
    for op_id, pairs in g.edges_by_op.items():
        if categories.get(op_id) != RETRIEVAL:
            continue
        for source, target in pairs:
            node = g.nodes[g.node_index[target]]
            if source == NONE_NODE or target == NONE_NODE or seq_hint(node) is not None:
                continue
            others = written_by[target] - {op_id}
            if node.get("category") == MEMORY_ENTRY or any(categories.get(o) != RETRIEVAL for o in others):
                reads.setdefault(op_id, set()).add(target)
    return reads


def op_inputs(g: ParsedGraph, reads: Mapping[str, set[str]]) -> dict[str, list[str]]:
    """Per operation, the nodes with in-degree 0 among its edges (REFERENCE.md), placeholder excluded,
    then the nodes a retrieval step read (`retrieval_reads`).

    `COMMENT:NONE@1` stands for "no input"; as a real input it would tie unrelated ops together.
    """
    out = {}
    for op_id, pairs in g.edges_by_op.items():
        targets = {t for _, t in pairs}
        sources = [s for s, _ in pairs if s not in targets and s != NONE_NODE]
        read = [t for _, t in pairs if t in reads.get(op_id, ())]
        out[op_id] = list(dict.fromkeys([*sources, *read]))
    return out


def assign_seqs(
    g: ParsedGraph, inputs: Mapping[str, list[str]], reads: Mapping[str, set[str]], fallback: float
) -> tuple[list[int], list[float]]:
    """Seqs (1..n) and wall times for nodes then operations (index = node index, then n + op index).

    An op comes after its inputs and an output after the op that created it (an op that only
    re-touched an older node does not move it). Links outside any op order source before target.
    A graph memtrace exported carries its true seqs in `metadata.memtrace.seq`: those win.
    """
    n_nodes = len(g.nodes)
    times = [t or fallback for t in (*g.node_times, *g.op_times)]
    before: list[tuple[int, int]] = []
    for op_id, pairs in g.edges_by_op.items():
        if op_id == NONE_OP:  # unrelated links made outside any op: order each link on its own
            for s, t in pairs:
                a, b = g.node_index[s], g.node_index[t]
                if times[a] <= times[b]:
                    before.append((a, b))
            continue
        k = n_nodes + g.op_index[op_id]
        before.extend((g.node_index[s], k) for s in inputs[op_id])
        for _, t in pairs:
            if t not in reads.get(op_id, ()) and times[k] <= times[g.node_index[t]]:
                before.append((k, g.node_index[t]))
    op_records = [*g.operations, *([{"op_id": NONE_OP}] if g.invented_none_op else [])]
    hints = [seq_hint(r) for r in (*g.nodes, *op_records)]
    placeholders = {g.node_index.get(NONE_NODE), n_nodes + g.op_index.get(NONE_OP, -n_nodes - 1)}
    if any(h is not None for h in hints) and all(
        h is not None or k in placeholders for k, h in enumerate(hints)
    ):
        priority = [(h or 0, 1 if k >= n_nodes else 0, k) for k, h in enumerate(hints)]
        before = []
    else:
        priority = [(t, 1 if k >= n_nodes else 0, k) for k, t in enumerate(times)]
    seqs = [0] * len(times)
    for seq, k in enumerate(priority_order(priority, before), start=1):
        seqs[k] = seq
    return seqs, times


def memtrace_meta(record: Mapping[str, Any] | None) -> dict[str, Any]:
    """The `memtrace` block our exporter writes into a record's metadata, if any."""
    meta = record.get("metadata") if record else None
    block = meta.get("memtrace") if isinstance(meta, dict) else None
    return block if isinstance(block, dict) else {}


def seq_hint(record: Mapping[str, Any]) -> int | None:
    seq = memtrace_meta(record).get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None
