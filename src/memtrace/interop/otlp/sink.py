"""`OtelSink`: a recorder sink that emits OpenTelemetry GenAI spans while the run records.

Each operation's span starts when the operation starts and ends when it ends, so a trace UI shows
the run live and export costs no second pass over the workspace. Names, attributes, kinds and links
are the ones the after-the-fact exporter gives (interop/otlp/spans.py). The kind (CLIENT for
model calls and operations marked `remote`) is set as the span starts, as OpenTelemetry requires;
what only the end of an operation tells (which memory records it wrote, so `create_memory` rather
than the operation's name) is set as it ends. An answer's span stays open until its case is judged,
so the verdict rides on it as a `gen_ai.evaluation.result` event, then ends with its recorded time;
the judge's span waits too, and ends ERROR when the answer was judged wrong.
Attributions come later: `memtrace export --format otlp` sends them with the run.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ...graph.model import MEMORY_ENTRY, Case, Edge, Operation, Run, VariableVersion
from .marks import mark_wrong_judges
from .spans import (
    SpanSpec,
    evaluation_event,
    memory_change,
    op_span,
    root_span,
    span_kind,
    verdict_result,
)

__all__ = ["OtelSink"]

#: Variable categories whose values the sink keeps when content is asked for (what the spans show).
_CONTENT_CATEGORIES = {MEMORY_ENTRY, "query", "prompt", "llm_response"}


class OtelSink:
    """Sends a run's operations as spans to an OpenTelemetry tracer provider as they happen.

    `provider` is any SDK `TracerProvider` (default: the global one the application configured);
    `content=True` adds message, query and memory text (opt-in, as the conventions ask).
    """

    def __init__(self, provider: Any = None, *, content: bool = False) -> None:
        try:
            from opentelemetry import trace
            from opentelemetry.trace import SpanKind
        except ImportError:
            raise ImportError("OpenTelemetry spans need the extra: pip install 'memtrace[otel]'") from None
        self._trace = trace
        self._span_kind = SpanKind
        self.provider = provider if provider is not None else trace.get_tracer_provider()
        self.tracer = self.provider.get_tracer("memtrace")
        self.content = content
        self.run: Run | None = None
        self.root: Any = None
        self.spans: dict[str, Any] = {}
        self._ops: dict[str, Operation] = {}
        self._versions: dict[str, VariableVersion] = {}
        self._values: dict[str, Any] = {}
        self._changes: dict[str, str] = {}
        self._unit_deleted: dict[str, bool] = {}
        self._producer: dict[str, str] = {}  # version id -> op id that wrote it
        self._open_answers: dict[str, Operation] = {}  # answer spans waiting for their verdict
        self._judged: set[str] = set()
        self._predictions: set[str] = set()  # versions answers wrote: a judge reading one waits for it
        self._open_judges: dict[str, list[Operation]] = {}  # prediction version -> judges holding open
        self._lock = threading.Lock()

    # -- the Sink protocol --------------------------------------------------------------------

    def run_started(self, run: Run) -> None:
        with self._lock:
            self.run = run
            spec = root_span(run, run.created_at, run.created_at)
            start = _ns(spec.start)
            self.root = self.tracer.start_span(spec.name, attributes=spec.attributes, start_time=start)

    def op_started(self, op: Operation) -> None:
        with self._lock:
            parent = self.spans.get(op.parent_op or "") or self.root
            context = self._trace.set_span_in_context(parent) if parent is not None else None
            self._ops[op.id] = op
            start = _ns(op.started_at)
            # the kind cannot change once a span has started: it comes from what the op says now
            kind = getattr(self._span_kind, span_kind(op.category, op.metadata).upper())
            self.spans[op.id] = self.tracer.start_span(op.name, context=context, kind=kind, start_time=start)

    def blob_added(self, digest: str, encoding: str, data: bytes) -> None:
        return None  # values arrive with their versions

    def version_written(self, version: VariableVersion, value: Any) -> None:
        with self._lock:
            self._versions[version.id] = version
            if version.category == MEMORY_ENTRY:
                self._changes[version.id] = memory_change(version, self._unit_deleted.get(version.name))
                self._unit_deleted[version.name] = version.deleted
            if self.content and version.category in _CONTENT_CATEGORIES and value is not None:
                self._values[version.id] = _snapshot(value)

    def edge_added(self, edge: Edge) -> None:
        if edge.role == "out":
            with self._lock:
                self._producer.setdefault(edge.var_id, edge.op_id)

    def op_ended(self, op: Operation, inputs: Sequence[str], outputs: Sequence[str]) -> None:
        with self._lock:
            span = self.spans.get(op.id)
            if span is None or self.run is None:
                return
            spec = op_span(
                op,
                self.run,
                inputs=[self._versions[v] for v in inputs if v in self._versions],
                outputs=[self._versions[v] for v in outputs if v in self._versions],
                changes={v: self._changes[v] for v in outputs if v in self._changes},
                values=self._values,
                producers={v: self._producer[v] for v in inputs if v in self._producer},
                content=self.content,
            )
            self._apply(span, spec)
            if op.category == "response" and any(self._versions.get(v) is not None for v in outputs):
                self._open_answers[op.id] = op  # ended once its case is judged, or with the run
                self._predictions.update(v for v in outputs if v in self._versions)
            elif op.category == "evaluation" and self._predictions.intersection(inputs):
                for var_id in self._predictions.intersection(inputs):  # marked ERROR if judged wrong
                    self._open_judges.setdefault(var_id, []).append(op)
            else:
                span.end(end_time=max(_ns(spec.end), _ns(spec.start)))

    def case_updated(self, case: Case) -> None:
        if case.verdict not in ("correct", "wrong"):
            return
        with self._lock:
            if case.id in self._judged:
                return
            answer = self._producer.get(case.prediction_var or "")
            op = self._open_answers.pop(answer or "", None)
            self._judged.add(case.id)
            target = self.spans[op.id] if op is not None else self.root
            if target is None:
                return
            event = evaluation_event(verdict_result(case, content=self.content), 0.0)
            target.add_event(event.name, event.attributes)
            if op is not None:
                target.end(end_time=_ns(op.ended_at or op.started_at))
            judges = self._open_judges.pop(case.prediction_var or "", [])
            specs = {j.id: SpanSpec(j.id, None, j.name, 0.0, 0.0, {}) for j in judges}
            mark_wrong_judges(specs, {case.prediction_var or "": list(specs)}, [case])
            for judge in judges:
                self._end_judge(judge, specs[judge.id])

    def flush(self) -> None:
        force_flush = getattr(self.provider, "force_flush", None)
        if force_flush is not None:
            force_flush()

    def run_ended(self, run: Run) -> None:
        with self._lock:
            for op in self._open_answers.values():
                self.spans[op.id].end(end_time=_ns(op.ended_at or op.started_at))
            self._open_answers.clear()
            for judges in self._open_judges.values():
                for judge in judges:
                    self._end_judge(judge, None)
            self._open_judges.clear()
            if self.root is not None:
                if run.status not in ("complete", "running"):
                    from opentelemetry.trace import Status, StatusCode

                    self.root.set_status(Status(StatusCode.ERROR, (run.error or run.status)[:500]))
                self.root.end(end_time=_ns(run.finished_at or run.created_at))
        self.flush()

    # -- helpers ------------------------------------------------------------------------------

    def _end_judge(self, op: Operation, marked: SpanSpec | None) -> None:
        """End a judge's span held open for its verdict, ERROR when it judged the answer wrong."""
        span = self.spans[op.id]
        if not span.is_recording():  # a judge of two answers: ended with the first verdict
            return
        if marked is not None and marked.error is not None:
            from opentelemetry.trace import Status, StatusCode

            span.set_attributes(marked.attributes)
            span.set_status(Status(StatusCode.ERROR, marked.error))
        span.end(end_time=_ns(op.ended_at or op.started_at))

    def _apply(self, span: Any, spec: SpanSpec) -> None:
        """What the end of an operation tells: its GenAI name, attributes, links and status."""
        span.update_name(spec.name)
        span.set_attributes(spec.attributes)
        for link in spec.links:
            target = self.spans.get(link.op_id)
            if target is not None:
                span.add_link(target.get_span_context(), link.attributes)
        if spec.error is not None:
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, spec.error[:500]))


def _snapshot(value: Any) -> Any:
    """A copy the pipeline cannot change later: text as is, anything else through JSON."""
    if isinstance(value, str):
        return value
    import json

    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _ns(seconds: float | None) -> int:
    return round((seconds or 0.0) * 1e9)
