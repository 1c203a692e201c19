"""Deletions in MemBase's graphs: an edge from a memory entry to one shared node valued DELETED.

memtrace models a deletion as a new, deleted version of the unit written by the deleting operation;
that is what `memory_state_at`, `inspect` and the attributors read. The importer therefore adds such
a version for every entry linked to the marker (kept out of the export, which stays the file), and
files the marker under its own category so it never shows up as a memory unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...graph.model import MEMORY_ENTRY, Edge, Operation, VariableVersion
from ._parse import ParsedGraph, memtrace_meta
from ._schema import DELETED

#: Metadata key of the versions the importer adds (the exporter leaves them out).
SYNTHETIC = "synthetic"
#: The category a DELETED marker is filed under; the file's own category is kept in FILE_CATEGORY.
MARKER_CATEGORY = "deletion_marker"
FILE_CATEGORY = "file_category"


def deletion_nodes(g: ParsedGraph, values: Sequence[Any]) -> tuple[set[str], set[str]]:
    """Nodes valued DELETED once unquoted, in a foreign graph: (shared markers, deleted versions).

    A DELETED node whose name also has live versions is that unit's deleted version (a mutation
    to DELETED); one without is a marker that entries are linked to.
    """
    deleted = {
        g.node_ids[i] for i, value in enumerate(values) if value == DELETED and not memtrace_meta(g.nodes[i])
    }
    live_names = {g.full_names[node_id] for node_id in g.node_ids if node_id not in deleted}
    versions = {node_id for node_id in deleted if g.full_names[node_id] in live_names}
    return deleted - versions, versions


def marker_deletions(g: ParsedGraph, markers: set[str]) -> list[tuple[str, str]]:
    """(op id, deleted entry id) for each memory entry an operation linked to a marker of another name."""
    found: dict[tuple[str, str], None] = {}
    for op_id, pairs in g.edges_by_op.items():
        for source, target in pairs:
            if target not in markers or source in markers:
                continue
            node = g.nodes[g.node_index[source]]
            if node.get("category") == MEMORY_ENTRY and g.full_names[source] != g.full_names[target]:
                found[(op_id, source)] = None
    return list(found)


def deleted_versions(
    run_id: str,
    deletions: Sequence[tuple[str, str]],
    variables: Sequence[VariableVersion],
    ops: Mapping[str, Operation],
) -> tuple[list[VariableVersion], list[Edge]]:
    """One deleted version per deletion (the unit's next version number) and the edge that wrote it.

    Seqs are left at the deleting op's seq; `interleave` gives them their place in the order.
    """
    by_id = {v.id: v for v in variables}
    top: dict[str, int] = {}
    for v in variables:
        top[v.name] = max(top.get(v.name, 0), v.version)
    added: list[VariableVersion] = []
    edges: list[Edge] = []
    for op_id, entry_id in sorted(deletions, key=lambda d: ops[d[0]].seq):
        entry = by_id[entry_id]
        top[entry.name] += 1
        op = ops[op_id]
        version = VariableVersion(
            run_id=run_id,
            id=f"{entry.name}@{top[entry.name]}",
            name=entry.name,
            version=top[entry.name],
            seq=op.seq,
            category=MEMORY_ENTRY,
            blob=None,
            deleted=True,
            created_at=op.ended_at or op.started_at,
            metadata={SYNTHETIC: "deleted by a link to the DELETED marker", "deleted_from": entry_id},
        )
        added.append(version)
        edges.append(Edge(run_id, op_id, version.id, "out"))
    return added, edges


def interleave(
    ops: list[Operation], variables: list[VariableVersion], added: list[VariableVersion]
) -> list[VariableVersion]:
    """Renumber seqs so each added version comes right after the operation that deleted it."""
    keyed: list[tuple[tuple[int, int, int], Operation | VariableVersion]] = [
        ((item.seq, 0, 0), item) for item in (*ops, *variables)
    ]
    keyed += [((v.seq, 1, i), v) for i, v in enumerate(added)]
    keyed.sort(key=lambda pair: pair[0])
    for seq, (_, item) in enumerate(keyed, start=1):
        item.seq = seq
    return [*variables, *added]
