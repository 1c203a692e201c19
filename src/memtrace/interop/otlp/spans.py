"""How one recorded operation looks as an OpenTelemetry GenAI span: name, attributes, links, ids.

Pure mapping over the graph model (no OpenTelemetry import), shared by the after-the-fact exporter
(export.py, reading a stored run) and the live sink (sink.py, fed as the run records), so
that a run looks the same either way. It follows the GenAI semantic conventions (status
Development): memory spans carry `gen_ai.operation.name` = create_memory | update_memory |
upsert_memory | delete_memory | search_memory with `gen_ai.memory.store.id` and the record ids;
model calls are `chat` or `embeddings`. Message and memory content go out only when asked.
Span kinds follow the same conventions: CLIENT for a call to another process, INTERNAL otherwise
(`span_kind`, decided from what an operation says when it starts, so live and exported spans agree).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...graph.model import MEMORY_ENTRY, Case, Operation, Run, VariableVersion
from ...vocabulary import CaseVerdict
from ._content import messages_json, records_json, scores_of, text_of

# -- attribute keys (GenAI semantic conventions) -------------------------------------------------
OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
WORKFLOW_NAME = "gen_ai.workflow.name"
STORE_ID = "gen_ai.memory.store.id"
RECORD_ID = "gen_ai.memory.record.id"
RECORD_COUNT = "gen_ai.memory.record.count"
QUERY_TEXT = "gen_ai.memory.query.text"
RECORDS = "gen_ai.memory.records"
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
SCORE_VALUE = "gen_ai.evaluation.score.value"
SCORE_LABEL = "gen_ai.evaluation.score.label"
EXPLANATION = "gen_ai.evaluation.explanation"
ERROR_TYPE = "error.type"

# -- memtrace's own attributes (what the conventions have no key for; import reads them back) ----
OP_ID = "memtrace.op.id"
OP_NAME = "memtrace.op.name"
OP_CATEGORY = "memtrace.op.category"
OP_SEQ = "memtrace.op.seq"
RECORD_IDS = "memtrace.memory.record.ids"
RUN_ID = "memtrace.run.id"
RUN_NAME = "memtrace.run.name"
CASE_ID = "memtrace.case.id"
LINK_KIND = "memtrace.link.kind"
MEMORY_VERSION = "memtrace.memory.version"
VAR_ID = "memtrace.var.id"
#: `memtrace.link.kind` of an answer span's links to the spans that wrote what it read.
CONTEXT_LINK = "context-written-by"

#: The memory values of `gen_ai.operation.name`.
CREATE, UPDATE, UPSERT, DELETE, SEARCH = (
    "create_memory",
    "update_memory",
    "upsert_memory",
    "delete_memory",
    "search_memory",
)
MEMORY_OPERATIONS = (CREATE, UPDATE, UPSERT, DELETE, SEARCH)
CHAT, EMBEDDINGS, WORKFLOW = "chat", "embeddings", "invoke_workflow"

#: Span kinds (SpanSpec.kind) and the operation metadata that decides them.
CLIENT, INTERNAL = "client", "internal"
#: Operation metadata: True when the operation calls another process (a model endpoint, a memory
#: store's server), False when what it calls runs in this process. Set it when the operation starts.
REMOTE = "remote"
#: Categories of model calls: CLIENT spans unless marked `remote: False`.
MODEL_CATEGORIES = frozenset({"llm", "embedding"})
#: Operation metadata an import keeps for a span of another kind, so an export gives it back.
SPAN_KIND = "span_kind"
OTHER_KINDS = frozenset({"server", "producer", "consumer"})


@dataclass(slots=True)
class LinkSpec:
    """A span link: to the span of operation `op_id`, for one memory record it wrote."""

    op_id: str
    attributes: dict[str, Any]


@dataclass(slots=True)
class EventSpec:
    """A span event such as `gen_ai.evaluation.result`, stamped at `time` (seconds)."""

    name: str
    time: float
    attributes: dict[str, Any]


@dataclass(slots=True)
class SpanSpec:
    """Everything needed to emit one span; `op_id` None is the run's root span."""

    op_id: str | None
    parent_op: str | None
    name: str
    start: float
    end: float
    attributes: dict[str, Any]
    kind: str = INTERNAL  # or CLIENT (or an imported span's server, producer, consumer): span_kind
    error: str | None = None
    links: list[LinkSpec] = field(default_factory=list)
    events: list[EventSpec] = field(default_factory=list)


