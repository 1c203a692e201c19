"""Export a run as smartcomment graph JSON that `smartcomment.runtime.ExecNetwork.import_graph` loads.

An imported run (it carries `metadata["smartcomment"]`) is reproduced record for record: same
node, edge, operation and session ids, same values and time stamps. A run recorded by memtrace
has no variable->variable edges, so each operation gets smartcomment's own shape: the cross
product of its inputs and outputs, with the `COMMENT:NONE@1` placeholder standing in for a
missing side. Native seqs travel in `metadata.memtrace.seq` so a re-import keeps the order; the
run's name, system and cases travel in the graph's `metadata.memtrace`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...graph.model import Case, Edge, Operation, Run, VariableVersion
from ...graph.rows import case_from_row, edge_from_row, op_from_row, var_from_row
from ...graph.store import CASE_COLUMNS, EDGE_COLUMNS, OP_COLUMNS, VAR_COLUMNS, Store
from ...graph.values import decode_value
from .._common import compact, format_sc_time, open_text, read_snapshot, stable_id
from ..annotations import annotation_records
from ._cases import case_record
from ._deletions import FILE_CATEGORY, SYNTHETIC
from ._schema import (
    DELETED,
    NATIVE_FILE,
    NONE_NAME,
    NONE_NODE,
    NONE_OP,
    NONE_SESSION,
    OWNER_KEYS,
    SENTINEL_FILE,
    TOP_KEYS,
    edge_record,
    node_record,
    op_record,
    session_record,
    with_trigger,
)
from ._values import VERBATIM, VERBATIM_TEXT, respell


class _Sessions:
    """The session list being written; records that name a missing session get one added."""

    def __init__(self, records: list[dict[str, Any]], owners: Mapping[str, Any], created_at: str) -> None:
        self.records = [with_trigger(dict(r)) for r in records]
        self.ids = {r["session_id"] for r in self.records}
        self.owners = owners
        self.created_at = created_at

    def ensure(self, session_id: str | None, name: str | None = None) -> str:
        if session_id is None or session_id == NONE_SESSION:
            session_id, name = NONE_SESSION, "NONE sentinel"
        if session_id not in self.ids:
            sentinel = session_id == NONE_SESSION
            self.records.append(
                session_record(
                    session_id,
                    name,
                    self.created_at,
                    self.owners,
                    category="sentinel" if sentinel else "session",
                    filename=SENTINEL_FILE if sentinel else NATIVE_FILE,
                )
            )
            self.ids.add(session_id)
        return session_id


def _sentinel_node(sessions: _Sessions) -> dict[str, Any]:
    return node_record(
        name=NONE_NAME,
        version=1,
        value="NONE",
        category="sentinel",
        class_name=None,
        session_id=sessions.ensure(NONE_SESSION),
        created_at=sessions.created_at,
        owners=sessions.owners,
        filename=SENTINEL_FILE,
    )


def _value_text(version: VariableVersion, values: Mapping[str, Any]) -> str:
    """A node value is always a string: text as is, structures as JSON, deletions as DELETED."""
    if version.deleted:
        return DELETED
    if version.blob is None:
        return "None"
    value = values.get(version.blob)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _load(
    conn: sqlite3.Connection, run_id: str
) -> tuple[list[Operation], list[VariableVersion], list[Edge], dict[str, Any]]:
    """Operations and versions in seq order, edges in insertion order, values by blob hash."""
    ops = [
        op_from_row(r)
        for r in conn.execute(f"SELECT {OP_COLUMNS} FROM ops WHERE run=? ORDER BY seq", (run_id,))
    ]
    variables = [
        var_from_row(r)
        for r in conn.execute(f"SELECT {VAR_COLUMNS} FROM vars WHERE run=? ORDER BY seq", (run_id,))
    ]
    edges = [
        edge_from_row(r)
        for r in conn.execute(f"SELECT {EDGE_COLUMNS} FROM edges WHERE run=? ORDER BY rowid", (run_id,))
    ]
    values = {
        h: decode_value(enc, data)
        for h, enc, data in conn.execute(
            "SELECT hash, encoding, data FROM blobs WHERE hash IN (SELECT blob FROM vars WHERE run=?)",
            (run_id,),
        )
    }
    return ops, variables, edges, values


def export_smartcomment(store: Store, run_id: str, *, annotations: bool = False) -> dict[str, Any]:
    """The run as one smartcomment graph dict (imported runs reproduced, native runs synthesised).

    `annotations=True` puts the workspace's human labels at `data.annotations` (MemTraceBench's
    annotation format) in place of any imported ones.
    """
    graph = _export_graph(store, run_id)
    if annotations:
        graph["data"].pop("annotations", None)
        graph["data"]["annotations"] = annotation_records(store, store.run(run_id).id)
    return graph


def _export_graph(store: Store, run_id: str) -> dict[str, Any]:
    run = store.run(run_id)
    with read_snapshot(store) as conn:
        ops, variables, edges, values = _load(conn, run.id)
        cases = [
            case_from_row(r)
            for r in conn.execute(f"SELECT {CASE_COLUMNS} FROM cases WHERE run=? ORDER BY rowid", (run.id,))
        ]
        if isinstance(run.metadata.get("smartcomment"), dict):
            return _export_imported(run, ops, variables, edges, values, cases)
        return _export_native(run, ops, variables, edges, values, cases)


def write_smartcomment(
    store: Store, run_id: str, path: str | Path, *, annotations: bool = False
) -> dict[str, int]:
    """Write the export to a JSON file (gzip when the name ends in .gz); returns the record counts."""
    graph = export_smartcomment(store, run_id, annotations=annotations)
    try:
        with open_text(path, "w") as handle:
            json.dump(graph, handle, ensure_ascii=False)
    except UnicodeEncodeError:  # a lone surrogate in some value: fall back to \u escapes throughout
        with open_text(path, "w") as handle:
            json.dump(graph, handle)
    return {key: len(items) for key, items in graph["data"].items()}


def _export_imported(
    run: Run,
    ops: list[Operation],
    variables: list[VariableVersion],
    edges: list[Edge],
    values: Mapping[str, Any],
    cases: list[Case],
) -> dict[str, Any]:
    sc = run.metadata["smartcomment"]
    top: dict[str, Any] = {k: sc.get(k) for k in TOP_KEYS}
    top["driver_type"] = top["driver_type"] or "in_memory"
    top["strict"] = bool(top["strict"])
    top["created_at"] = top["created_at"] or format_sc_time(run.created_at)
    top["metadata"] = sc.get("metadata") or {}
    if run.system and "memtrace" not in top["metadata"]:  # what the file did not say: the system it ran as
        top["metadata"] = {**top["metadata"], "memtrace": {"name": run.name, "system": run.system}}
    top.update(sc.get("extra") or {})
    owners = {k: top.get(k) for k in OWNER_KEYS}
    sessions = _Sessions(sc.get("sessions") or [], owners, top["created_at"])

    nodes = []
    for version in sorted(variables, key=lambda v: (v.metadata.get("index", float("inf")), v.seq)):
        meta = version.metadata
        if meta.get(SYNTHETIC):  # a deletion the importer derived from a DELETED link: not a node
            continue
        class_name = meta.get("class_name")
        prefix = f"{class_name}:"
        name = version.name.removeprefix(prefix) if class_name is not None else version.name
        record = node_record(
            name=name,
            version=version.version,
            value=_imported_value(version, values),
            category=meta.get(FILE_CATEGORY, version.category),
            class_name=class_name,
            session_id=sessions.ensure(meta.get("session_id")),
            created_at=meta.get("created_at") or format_sc_time(version.created_at),
            owners=owners,
            filename=meta.get("filename", NATIVE_FILE),
            lineno=meta.get("lineno", 0),
            comment=meta.get("comment"),
            metadata=meta.get("metadata"),
        )
        record.update(meta.get("extra") or {})
        nodes.append(record)

    operations = []
    for op in sorted(ops, key=lambda o: (o.metadata.get("index", float("inf")), o.seq)):
        meta = op.metadata
        if meta.get("invented"):  # the file's edges need this op, smartcomment would have made it
            operations.append(_sentinel_op(sessions, format_sc_time(op.started_at)))
            continue
        record = op_record(
            op_id=op.id,
            op_name=op.name,
            category=op.category,
            session_id=sessions.ensure(meta.get("session_id")),
            created_at=meta.get("created_at") or format_sc_time(op.started_at),
            owners=owners,
            filename=meta.get("filename", NATIVE_FILE),
            lineno=meta.get("lineno", 0),
            comment=meta.get("comment"),
            metadata=meta.get("metadata"),
        )
        record.update(meta.get("extra") or {})
        operations.append(record)

    sc_edges = []
    for edge in edges:
        meta = edge.metadata or {}
        if edge.source is None or "edge_id" not in meta:
            continue  # derived on import (in-degree-0 inputs, deletions): not smartcomment edges
        record = edge_record(
            edge_id=meta["edge_id"],
            op_id=edge.op_id,
            source=edge.source,
            target=edge.var_id,
            category=meta.get("category", "operation"),
            session_id=sessions.ensure(meta.get("session_id")),
            created_at=meta.get("created_at") or top["created_at"],
            owners=owners,
            filename=meta.get("filename", NATIVE_FILE),
            lineno=meta.get("lineno", 0),
            comment=meta.get("comment"),
            metadata=meta.get("metadata"),
        )
        record.update(meta.get("extra") or {})
        sc_edges.append(record)

    data: dict[str, Any] = {
        "nodes": nodes,
        "edges": sc_edges,
        "operations": operations,
        "sessions": sessions.records,
    }
    annotations = [c.metadata["annotation"] for c in cases if isinstance(c.metadata.get("annotation"), dict)]
    if annotations:
        data["annotations"] = annotations
    return {**top, "data": data}


def _imported_value(version: VariableVersion, values: Mapping[str, Any]) -> str:
    """An imported version keeps its own text, even when it is marked deleted: decoded values are
    spelt back as the file spelt them."""
    value = values.get(version.blob) if version.blob else None
    spelling = version.metadata.get("spelling")
    if spelling == VERBATIM:
        return version.metadata[VERBATIM_TEXT]
    if isinstance(spelling, str) and version.blob:
        return respell(value, spelling)
    return value if isinstance(value, str) else _value_text(version, values)


def _sentinel_op(sessions: _Sessions, created_at: str) -> dict[str, Any]:
    return op_record(
        op_id=NONE_OP,
        op_name="NONE sentinel",
        category="sentinel",
        session_id=sessions.ensure(NONE_SESSION),
        created_at=created_at,
        owners=sessions.owners,
        filename=SENTINEL_FILE,
    )


def _site(meta: Mapping[str, Any]) -> tuple[str, int]:
    filename, lineno = meta.get("filename"), meta.get("lineno")
    ok_line = isinstance(lineno, int) and not isinstance(lineno, bool) and lineno >= 0
    return (filename if isinstance(filename, str) else NATIVE_FILE), (lineno if ok_line else 0)


def _session_name(meta: Mapping[str, Any]) -> str | None:
    name = meta.get("session")
    return name if isinstance(name, str) and name else None


def _export_native(
    run: Run,
    ops: list[Operation],
    variables: list[VariableVersion],
    edges: list[Edge],
    values: Mapping[str, Any],
    cases: list[Case],
) -> dict[str, Any]:
    created = format_sc_time(run.created_at)
    owners = {"graph_id": run.id, "user_id": None, "project_id": None}
    sessions = _Sessions([], owners, created)

    def session_for(name: str | None) -> str:
        label = name or run.name
        return sessions.ensure(stable_id("session-", run.id, label, size=16), label)

    op_session = {op.id: session_for(_session_name(op.metadata)) for op in ops}
    inputs: dict[str, list[str]] = {}
    outputs: dict[str, list[str]] = {}
    producer: dict[str, str] = {}
    for edge in edges:
        side = inputs if edge.role == "in" else outputs
        bucket = side.setdefault(edge.op_id, [])
        if edge.var_id not in bucket:
            bucket.append(edge.var_id)
        if edge.role == "out":
            producer.setdefault(edge.var_id, edge.op_id)

    full_ids: dict[str, str] = {}
    nodes = []
    for version in variables:
        full_ids[version.id] = f"{version.name}@{version.version}"
        meta = dict(version.metadata)
        session = op_session.get(producer.get(version.id, "")) or session_for(_session_name(meta))
        filename, lineno = _site(meta)
        comment = meta.get("comment")
        meta["memtrace"] = {"seq": version.seq}
        if version.blob and not isinstance(values.get(version.blob), str):
            meta["memtrace"]["json"] = True  # the string is JSON text: a re-import restores the structure
        nodes.append(
            node_record(
                name=version.name,
                version=version.version,
                value=_value_text(version, values),
                category=version.category,
                class_name=None,
                session_id=session,
                created_at=format_sc_time(version.created_at),
                owners=owners,
                filename=filename,
                lineno=lineno,
                comment=comment if isinstance(comment, str) else None,
                metadata=meta,
            )
        )

    operations, sc_edges = [], []
    need_none = False
    for op in ops:
        meta = dict(op.metadata)
        filename, lineno = _site(meta)
        comment = meta.get("comment")
        meta["memtrace"] = compact({"seq": op.seq, "parent_op": op.parent_op, "status": op.status})
        operations.append(
            op_record(
                op_id=op.id,
                op_name=op.name,
                category=op.category,
                session_id=op_session[op.id],
                created_at=format_sc_time(op.started_at),
                owners=owners,
                filename=filename,
                lineno=lineno,
                comment=comment if isinstance(comment, str) else None,
                metadata=meta,
            )
        )
        ins = [full_ids[v] for v in inputs.get(op.id, []) if v in full_ids]
        outs = [full_ids[v] for v in outputs.get(op.id, []) if v in full_ids]
        if not ins and not outs:
            continue
        need_none = need_none or not ins or not outs
        when = format_sc_time(op.ended_at if op.ended_at is not None else op.started_at)
        for source in ins or [NONE_NODE]:
            for target in outs or [NONE_NODE]:
                if source == target:
                    continue
                sc_edges.append(
                    edge_record(
                        edge_id=stable_id("edge-", run.id, op.id, source, target),
                        op_id=op.id,
                        source=source,
                        target=target,
                        category=op.category,
                        session_id=op_session[op.id],
                        created_at=when,
                        owners=owners,
                        filename=filename,
                        lineno=lineno,
                    )
                )
    if need_none:
        nodes.append(_sentinel_node(sessions))
    native = compact(
        {
            "run_id": run.id,
            "name": run.name,
            "system": run.system,
            "dataset": run.dataset,
            "conversation": run.conversation,
            "cases": [case_record(c) for c in cases],
        }
    )
    top = {k: None for k in TOP_KEYS}
    top.update(
        graph_id=run.id,
        strict=False,
        driver_type="in_memory",
        created_at=created,
        metadata={"memtrace": native},
    )
    data = {"nodes": nodes, "edges": sc_edges, "operations": operations, "sessions": sessions.records}
    return {**top, "data": data}
