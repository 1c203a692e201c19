"""Import and export the smartcomment graph JSON that the paper's code and MemTraceBench use.

Mapping (REFERENCE.md): a node is a variable version whose id is smartcomment's `full_node_id`;
an operation is an operation; each variable->variable edge becomes an output edge of its
operation that remembers its source (so it exports back edge for edge), and every node with
in-degree 0 inside an operation's edges becomes one input edge of that operation. Values are
the file's strings, stored as text, so they come back byte for byte. Everything the model has
no column for (sessions, file names, comments, ownership ids) stays in metadata.

The whole file is validated into rows first; only then is it written, in one transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import FormatError
from ...graph.model import MEMORY_ENTRY, RUN_COMPLETE, Annotation, Case, Edge, Operation, Run, VariableVersion
from ...graph.rows import RunRows, case_row, edge_row, op_row, var_row
from ...graph.store import Store
from ...graph.values import encode_value
from .._common import compact, load_json_file, parse_sc_time, stable_id
from ._cases import annotation_cases, judged_cases, merge_cases, native_cases
from ._deletions import (
    FILE_CATEGORY,
    MARKER_CATEGORY,
    deleted_versions,
    deletion_nodes,
    interleave,
    marker_deletions,
)
from ._export import export_smartcomment, write_smartcomment
from ._parse import Checker, assign_seqs, memtrace_meta, op_inputs, parse_graph, retrieval_reads
from ._schema import (
    COMPUTED_KEYS,
    DELETED,
    EDGE_KEYS,
    NODE_KEYS,
    NONE_OP,
    OP_KEYS,
    OWNER_KEYS,
    TOP_KEYS,
)
from ._values import VERBATIM, VERBATIM_TEXT, decode_spelled

__all__ = [
    "ImportedRun",
    "export_smartcomment",
    "import_smartcomment",
    "read_smartcomment",
    "write_smartcomment",
]


@dataclass(slots=True)
class ImportedRun:
    """A smartcomment graph turned into memtrace records, validated and ready to write."""

    run: Run
    ops: list[Operation] = field(default_factory=list)
    variables: list[VariableVersion] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    blobs: list[tuple[str, str, bytes]] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)
    annotations: list[Annotation] = field(default_factory=list)


def _record_metadata(rec: Mapping[str, Any], known: set[str], top: Mapping[str, Any], **more: Any) -> dict:
    """Everything of a record the model has no column for; `extra` overrides on export."""
    extra = {k: v for k, v in rec.items() if k not in known and k not in COMPUTED_KEYS}
    extra.update({k: rec[k] for k in OWNER_KEYS if k in rec and rec[k] != top.get(k)})
    meta = {k: rec.get(k) for k in ("comment", "session_id", "created_at", "filename", "lineno", "metadata")}
    return compact({**meta, **more, "extra": extra})


def read_smartcomment(
    source: str | Path | Mapping[str, Any],
    *,
    name: str | None = None,
    system: str | None = None,
    id_hint: str | None = None,
    name_prefix: str = "",
) -> ImportedRun:
    """Validate a smartcomment export (a path or the parsed dict) and map it to memtrace records.

    The run id is stable: derived from graph_id, the MemTraceBench file name (or `id_hint`) and
    the system, so importing the same graph again replaces it instead of duplicating it.
    `name_prefix` qualifies the default name (a benchmark split: `mem0/conv-h01`).
    """
    path = "<dict>" if isinstance(source, Mapping) else str(source)
    raw = source if isinstance(source, Mapping) else load_json_file(source)
    check = Checker(path)
    if not isinstance(raw, dict):
        raise FormatError(path, f"expected a smartcomment graph object, found a JSON {type(raw).__name__}")
    graph_id = check.get(raw, "graph_id", (str,), "top level", required=True)
    data = check.get(raw, "data", (dict,), "top level", required=True)
    graph_meta = check.get(raw, "metadata", (dict,), "top level") or {}
    annotations = data.get("annotations")
    if annotations is not None and not isinstance(annotations, list):
        raise check.fail("data.annotations", f"must be a list, not {type(annotations).__name__}")
    mtb_file = graph_meta.get("memtracebench_graph_filename")
    mtb_file = mtb_file if isinstance(mtb_file, str) and mtb_file else None
    run_id = stable_id("sc-", graph_id, mtb_file or id_hint or "", system or "")
    g = parse_graph(data, check, run_id)

    imported = ImportedRun(run=Run(id=run_id, name=""))
    by_id = {node_id: g.nodes[i] for node_id, i in g.node_index.items()}
    judged = judged_cases(run_id, by_id, g.full_names, g.operations, g.edges_by_op)
    labelled: list[Case] = []
    if annotations:
        labelled, imported.annotations = annotation_cases(run_id, annotations, path, g.node_index)
    imported.cases = merge_cases(labelled, judged)
    native = graph_meta.get("memtrace") if isinstance(graph_meta.get("memtrace"), dict) else {}
    if native.get("cases") is not None:  # memtrace's own export: its cases, not re-derived ones
        imported.cases = native_cases(run_id, native["cases"], path)

    top_time = _lenient_time(raw.get("created_at"))
    known_times = [t for t in (*g.node_times, *g.op_times, *g.edge_times) if t is not None]
    fallback = top_time if top_time is not None else min(known_times, default=0.0)
    reads = retrieval_reads(g)
    inputs_of = op_inputs(g, reads)
    seqs, times = assign_seqs(g, inputs_of, reads, fallback)
    n_nodes = len(g.nodes)
    decoded = [_node_value(node) for node in g.nodes]
    markers, deleted_in_place = deletion_nodes(g, [value for value, _ in decoded])

    # -- records ----------------------------------------------------------------------------
    blobs: dict[str, tuple[str, str, bytes]] = {}
    for i, node in enumerate(g.nodes):
        node_id = g.node_ids[i]
        value, spelling = decoded[i]
        blob = encode_value(value)
        blobs.setdefault(blob[0], blob)
        category = node.get("category") or "variable"
        is_deletion = node_id in deleted_in_place or (bool(memtrace_meta(node)) and node["value"] == DELETED)
        more = {"class_name": node.get("class_name"), "index": i, "spelling": spelling}
        if spelling == VERBATIM:
            more[VERBATIM_TEXT] = node["value"]
        if node_id in markers:  # not a memory unit, whatever the file calls it
            more[FILE_CATEGORY], category = node.get("category"), MARKER_CATEGORY
        imported.variables.append(
            VariableVersion(
                run_id=run_id,
                id=node_id,
                name=g.full_names[node_id],
                version=node.get("version") or 1,
                seq=seqs[i],
                category=category,
                blob=blob[0],
                deleted=category == MEMORY_ENTRY and is_deletion,
                created_at=times[i],
                metadata=_record_metadata(node, NODE_KEYS, raw, **more),
            )
        )
    ends: dict[str, float] = {}
    for edge, t in zip(g.edges, g.edge_times, strict=True):
        if t is not None:
            ends[edge["op_id"]] = max(t, ends.get(edge["op_id"], t))
    by_op_id = {op["op_id"]: op for op in g.operations}
    for op_id, i in g.op_index.items():
        k = n_nodes + i
        if op_id == NONE_OP and g.invented_none_op:
            op_name, category, meta = "NONE sentinel", "sentinel", {"sentinel": True, "invented": True}
        else:
            op = by_op_id[op_id]
            op_name, category = op.get("op_name") or "(unnamed)", op.get("category") or "operation"
            meta = _record_metadata(op, OP_KEYS, raw, index=i)
            if op.get("op_name") is None:
                meta.setdefault("extra", {})["op_name"] = None
        imported.ops.append(
            Operation(
                run_id=run_id,
                id=op_id,
                seq=seqs[k],
                name=op_name,
                category=category,
                parent_op=_parent_hint(by_op_id.get(op_id), by_op_id),
                started_at=times[k],
                ended_at=ends.get(op_id),
                metadata=meta,
            )
        )
    for edge, edge_id in zip(g.edges, g.edge_ids, strict=True):
        meta = _record_metadata(edge, EDGE_KEYS, raw, edge_id=edge_id, category=edge.get("category"))
        op_id, target = edge["op_id"], edge["target_full_node_id"]
        role = "in" if target in reads.get(op_id, ()) else "out"
        imported.edges.append(Edge(run_id, op_id, target, role, edge["source_full_node_id"], meta))
    for op_id, inputs in inputs_of.items():
        imported.edges.extend(
            Edge(run_id, op_id, var_id, "in") for var_id in inputs if var_id not in reads.get(op_id, ())
        )
    added, deleting = deleted_versions(
        run_id, marker_deletions(g, markers), imported.variables, {op.id: op for op in imported.ops}
    )
    imported.variables = interleave(imported.ops, imported.variables, added)
    imported.edges.extend(deleting)
    imported.blobs = list(blobs.values())

    smartcomment = {k: raw.get(k) for k in TOP_KEYS}
    smartcomment.update(metadata=graph_meta, sessions=[_strip_computed(s) for s in g.sessions])
    extra_top = {k: v for k, v in raw.items() if k not in {*TOP_KEYS, "data", "metadata"}}
    if extra_top:
        smartcomment["extra"] = extra_top
    source_name = None if isinstance(source, Mapping) else Path(source).name
    mtb_source = graph_meta.get("memtracebench_dataset_source")
    imported.run = Run(
        id=run_id,
        name=name or _qualified(name_prefix, _default_name(graph_meta, mtb_file, source, graph_id)),
        system=system or _text(native.get("system")),
        dataset=mtb_source if isinstance(mtb_source, str) else _text(native.get("dataset")),
        conversation=Path(mtb_file).stem if mtb_file else _text(native.get("conversation")),
        status=RUN_COMPLETE,
        metadata=compact(
            {"smartcomment": smartcomment, "source": compact({"format": "smartcomment", "file": source_name})}
        ),
        created_at=fallback,
        finished_at=max(known_times, default=None),
    )
    return imported


def _qualified(prefix: str, name: str) -> str:
    """`prefix + name`, once: a graph memtrace exported already carries its qualified name."""
    return name if name.startswith(prefix) else prefix + name


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _lenient_time(text: Any) -> float | None:
    """The graph's own created_at; smartcomment never validates it, so neither do we."""
    try:
        return parse_sc_time(text) if isinstance(text, str) else None
    except ValueError:
        return None