@dataclass(slots=True)
class EvaluationResult:
    """A `gen_ai.evaluation.result` event for a case's answer span (an attribution or a verdict)."""

    case_id: str
    name: str
    score_value: float | None
    score_label: str | None
    explanation: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def trace_id_of(run_id: str) -> int:
    """The 128-bit trace id of a run: the same on every export, so receivers replace, not duplicate."""
    return _nonzero(run_id, size=16)


def span_id_of(run_id: str, op_id: str | None) -> int:
    """The 64-bit span id of an operation (the run's root span when `op_id` is None)."""
    return _nonzero(run_id, op_id or "", size=8)


def _nonzero(*parts: str, size: int) -> int:
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"), digest_size=size)
    return int.from_bytes(digest.digest(), "big") or 1


def span_kind(category: str, metadata: Mapping[str, Any]) -> str:
    """CLIENT for an operation that calls another process, INTERNAL otherwise (GenAI conventions).

    Model calls (chat, embeddings) are CLIENT unless marked `remote: False` (a model in this process);
    any other operation, memory operations included, is CLIENT only when marked `remote: True` (a
    memory store behind a server): memtrace's own memory systems keep their memory in the process.
    """
    remote = metadata.get(REMOTE)
    if isinstance(remote, bool):
        return CLIENT if remote else INTERNAL
    imported = metadata.get(SPAN_KIND)
    if imported in OTHER_KINDS:  # a span imported as server, producer or consumer keeps its kind
        return str(imported)
    return CLIENT if category in MODEL_CATEGORIES else INTERNAL


def store_id_of(run: Run) -> str:
    """The memory store a run's units live in: one per run."""
    return f"memtrace:{run.id}"


def memory_change(version: VariableVersion, previous_deleted: bool | None) -> str:
    """create_memory, update_memory or delete_memory for one written version of a memory unit.

    `previous_deleted` is whether the unit's version before this one was a tombstone (None: no
    version before it), so a revival after a deletion counts as a creation.
    """
    if version.deleted:
        return DELETE
    if previous_deleted is None or previous_deleted:
        return CREATE
    return UPDATE


def memory_operation(changes: Sequence[str]) -> str | None:
    """The operation name for an operation that wrote these record changes (None: wrote none)."""
    kinds = set(changes)
    if not kinds:
        return None
    if len(kinds) == 1:
        return next(iter(kinds))
    if kinds == {CREATE, UPDATE}:
        return UPSERT
    return UPDATE  # a mix with deletions: the records' own changes go in RECORDS when content is on


def op_span(
    op: Operation,
    run: Run,
    *,
    inputs: Sequence[VariableVersion],
    outputs: Sequence[VariableVersion],
    changes: Mapping[str, str],
    values: Mapping[str, Any],
    producers: Mapping[str, str],
    content: bool,
) -> SpanSpec:
    """The span of one operation.

    `changes` gives, per memory version id the operation wrote, its change (memory_change);
    `values` the decoded values of its inputs and outputs (read only when `content` is on);
    `producers` the operation that wrote each memory version it read (for links).
    """
    attributes: dict[str, Any] = {
        OP_ID: op.id,
        OP_NAME: op.name,
        OP_CATEGORY: op.category,
        OP_SEQ: op.seq,
    }
    written = [v for v in outputs if v.category == MEMORY_ENTRY and v.id in changes]
    read_memory = [v for v in inputs if v.category == MEMORY_ENTRY]
    operation = memory_operation([changes[v.id] for v in written])
    links: list[LinkSpec] = []
    name = op.name
    if operation is not None:
        _memory_attributes(attributes, run, operation, written, [changes[v.id] for v in written])
        if content:
            attributes[RECORDS] = records_json(written, values, changes)
        name = operation
    elif op.category == "retrieval":
        operation = SEARCH
        _memory_attributes(attributes, run, operation, read_memory, [])
        if content:
            query = next((v for v in inputs if "query" in v.category), None)
            if query is not None:
                attributes[QUERY_TEXT] = text_of(values.get(query.id))
            attributes[RECORDS] = records_json(read_memory, values, {}, scores=scores_of(op))
        links = [
            LinkSpec(
                producers[v.id],
                {RECORD_ID: v.name, MEMORY_VERSION: v.version, LINK_KIND: "retrieved-record-written-by"},
            )
            for v in read_memory
            if v.id in producers
        ]
        name = operation
    elif op.category in MODEL_CATEGORIES:
        operation = EMBEDDINGS if op.category == "embedding" or "embed" in op.name else CHAT
        attributes[OPERATION_NAME] = operation
        _model_attributes(attributes, op)
        if content and operation == CHAT:
            prompt = [v for v in inputs if v.category == "prompt"]
            reply = [v for v in outputs if v.category == "llm_response"]
            if prompt:
                attributes[INPUT_MESSAGES] = messages_json(values.get(prompt[-1].id), "user")
            if reply:
                attributes[OUTPUT_MESSAGES] = messages_json(values.get(reply[-1].id), "assistant")
        model = attributes.get(REQUEST_MODEL)
        name = f"{operation} {model}" if model else operation
    if op.category == "response":  # what the answer read (question, context) and which span wrote it
        links = [
            LinkSpec(producers[v.id], {VAR_ID: v.id, LINK_KIND: CONTEXT_LINK})
            for v in inputs
            if v.id in producers
        ]
    error = op.metadata.get("error") if op.status != "ok" else None
    if error is not None:
        attributes[ERROR_TYPE] = str(error).split(":", 1)[0][:120] or op.status
    return SpanSpec(
        op_id=op.id,
        parent_op=op.parent_op,
        name=name,
        start=op.started_at,
        end=op.ended_at if op.ended_at is not None else op.started_at,
        attributes=attributes,
        kind=span_kind(op.category, op.metadata),
        error=None if error is None else str(error),
        links=links,
    )


