"""Import GenAI memory spans recorded by any OpenTelemetry instrumentation as graphs `attribute` reads.

One run per trace. A trace memtrace exported carries its graph and is rebuilt as recorded
(native.py); any other trace is read by the GenAI conventions. Each span becomes an operation
(nested as the spans nest, ordered by start time); the memory records named by
`gen_ai.memory.record.id` / `gen_ai.memory.records` become memory units whose versions are the
create/update/upsert/delete spans that wrote them; a `search_memory` span
reads the versions of the records it returned (from its records, or its span links) and its query;
a `chat` span reads its input messages and writes its output (one reading user messages outside an
answer is taken as an extraction step: the conversation flows through it toward memory). Spans
carry no data flow, so two edges are inferred, and documented in docs/opentelemetry.md: a memory
write reads what the model calls before it under the same parent wrote, and a model call reads
what the searches before it under the same parent returned. The span holding a
`gen_ai.evaluation.result` event (or the one a cases file's question names) is a case's answer.
Message and record content are needed for attribution to follow information; without them the
graph still shows the lifecycle of every record.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ...errors import FormatError
from ...graph.model import MEMORY_ENTRY, QUERY_VAR, RUN_COMPLETE, Case, Run
from ...graph.rows import dumps_or_none
from ...graph.store import Store
from ...graph.values import encode_value
from ...vocabulary import CaseVerdict
from .._common import stable_id
from . import _attrs as read
from . import spans as keys
from ._wire import WireSpan, read_otlp_file
from .cases import CaseSpec
from .marks import MARK
from .native import NativeTrace, is_memtrace_graph, store_trace

_CATEGORY = {
    keys.CREATE: "update",
    keys.UPDATE: "update",
    keys.UPSERT: "update",
    keys.DELETE: "deletion",
    keys.SEARCH: "retrieval",
    keys.CHAT: "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    keys.EMBEDDINGS: "embedding",
    "retrieval": "retrieval",
}


def import_otlp(
    store: Store,
    path: str | Path,
    *,
    name: str | None = None,
    cases: Sequence[CaseSpec] = (),
) -> list[Run]:
    """Import every trace of an OTLP file (protobuf or OTLP/JSON) as one run each."""
    return import_spans(store, read_otlp_file(path), source=str(path), name=name, cases=cases)


def import_spans(
    store: Store,
    spans: Sequence[WireSpan],
    *,
    source: str,
    name: str | None = None,
    cases: Sequence[CaseSpec] = (),
) -> list[Run]:
    """Write the traces of these spans as runs (a re-import of a trace replaces its run).

    A span id met again in its trace (a file of repeated exports, a retried batch) is one span:
    its last copy is kept, so repeats never multiply operations or cases.
    """
    traces: dict[str, dict[str, WireSpan]] = defaultdict(dict)
    for span in spans:
        traces[span.trace_id][span.span_id] = span
    if not traces:
        raise FormatError(source, "no spans")
    runs = []
    for trace_id, trace_spans in traces.items():
        label = name if name is None or len(traces) == 1 else f"{name}/{trace_id[:8]}"
        found = list(trace_spans.values())
        reader = NativeTrace if is_memtrace_graph(found) else _TraceBuilder  # memtrace's export: as recorded
        builder = reader(trace_id, found, source, label)
        builder.build(cases)
        builder.write(store)
        runs.append(builder.run)
    return runs


class _TraceBuilder:
    """Turns one trace's spans into rows of one run."""

    def __init__(self, trace_id: str, spans: list[WireSpan], source: str, name: str | None) -> None:
        self.spans = read.ordered(spans)
        root = self.spans[0]
        resource = root.resource
        self.run = Run(
            id=stable_id("otel-", trace_id, size=6),
            name=name or str(root.attributes.get(keys.RUN_NAME) or root.name or trace_id),
            system=read.text_or_none(root.attributes.get(keys.PROVIDER_NAME) or resource.get("service.name")),
            dataset="otlp",
            status=RUN_COMPLETE,
            metadata={"source": {"file": source, "format": "otlp", "trace_id": trace_id}},
            created_at=root.start,
            finished_at=max(s.end for s in self.spans),
        )
        self.seq = 0
        self.ops: list[tuple] = []
        self.vars: list[tuple] = []
        self.edges: list[tuple] = []
        self.blobs: dict[str, tuple] = {}
        self.cases: list[Case] = []
        self.latest: dict[str, tuple[str, bool]] = {}  # var name -> (latest version id, deleted)
        self.versions: dict[str, int] = defaultdict(int)
        self.op_of_span: dict[str, str] = {}
        self.written_by_span: dict[str, list[str]] = defaultdict(list)  # span -> output var ids
        self.pending_model_outputs: dict[str | None, list[str]] = defaultdict(list)
        self.pending_retrieved: dict[str | None, list[str]] = defaultdict(list)
        self.query_of_span: dict[str, str] = {}
        self.category_of_span: dict[str, str] = {}
        self.messages: dict[str, str] = {}

    # -- rows ---------------------------------------------------------------------------------

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def _version(self, name: str, value: Any, category: str, *, deleted: bool = False) -> str:
        self.versions[name] += 1
        version = self.versions[name]
        var_id = f"{name}@{version}"
        blob = None
        if not deleted:
            digest, encoding, data = encode_value(value)
            self.blobs.setdefault(digest, (digest, encoding, data))
            blob = digest
        self.vars.append(
            (self.run.id, var_id, name, version, self._next(), category, blob, int(deleted), None, None)
        )
        self.latest[name] = (var_id, deleted)
        return var_id

    def _edge(self, op_id: str, var_id: str, role: str) -> None:
        self.edges.append((self.run.id, op_id, var_id, role, None, None))

    # -- spans --------------------------------------------------------------------------------

    def build(self, cases: Sequence[CaseSpec]) -> None:
        evaluated = {s.span_id for s in self.spans if any(e[0] == keys.EVALUATION_EVENT for e in s.events)}
        asked = {spec.question for spec in cases}
        for span in self.spans:
            self._op(span, is_answer=span.span_id in evaluated or self._asks(span, asked))
        self._cases(cases, evaluated)

    def _op(self, span: WireSpan, *, is_answer: bool) -> None:
        attrs = span.attributes
        operation = read.text_or_none(attrs.get(keys.OPERATION_NAME))
        op_name = str(attrs.get(keys.OP_NAME) or operation or span.name)
        category = str(attrs.get(keys.OP_CATEGORY) or _CATEGORY.get(operation or "", "operation"))
        if is_answer:
            category = "response"
        elif category == "llm" and keys.OP_CATEGORY not in attrs and read.user_messages(attrs):
            category = "extraction"  # a model call reading the conversation outside an answer
        seq = self._next()
        op_id = f"{op_name}#{seq}"
        self.op_of_span[span.span_id] = op_id
        self.category_of_span[span.span_id] = category
        parent = self.op_of_span.get(span.parent_id or "")
        metadata = {k: v for k, v in attrs.items() if not k.startswith("memtrace.")}
        metadata["span_id"] = span.span_id
        if span.kind in (keys.CLIENT, keys.INTERNAL):  # kept, so an export gives the span its kind back
            metadata[keys.REMOTE] = span.kind == keys.CLIENT
        elif span.kind in keys.OTHER_KINDS:  # server, producer, consumer: imported like any other
            metadata[keys.SPAN_KIND] = span.kind
        status = "ok"
        if span.error is not None and MARK not in attrs:  # memtrace's own mark is no failure
            status, metadata["error"] = "error", span.error
        self.ops.append(
            (
                self.run.id,
                op_id,
                seq,
                parent,
                op_name,
                category,
                span.start,
                span.end,
                status,
                dumps_or_none(metadata),
            )
        )
        group = span.parent_id
        if operation in (keys.CREATE, keys.UPDATE, keys.UPSERT, keys.DELETE):
            for var_id in self.pending_model_outputs.pop(group, []):
                self._edge(op_id, var_id, "in")
            self._memory_write(span, op_id, operation)
        elif operation == keys.SEARCH or category == "retrieval":
            self._search(span, op_id)
        elif read.has_messages(attrs) or category in ("llm", "response"):
            self._model_call(span, op_id, is_answer=is_answer)

    def _memory_write(self, span: WireSpan, op_id: str, operation: str) -> None:
        records = read.records(span)
        for record_id, record in records.items():
            previous = self.latest.get(record_id)
            if previous is not None and not previous[1]:
                self._edge(op_id, previous[0], "in")
            change = (record.get("metadata") or {}).get("change") if isinstance(record, dict) else None
            deleted = operation == keys.DELETE or change == keys.DELETE
            if deleted and (previous is None or previous[1]):
                continue  # deleting what was never written: nothing to record
            value = None if deleted else read.record_value(record)
            var_id = self._version(record_id, value, MEMORY_ENTRY, deleted=deleted)
            self._edge(op_id, var_id, "out")

    def _search(self, span: WireSpan, op_id: str) -> None:
        attrs = span.attributes
        query = attrs.get(keys.QUERY_TEXT)
        if isinstance(query, str):
            query_id = self._version("query", query, "query")
            self._edge(op_id, query_id, "in")
            self.query_of_span[span.span_id] = query_id
        records = read.records(span)
        for _trace, _span, link_attrs in span.links:
            record_id = link_attrs.get(keys.RECORD_ID)
            if isinstance(record_id, str):
                records.setdefault(record_id, {"id": record_id})
        returned = []
        for record_id, record in records.items():
            current = self.latest.get(record_id)
            if current is not None and not current[1]:
                self._edge(op_id, current[0], "in")
            returned.append(read.record_value(record))
        retrieved = self._version("retrieved", returned, "retrieved")
        self._edge(op_id, retrieved, "out")
        self.pending_retrieved[span.parent_id].append(retrieved)

    def _model_call(self, span: WireSpan, op_id: str, *, is_answer: bool) -> None:
        attrs = span.attributes
        for var_id in self.pending_retrieved.pop(span.parent_id, []):
            self._edge(op_id, var_id, "in")
        inputs = read.messages(attrs.get(keys.INPUT_MESSAGES))
        if not is_answer:
            for text in (t for role, t in inputs if role == "user"):
                message = self.messages.get(text)
                if message is None:
                    message = self.messages[text] = self._version(
                        f"message-{len(self.messages) + 1}", text, "message"
                    )
                self._edge(op_id, message, "in")
        elif inputs:
            prompt = self._version(f"{op_id}.prompt", [t for _, t in inputs], "prompt")
            self._edge(op_id, prompt, "in")
        outputs = read.messages(attrs.get(keys.OUTPUT_MESSAGES))
        if outputs:
            text = "\n".join(t for _, t in outputs)
            category = "prediction" if is_answer else "llm_response"
            out = self._version("prediction" if is_answer else f"{op_id}.response", text, category)
            self._edge(op_id, out, "out")
            self.written_by_span[span.span_id].append(out)
            if not is_answer:
                self.pending_model_outputs[span.parent_id].append(out)

    def _asks(self, span: WireSpan, questions: set[str]) -> bool:
        if not questions:
            return False
        text = self._asked_text(span)
        return any(q and q in text for q in questions)

    @staticmethod
    def _asked_text(span: WireSpan) -> str:
        """The input messages of a span that may answer a question (a chat, or a span naming no operation)."""
        operation = read.text_or_none(span.attributes.get(keys.OPERATION_NAME))
        if operation not in (keys.CHAT, None):
            return ""
        return " ".join(t for _, t in read.messages(span.attributes.get(keys.INPUT_MESSAGES)))

    # -- cases --------------------------------------------------------------------------------

    def _cases(self, specs: Sequence[CaseSpec], evaluated: set[str]) -> None:
        # a case's question and query come from its siblings before it: indexed once, not scanned per case
        self.query_texts = _Earlier(
            (s, s.attributes[keys.QUERY_TEXT])
            for s in self.spans
            if isinstance(s.attributes.get(keys.QUERY_TEXT), str)
        )
        self.query_vars = _Earlier(
            (s, self.query_of_span[s.span_id]) for s in self.spans if s.span_id in self.query_of_span
        )
        answers = [s for s in self.spans if self.category_of_span[s.span_id] == "response"]
        asked = {s.span_id: self._asked_text(s) for s in answers} if specs else {}
        used: set[str] = set()
        for number, spec in enumerate(specs, start=1):
            question = spec.question
            span = next(
                (s for s in answers if s.span_id not in used and question and question in asked[s.span_id]),
                None,
            )
            if span is None:
                continue
            used.add(span.span_id)
            self._case(span, spec.id or f"q{number}", question, spec.gold, spec.evidence, spec.verdict)
        for span in (s for s in self.spans if s.span_id in evaluated and s.span_id not in used):
            named = [e[2].get(keys.CASE_ID) for e in span.events if e[0] == keys.EVALUATION_EVENT]
            case_id = next((c for c in named if isinstance(c, str)), None) or f"q{len(self.cases) + 1}"
            self._case(span, case_id, self._question_of(span), [], None, None)

    def _question_of(self, span: WireSpan) -> str:
        query = self.query_texts.last(span)
        if query is not None:
            return query
        users = [t for role, t in read.messages(span.attributes.get(keys.INPUT_MESSAGES)) if role == "user"]
        return users[-1] if users else span.name

    def _case(
        self,
        span: WireSpan,
        case_id: str,
        question: str,
        gold: list[str],
        evidence: list[str] | None,
        verdict: CaseVerdict | None,
    ) -> None:
        outputs = self.written_by_span.get(span.span_id, [])
        prediction_var = outputs[-1] if outputs else None
        prediction = "\n".join(t for _, t in read.messages(span.attributes.get(keys.OUTPUT_MESSAGES))) or None
        score, method = None, None
        if verdict is None:
            verdict, score = read.evaluated_verdict(span)
            method = "otel-evaluation" if verdict else None
        if verdict is None and gold and prediction is not None:
            hit = any(g.casefold() in prediction.casefold() for g in gold)
            verdict, score, method = (
                (CaseVerdict.CORRECT if hit else CaseVerdict.WRONG),
                float(hit),
                "gold-contained",
            )
        metadata: dict[str, Any] = {"span_id": span.span_id}
        if method:
            metadata["method"] = method
        query = self.query_vars.last(span)
        if query is not None:
            metadata[QUERY_VAR] = query
        self.cases.append(
            Case(
                self.run.id,
                case_id,
                question,
                gold,
                prediction,
                prediction_var,
                verdict,
                score,
                list(evidence or []),
                None,
                metadata,
            )
        )

    def write(self, store: Store) -> None:
        store_trace(store, self.run, self.ops, self.vars, self.edges, list(self.blobs.values()), self.cases)


class _Earlier:
    """Per parent span, values of child spans in start order: the last one started by a given time."""

    def __init__(self, items: Iterable[tuple[WireSpan, str]]) -> None:
        self.starts: dict[str | None, list[float]] = defaultdict(list)
        self.values: dict[str | None, list[str]] = defaultdict(list)
        for span, value in items:  # spans come in start order: each list stays sorted
            self.starts[span.parent_id].append(span.start)
            self.values[span.parent_id].append(value)

    def last(self, span: WireSpan) -> str | None:
        """The value of the last sibling (in span order) that started no later than `span`."""
        starts = self.starts.get(span.parent_id)
        if not starts:
            return None
        index = bisect_right(starts, span.start)
        return self.values[span.parent_id][index - 1] if index else None
