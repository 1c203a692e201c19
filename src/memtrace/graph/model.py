"""Plain records of the memory evolution graph: runs, operations, variable versions, edges, cases.

These are the nouns every layer shares; they carry no behaviour beyond small conveniences so that
the store, the recorder, the importers and the analyses can exchange them freely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..vocabulary import CaseVerdict, ErrorType

Role = Literal["in", "out"]

#: Operation categories named in DESIGN.md; other strings are allowed (imported graphs bring their own).
OP_CATEGORIES = (
    "construction",
    "extraction",
    "update",
    "deletion",
    "retrieval",
    "response",
    "evaluation",
    "llm",
)

#: The variable category of a memory unit: its versions are its lifecycle.
MEMORY_ENTRY = "memory_entry"

#: Case metadata key naming the query variable the case asked (imported graphs): its answer and
#: retrieval steps are the operations that read it.
QUERY_VAR = "query_var"
#: The name MemBase's judge steps carry (category `evaluation`, like its question-answering).
JUDGE_OP_NAME = "llm-judge"

#: Run status values.
RUN_RUNNING = "running"
RUN_COMPLETE = "complete"
RUN_INCOMPLETE = "incomplete"


@dataclass(slots=True)
class Run:
    """One execution of one memory system over one conversation: one graph."""

    id: str
    name: str
    system: str | None = None
    dataset: str | None = None
    conversation: str | None = None
    parent_run: str | None = None
    status: str = RUN_RUNNING
    error: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    finished_at: float | None = None


@dataclass(slots=True)
class Operation:
    """One step of a pipeline; `parent_op` nests it inside another like a span."""

    run_id: str
    id: str
    seq: int
    name: str
    category: str
    parent_op: str | None = None
    started_at: float = 0.0
    ended_at: float | None = None
    status: str = "ok"
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class VariableVersion:
    """One version of a named variable (`name@version`); `blob` is the content hash of its value."""

    run_id: str
    id: str
    name: str
    version: int
    seq: int
    category: str
    blob: str | None
    deleted: bool = False
    created_at: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def is_memory(self) -> bool:
        return self.category == MEMORY_ENTRY


@dataclass(slots=True)  # not frozen: frozen costs several times more to build, one per recorded edge
class Edge:
    """A bipartite edge: variable -> operation (role "in") or operation -> variable (role "out").

    `source` keeps the variable -> variable link of formats such as smartcomment (the var that fed
    this output inside the operation) so that an imported graph exports back edge for edge.
    """

    run_id: str
    op_id: str
    var_id: str
    role: Role
    source: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass(slots=True)
class Case:
    """One question of a run with its gold answers, prediction, verdict and gold evidence ids."""

    run_id: str
    id: str
    question: str
    gold: list[str] = field(default_factory=list)
    prediction: str | None = None
    prediction_var: str | None = None
    verdict: CaseVerdict | None = None  # None: not judged
    score: float | None = None
    evidence: list[str] = field(default_factory=list)
    category: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.verdict == CaseVerdict.WRONG


@dataclass(slots=True)
class Annotation:
    """A label on a failed case: the decisive operation and error type, by a person or a benchmark."""

    run_id: str
    case_id: str
    error_type: ErrorType | None
    op_id: str | None
    note: str | None = None
    author: str | None = None
    created_at: float = 0.0
    #: The store's row id (None until stored): a label is removed by it.
    id: int | None = None


@dataclass(slots=True)
class LifecycleEntry:
    """One version of a memory unit with the operation that produced it."""

    version: VariableVersion
    op: Operation | None
    value: Any
    change: Literal["create", "update", "delete"]


@dataclass(slots=True)
class MemoryDiff:
    """What happened to memory units between two seqs."""

    created: dict[str, Any] = field(default_factory=dict)
    changed: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    deleted: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.created or self.changed or self.deleted)


@dataclass(slots=True)
class LineageNode:
    """A node reached by a lineage walk, with its distance from the start."""

    kind: Literal["op", "var"]
    id: str
    depth: int
    seq: int


def var_id(name: str, version: int) -> str:
    """The id of a variable version, as smartcomment spells it (`name@version`)."""
    return f"{name}@{version}"
