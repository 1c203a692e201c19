"""The memory evolution graph: model, SQLite store, queries and import/export.

This package imports nothing else of memtrace but the ground (errors.py, vocabulary.py); every other
layer builds on it.
"""

from ..errors import AmbiguousRunError, FormatError, MemtraceError, NotFoundError, WorkspaceError
from .model import (
    JUDGE_OP_NAME,
    MEMORY_ENTRY,
    QUERY_VAR,
    Annotation,
    Case,
    Edge,
    LifecycleEntry,
    LineageNode,
    MemoryDiff,
    Operation,
    Run,
    VariableVersion,
)
from .queries import Graph, GraphQueries, OpSubgraph
from .store import Store
from .view import GraphView
from .workspace import Workspace, open_workspace

__all__ = [
    "JUDGE_OP_NAME",
    "MEMORY_ENTRY",
    "QUERY_VAR",
    "AmbiguousRunError",
    "Annotation",
    "Case",
    "Edge",
    "FormatError",
    "Graph",
    "GraphQueries",
    "GraphView",
    "LifecycleEntry",
    "LineageNode",
    "MemoryDiff",
    "MemtraceError",
    "NotFoundError",
    "OpSubgraph",
    "Operation",
    "Run",
    "Store",
    "VariableVersion",
    "Workspace",
    "WorkspaceError",
    "open_workspace",
]
