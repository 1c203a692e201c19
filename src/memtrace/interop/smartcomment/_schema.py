"""Names and record shapes of smartcomment 0.1.2's graph JSON, shared by its importer and exporter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NONE_NODE = "COMMENT:NONE@1"
NONE_NAME = "COMMENT:NONE"
NONE_OP = "__none_op__"
NONE_SESSION = "__none__"
SENTINEL_FILE = "<sentinel>"
NATIVE_FILE = "<memtrace>"
#: The value a deleted memory version is exported as (and recognised by on import).
DELETED = "DELETED"
#: The operation category of search steps, whose links to existing memories are reads.
RETRIEVAL = "retrieval"

TOP_KEYS = ("graph_id", "user_id", "project_id", "storage_path", "strict", "driver_type", "created_at")
OWNER_KEYS = ("graph_id", "user_id", "project_id")
COMMON_KEYS = {
    "created_at",
    "filename",
    "lineno",
    "graph_id",
    "user_id",
    "project_id",
    "session_id",
    "metadata",
}
COMPUTED_KEYS = {"trigger_point", "full_name", "node_id", "full_node_id"}
NODE_KEYS = COMMON_KEYS | {"name", "version", "value", "comment", "category", "class_name"}
OP_KEYS = COMMON_KEYS | {"op_id", "op_name", "comment", "category"}
EDGE_KEYS = COMMON_KEYS | {
    "edge_id",
    "op_id",
    "category",
    "source_full_node_id",
    "target_full_node_id",
    "comment",
}


def full_name_of(class_name: str | None, name: str) -> str:
    """`class_name:name`, or `name` when class_name is None (smartcomment tests `is not None`)."""
    return name if class_name is None else f"{class_name}:{name}"


def traceable(created_at: str, filename: str, lineno: int, **fields: Any) -> dict[str, Any]:
    """A record in smartcomment's key order: time and call site first, `trigger_point` after."""
    return {"created_at": created_at, "filename": filename, "lineno": lineno, **fields}


def with_trigger(record: dict[str, Any]) -> dict[str, Any]:
    """Add the computed `trigger_point` (`filename:lineno`) smartcomment exports on every record."""
    record["trigger_point"] = f"{record.get('filename')}:{record.get('lineno')}"
    return record


def session_record(
    session_id: str,
    name: str | None,
    created_at: str,
    owners: Mapping[str, Any],
    *,
    category: str = "session",
    filename: str = NATIVE_FILE,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A session as smartcomment writes it."""
    return with_trigger(
        traceable(
            created_at,
            filename,
            0,
            session_id=session_id,
            session_name=name,
            graph_id=owners.get("graph_id"),
            user_id=owners.get("user_id"),
            project_id=owners.get("project_id"),
            comment=None,
            category=category,
            metadata=metadata or {},
        )
    )


def node_record(
    *,
    name: str,
    version: int,
    value: str,
    category: str,
    class_name: str | None,
    session_id: str,
    created_at: str,
    owners: Mapping[str, Any],
    filename: str = NATIVE_FILE,
    lineno: int = 0,
    comment: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A node (variable version) with the computed id fields smartcomment exports."""
    full_name = full_name_of(class_name, name)
    record = traceable(
        created_at,
        filename,
        lineno,
        name=name,
        version=version,
        value=value,
        comment=comment,
        category=category,
        graph_id=owners.get("graph_id"),
        user_id=owners.get("user_id"),
        class_name=class_name,
        project_id=owners.get("project_id"),
        session_id=session_id,
        metadata=metadata or {},
    )
    with_trigger(record)
    record.update(full_name=full_name, node_id=f"{name}@{version}", full_node_id=f"{full_name}@{version}")
    return record


def op_record(
    *,
    op_id: str,
    op_name: str | None,
    category: str,
    session_id: str,
    created_at: str,
    owners: Mapping[str, Any],
    filename: str = NATIVE_FILE,
    lineno: int = 0,
    comment: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An operation record."""
    return with_trigger(
        traceable(
            created_at,
            filename,
            lineno,
            op_id=op_id,
            op_name=op_name,
            comment=comment,
            category=category,
            graph_id=owners.get("graph_id"),
            user_id=owners.get("user_id"),
            project_id=owners.get("project_id"),
            session_id=session_id,
            metadata=metadata or {},
        )
    )


def edge_record(
    *,
    edge_id: str,
    op_id: str,
    source: str,
    target: str,
    category: str,
    session_id: str,
    created_at: str,
    owners: Mapping[str, Any],
    filename: str = NATIVE_FILE,
    lineno: int = 0,
    comment: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A variable -> variable edge owned by an operation."""
    return with_trigger(
        traceable(
            created_at,
            filename,
            lineno,
            edge_id=edge_id,
            graph_id=owners.get("graph_id"),
            user_id=owners.get("user_id"),
            project_id=owners.get("project_id"),
            session_id=session_id,
            op_id=op_id,
            category=category,
            source_full_node_id=source,
            target_full_node_id=target,
            comment=comment,
            metadata=metadata or {},
        )
    )