def _strip_computed(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in COMPUTED_KEYS}


def _parent_hint(op: Mapping[str, Any] | None, ops: Mapping[str, Any]) -> str | None:
    parent = memtrace_meta(op).get("parent_op")
    return parent if isinstance(parent, str) and parent in ops else None


def _default_name(meta: Mapping[str, Any], mtb_file: str | None, source: Any, graph_id: str) -> str:
    """The name memtrace exported the run under, else the benchmark file's, the file's, the graph id."""
    native = meta.get("memtrace")
    if isinstance(native, dict) and isinstance(native.get("name"), str):
        return native["name"]
    if mtb_file:
        return mtb_file.removesuffix(".json")
    if not isinstance(source, Mapping):
        return Path(source).name.removesuffix(".gz").removesuffix(".json")
    return graph_id


def write_imported(store: Store, imported: ImportedRun, *, replace: bool = True) -> Run:
    """Write a validated import in one transaction, replacing a run with the same id if asked."""
    with store.transaction() as conn:
        return write_imported_in(store, conn, imported, replace=replace)


def write_imported_in(
    store: Store, conn: sqlite3.Connection, imported: ImportedRun, *, replace: bool = True
) -> Run:
    """Write a validated import inside a transaction the caller holds (a folder imports all or nothing)."""
    run = imported.run
    rows = RunRows(
        ops=[op_row(o) for o in imported.ops],
        variables=[var_row(v) for v in imported.variables],
        edges=[edge_row(e) for e in imported.edges],
        blobs=imported.blobs,
        cases=[case_row(c) for c in imported.cases],
        annotations=list(imported.annotations),
    )
    store.replace_run_in(conn, run, rows, replace=replace)
    return run


def import_smartcomment(
    store: Store,
    path: str | Path | Mapping[str, Any],
    *,
    name: str | None = None,
    system: str | None = None,
    replace: bool = True,
    id_hint: str | None = None,
    name_prefix: str = "",
) -> Run:
    """Import one smartcomment graph file as a run: validated first, then written atomically."""
    imported = read_smartcomment(path, name=name, system=system, id_hint=id_hint, name_prefix=name_prefix)
    return write_imported(store, imported, replace=replace)


def _node_value(node: dict[str, Any]) -> tuple[Any, str | None]:
    """A node's value and its spelling: memtrace's own JSON exports decode as such, foreign text as
    it was spelt (repr or JSON, see `_sc_values`), plain text as it is."""
    value = node["value"]
    native = memtrace_meta(node)
    if native.get("json") is True:
        try:
            return json.loads(value), None
        except ValueError:
            return value, None
    if native:
        return value, None
    return decode_spelled(value)