def root_span(run: Run, start: float, end: float) -> SpanSpec:
    """The run as one workflow span holding every top-level operation."""
    attributes = {
        OPERATION_NAME: WORKFLOW,
        WORKFLOW_NAME: run.name,
        RUN_ID: run.id,
        RUN_NAME: run.name,
        STORE_ID: store_id_of(run),
    }
    if run.system:
        attributes[PROVIDER_NAME] = run.system
    return SpanSpec(
        None,
        None,
        f"{WORKFLOW} {run.name}",
        start,
        end,
        attributes,
        error=run.error if run.status not in ("complete", "running") else None,
    )


def verdict_result(case: Case, *, content: bool) -> EvaluationResult:
    """The judge's verdict on a case as an evaluation of its answer; the texts only with content."""
    score = case.score if case.score is not None else (1.0 if case.verdict == CaseVerdict.CORRECT else 0.0)
    label = "pass" if case.verdict == CaseVerdict.CORRECT else "fail"
    if content:
        why = f"question: {case.question!r}; gold: {case.gold!r}; predicted: {case.prediction!r}"
    else:
        why = f"judged {case.verdict} (score {score:.2f})"
    return EvaluationResult(case.id, "memtrace.judge", score, label, why)


def evaluation_event(result: EvaluationResult, time: float) -> EventSpec:
    """A `gen_ai.evaluation.result` event carrying one evaluation of a case's answer."""
    attributes: dict[str, Any] = {EVALUATION_NAME: result.name, CASE_ID: result.case_id}
    if result.score_value is not None:
        attributes[SCORE_VALUE] = float(result.score_value)
    if result.score_label is not None:
        attributes[SCORE_LABEL] = result.score_label
    if result.explanation:
        attributes[EXPLANATION] = result.explanation
    attributes.update({k: v for k, v in result.extra.items() if v is not None})
    return EventSpec(EVALUATION_EVENT, time, attributes)


def _memory_attributes(
    attributes: dict[str, Any],
    run: Run,
    operation: str,
    records: Sequence[VariableVersion],
    changes: Sequence[str],
) -> None:
    attributes[OPERATION_NAME] = operation
    attributes[STORE_ID] = store_id_of(run)
    if run.system:
        attributes[PROVIDER_NAME] = run.system
    names = list(dict.fromkeys(v.name for v in records))
    attributes[RECORD_COUNT] = len(names)
    if len(names) == 1:
        attributes[RECORD_ID] = names[0]
    if names:
        attributes[RECORD_IDS] = names


def _model_attributes(attributes: dict[str, Any], op: Operation) -> None:
    meta = op.metadata
    model = meta.get("model")
    if isinstance(model, str) and model:
        attributes[REQUEST_MODEL] = model
    requested = (("temperature", "gen_ai.request.temperature"), ("max_tokens", "gen_ai.request.max_tokens"))
    for key, target in requested:
        value = meta.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            attributes[target] = value
    provider = meta.get("provider") or meta.get("backend")
    if isinstance(provider, str) and provider:  # an unknown provider is left out, never guessed
        attributes[PROVIDER_NAME] = provider
    usage = meta.get("usage") if isinstance(meta.get("usage"), dict) else {}
    for key, target in (("input_tokens", USAGE_INPUT_TOKENS), ("output_tokens", USAGE_OUTPUT_TOKENS)):
        value = usage.get(key, usage.get(key.replace("input", "prompt").replace("output", "completion")))
        if isinstance(value, int) and not isinstance(value, bool):
            attributes[target] = value
