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

from ..checkpoints import rebuild_checkpoints
from ..errors import FormatError, WorkspaceError
from ..model import MEMORY_ENTRY, RUN_COMPLETE, Annotation, Case, Edge, Operation, Run, VariableVersion
from ..rows import case_row, edge_row, op_row, var_row
from ..store import Store
from ..values import encode_value
from ._common import compact, load_json_file, parse_sc_time, stable_id
from ._sc_cases import annotation_cases, judged_cases
from ._sc_export import export_smartcomment, write_smartcomment
from ._sc_parse import Checker, assign_seqs, memtrace_meta, op_inputs, parse_graph
from ._sc_schema import (
    COMPUTED_KEYS,
    DELETED,
    EDGE_KEYS,
    NODE_KEYS,
    NONE_OP,
    OP_KEYS,
    OWNER_KEYS,
    TOP_KEYS,
)

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
) -> ImportedRun:
    """Validate a smartcomment export (a path or the parsed dict) and map it to memtrace records.

    The run id is stable: derived from graph_id, the MemTraceBench file name (or `id_hint`) and
    the system, so importing the same graph again replaces it instead of duplicating it.
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
    if annotations:
        imported.cases, imported.annotations = annotation_cases(run_id, annotations, path)
    else:
        by_id = {node_id: g.nodes[i] for node_id, i in g.node_index.items()}
        imported.cases = judged_cases(run_id, by_id, g.full_names, g.operations, g.edges_by_op)

    top_time = _lenient_time(raw.get("created_at"))
    known_times = [t for t in (*g.node_times, *g.op_times, *g.edge_times) if t is not None]
    fallback = top_time if top_time is not None else min(known_times, default=0.0)
    inputs_of = op_inputs(g)
    seqs, times = assign_seqs(g, inputs_of, fallback)
    n_nodes = len(g.nodes)

    # -- records ----------------------------------------------------------------------------
    blobs: dict[str, tuple[str, str, bytes]] = {}
    for i, node in enumerate(g.nodes):
        node_id = g.node_ids[i]
        blob = encode_value(_node_value(node))
        blobs.setdefault(blob[0], blob)
        category = node.get("category") or "variable"
        imported.variables.append(
            VariableVersion(
                run_id=run_id,
                id=node_id,
                name=g.full_names[node_id],
                version=node.get("version") or 1,
                seq=seqs[i],
                category=category,
                blob=blob[0],
                deleted=category == MEMORY_ENTRY and node["value"] == DELETED,
                created_at=times[i],
                metadata=_record_metadata(node, NODE_KEYS, raw, class_name=node.get("class_name"), index=i),
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
        imported.edges.append(
            Edge(run_id, edge["op_id"], edge["target_full_node_id"], "out", edge["source_full_node_id"], meta)
        )
    for op_id, inputs in inputs_of.items():
        imported.edges.extend(Edge(run_id, op_id, var_id, "in") for var_id in inputs)
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
        name=name or _default_name(graph_meta, mtb_file, source, graph_id),
        system=system,
        dataset=mtb_source if isinstance(mtb_source, str) else None,
        conversation=Path(mtb_file).stem if mtb_file else None,
        status=RUN_COMPLETE,
        metadata=compact(
            {"smartcomment": smartcomment, "source": compact({"format": "smartcomment", "file": source_name})}
        ),
        created_at=fallback,
        finished_at=max(known_times, default=None),
    )
    return imported


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
    if mtb_file:
        return mtb_file.removesuffix(".json")
    native = meta.get("memtrace")
    if isinstance(native, dict) and isinstance(native.get("name"), str):
        return native["name"]
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
    exists = conn.execute("SELECT 1 FROM runs WHERE id=?", (run.id,)).fetchone() is not None
    if exists and not replace:
        raise WorkspaceError(f"{store.path}: run {run.id} ({run.name}) already exists; import with replace")
    if exists:
        store.delete_run_in(conn, run.id)
    store.insert_run_in(conn, run)
    store.insert_rows_in(
        conn,
        ops=[op_row(o) for o in imported.ops],
        variables=[var_row(v) for v in imported.variables],
        edges=[edge_row(e) for e in imported.edges],
        blobs=imported.blobs,
        cases=[case_row(c) for c in imported.cases],
    )
    if imported.annotations:
        store.insert_annotations_in(conn, imported.annotations)
    rebuild_checkpoints(conn, run.id)
    return run


def import_smartcomment(
    store: Store,
    path: str | Path | Mapping[str, Any],
    *,
    name: str | None = None,
    system: str | None = None,
    replace: bool = True,
    id_hint: str | None = None,
) -> Run:
    """Import one smartcomment graph file as a run: validated first, then written atomically."""
    imported = read_smartcomment(path, name=name, system=system, id_hint=id_hint)
    return write_imported(store, imported, replace=replace)


def _node_value(node: dict[str, Any]) -> Any:
    """A node's value; JSON text that memtrace itself exported from a structure becomes it again."""
    value = node["value"]
    if memtrace_meta(node).get("json") is True:
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
