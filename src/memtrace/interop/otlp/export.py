"""Export a stored run as OpenTelemetry GenAI spans: to an OTLP receiver (HTTP/protobuf or gRPC) or a file.

One span per operation, nested as the operations nest, under one `invoke_workflow` span for the run;
retrievals link to the spans that wrote the memory records they returned, and each judged case's
answer span carries `gen_ai.evaluation.result` events (the judge's verdict and any attributions
handed in). Receivers fold events away, so the blamed operations and the judges of wrong answers
also end ERROR (marks.py). Every span carries the run's graph in memtrace's own attributes
(graphspans.py), so `memtrace import` rebuilds the run as recorded. Span and trace ids derive from
the run and operation ids: exporting again replaces rather than duplicates in receivers that keep
the last copy. Needs the `memtrace[otel]` extra; nothing here is imported by `import memtrace`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ...errors import MemtraceError
from ...graph.model import MEMORY_ENTRY, Case, Run
from ...graph.store import Store
from ...graph.view import GraphView
from ...vocabulary import CaseVerdict
from . import graphspans
from .marks import Blame, mark_blamed, mark_wrong_judges
from .spans import (
    EvaluationResult,
    EventSpec,
    SpanSpec,
    evaluation_event,
    memory_change,
    op_span,
    root_span,
    span_id_of,
    trace_id_of,
    verdict_result,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider

PROTOCOLS = ("http/protobuf", "grpc")
#: Spans per export request (the SDK's batch processor default).
EXPORT_BATCH = 512
INSTALL_HINT = "OpenTelemetry export needs the otel extra: pip install 'memtrace[otel]'"


def require_otel() -> None:
    """Fail with one line naming the extra when the OpenTelemetry packages are missing."""
    try:
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise MemtraceError(INSTALL_HINT) from None


# -- stored run -> span specs --------------------------------------------------------------------


def plan_run(
    store: Store,
    run_id: str,
    *,
    content: bool = False,
    evaluations: Iterable[EvaluationResult] = (),
    blames: Iterable[Blame] = (),
) -> list[SpanSpec]:
    """The spans of a stored run, root first, then operations in seq order (parents before children).

    Each span also carries the run's graph (graphspans.py) so that an import rebuilds it; `blames`
    (stored attributions) and the judges of wrong answers mark their spans ERROR (marks.py).
    """
    view = GraphView(store, store.run(run_id))
    run = view.run
    ops = view.ops_in_order()
    edges = {op.id: (view.inputs(op.id), view.outputs(op.id)) for op in ops}
    introduced, loose = graphspans.introductions(ops, edges, view.vars.values())
    specs: list[SpanSpec] = []
    for op in ops:
        inputs, outputs = edges[op.id]
        changes: dict[str, str] = {}
        for version in outputs:
            if version.category == MEMORY_ENTRY:
                before = [v for v in view.versions(version.name) if v.version < version.version]
                changes[version.id] = memory_change(version, before[-1].deleted if before else None)
        producers = {}
        for version in inputs:
            made_by = view.producers(version.id)
            if made_by:
                producers[version.id] = made_by[0].id
        values = view.values([*inputs, *outputs]) if content else {}
        spec = op_span(
            op,
            run,
            inputs=inputs,
            outputs=outputs,
            changes=changes,
            values=values,
            producers=producers,
            content=content,
        )
        described = [
            graphspans.describe(
                v, values, content=content, previous=graphspans.previous(view, v) if content else None
            )
            for v in introduced[op.id]
        ]
        spec.attributes.update(graphspans.op_attributes(op, inputs, outputs, described, content=content))
        specs.append(spec)
    start = min([run.created_at, *(s.start for s in specs)]) if specs else run.created_at
    end = max([run.finished_at or start, *(s.end for s in specs)])
    root = root_span(run, start, end)
    loose_values = view.values(loose) if content else {}
    root.attributes.update(
        graphspans.run_attributes(
            run, content=content, loose=[graphspans.describe(v, loose_values, content=content) for v in loose]
        )
    )
    by_op = {s.op_id: s for s in specs if s.op_id is not None}
    cases = store.cases(run.id)
    _case_events(view, cases, [*evaluations], by_op, root, content=content)
    mark_blamed(by_op, blames)
    judges = {
        c.prediction_var: [op.id for op in view.consumers(c.prediction_var) if op.category == "evaluation"]
        for c in cases
        if c.failed and c.prediction_var and view.has_var(c.prediction_var)
    }
    mark_wrong_judges(by_op, judges, cases)
    return [root, *specs]


def _case_events(
    view: GraphView,
    cases: Sequence[Case],
    evaluations: Sequence[EvaluationResult],
    by_op: dict[str, SpanSpec],
    root: SpanSpec,
    *,
    content: bool,
) -> None:
    """Each case as an event on its answer span (the root when it has none): the judge's verdict
    carrying the case, or `memtrace.case` for a case never judged; then the evaluations handed in."""
    answers = {c.id: by_op.get(_answer_op(view, c) or "", root) for c in cases}
    for case in cases:
        target = answers[case.id]
        attributes = graphspans.case_attributes(case, content=content)
        if case.verdict in tuple(CaseVerdict):
            result = verdict_result(case, content=content)
            result.extra.update(attributes)
            target.events.append(evaluation_event(result, target.end))
        else:
            target.events.append(EventSpec(graphspans.CASE_EVENT, target.end, attributes))
    for result in evaluations:
        target = answers.get(result.case_id, root)
        target.events.append(evaluation_event(result, target.end))


def _answer_op(view: GraphView, case: Case) -> str | None:
    """The operation that wrote a case's prediction (its answer step), when the graph has it."""
    if not case.prediction_var or not view.has_var(case.prediction_var):
        return None
    writers = view.producers(case.prediction_var)
    answers = [op for op in writers if op.category == "response"] or writers
    return answers[-1].id if answers else None


# -- span specs -> SDK spans ---------------------------------------------------------------------


def emit(specs: Sequence[SpanSpec], run_id: str, provider: TracerProvider) -> None:
    """Start and end one SDK span per spec, with the recorded times, on `provider`.

    When the provider was made by `planned_provider`, span and trace ids are the stable ones of
    `span_id_of`/`trace_id_of`; any other provider gives its own ids.
    """
    from opentelemetry import trace
    from opentelemetry.trace import Link, SpanKind, Status, StatusCode

    ids = getattr(provider, "id_generator", None)
    planned = ids if isinstance(ids, _planned_ids_class()) else None
    tracer = provider.get_tracer("memtrace", _version())
    started: dict[str | None, Any] = {}
    for spec in specs:
        parent = started.get(spec.parent_op) if spec.op_id is not None else None
        if parent is None and spec.op_id is not None:
            parent = started.get(None)
        context = trace.set_span_in_context(parent) if parent is not None else None
        links = [
            Link(started[link.op_id].get_span_context(), link.attributes)
            for link in spec.links
            if link.op_id in started
        ]
        if planned is not None:
            planned.next_trace_id = trace_id_of(run_id)
            planned.next_span_id = span_id_of(run_id, spec.op_id)
        span = tracer.start_span(
            spec.name,
            context=context,
            kind=getattr(SpanKind, spec.kind.upper(), SpanKind.INTERNAL),
            attributes=spec.attributes,
            links=links,
            start_time=_ns(spec.start),
        )
        for event in spec.events:
            span.add_event(event.name, event.attributes, timestamp=_ns(event.time))
        if spec.error is not None:
            span.set_status(Status(StatusCode.ERROR, spec.error[:500]))
        span.end(end_time=max(_ns(spec.end), _ns(spec.start)))
        started[spec.op_id] = span


def planned_provider(run: Run | None = None, *, processor: Any = None) -> TracerProvider:
    """A tracer provider whose ids `emit` plans, with the run as its resource (service.name memtrace)."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    attributes: dict[str, Any] = {"service.name": "memtrace"}
    if run is not None:
        attributes |= {"memtrace.run.id": run.id, "memtrace.run.name": run.name}
        if run.system:
            attributes["memtrace.system"] = run.system
    provider = TracerProvider(resource=Resource.create(attributes), id_generator=_planned_ids_class()())
    if processor is not None:
        provider.add_span_processor(processor)
    return provider


def run_spans(
    store: Store,
    run_id: str,
    *,
    content: bool = False,
    evaluations: Iterable[EvaluationResult] = (),
    blames: Iterable[Blame] = (),
) -> list[ReadableSpan]:
    """The finished SDK spans of a stored run (what the exporters send)."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    require_otel()
    collected = InMemorySpanExporter()
    run = store.run(run_id)
    provider = planned_provider(run, processor=SimpleSpanProcessor(collected))
    specs = plan_run(store, run.id, content=content, evaluations=evaluations, blames=blames)
    emit(specs, run.id, provider)
    provider.shutdown()
    return list(collected.get_finished_spans())


# -- sending and writing -------------------------------------------------------------------------


def span_exporter(endpoint: str, protocol: str = "http/protobuf", *, timeout: float = 10.0) -> Any:
    """The SDK's OTLP exporter for a receiver: HTTP with protobuf bodies, or gRPC.

    An HTTP endpoint without a path gets the standard `/v1/traces`; a gRPC endpoint is `host:port`
    or a URL (plain text for http://, TLS for https://).
    """
    require_otel()
    if protocol not in PROTOCOLS:
        raise MemtraceError(f"unknown OTLP protocol {protocol!r} (choose {' or '.join(PROTOCOLS)})")
    parts = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    if not parts.hostname:
        raise MemtraceError(f"OTLP endpoint {endpoint!r} names no host")
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc

        return Grpc(endpoint=parts.netloc, insecure=parts.scheme != "https", timeout=int(max(1, timeout)))
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Http

    url = endpoint if "://" in endpoint else f"http://{endpoint}"
    if parts.path in ("", "/"):
        url = url.rstrip("/") + "/v1/traces"
    return Http(endpoint=url, timeout=timeout)


def send_spans(spans: Sequence[ReadableSpan], exporter: Any, endpoint: str) -> int:
    """Export spans in batches; a batch the receiver refuses raises one error naming the endpoint."""
    from opentelemetry.sdk.trace.export import SpanExportResult

    try:
        for start in range(0, len(spans), EXPORT_BATCH):
            result = exporter.export(list(spans[start : start + EXPORT_BATCH]))
            if result is not SpanExportResult.SUCCESS:
                raise MemtraceError(
                    f"{endpoint}: the OTLP receiver did not accept the spans (unreachable, or it"
                    f" refused them; nothing after span {start} was sent)"
                )
    finally:
        exporter.shutdown()
    return len(spans)


def export_otlp(
    store: Store,
    run_id: str,
    endpoint: str,
    *,
    protocol: str = "http/protobuf",
    content: bool = False,
    evaluations: Iterable[EvaluationResult] = (),
    blames: Iterable[Blame] = (),
    timeout: float = 10.0,
) -> int:
    """Send one stored run to an OTLP receiver; returns the number of spans sent."""
    exporter = span_exporter(endpoint, protocol, timeout=timeout)
    spans = run_spans(store, run_id, content=content, evaluations=evaluations, blames=blames)
    return send_spans(spans, exporter, endpoint)


def write_otlp_file(spans: Sequence[ReadableSpan], path: str | Path) -> int:
    """Write spans as one OTLP ExportTraceServiceRequest: OTLP/JSON for `.json`, protobuf otherwise."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = encode_spans(spans)
    path = Path(path)
    if path.suffix == ".json":
        path.write_text(json.dumps(otlp_json(request), ensure_ascii=False) + "\n", encoding="utf-8")
    else:
        path.write_bytes(request.SerializeToString())
    return len(spans)


def otlp_json(request: Any) -> dict[str, Any]:
    """OTLP/JSON of a protobuf request: protobuf's JSON mapping with trace and span ids in hex."""
    from google.protobuf.json_format import MessageToDict

    document = MessageToDict(request, use_integers_for_enums=True)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                _ids_to_hex(span)
                for link in span.get("links", []):
                    _ids_to_hex(link)
    return document


def _ids_to_hex(record: dict[str, Any]) -> None:
    import base64

    for key in ("traceId", "spanId", "parentSpanId"):
        if record.get(key):
            record[key] = base64.b64decode(record[key]).hex()


def _ns(seconds: float | None) -> int:
    return round((seconds or 0.0) * 1e9)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memtrace")
    except PackageNotFoundError:
        return "0"


_PLANNED: type | None = None


def _planned_ids_class() -> type:
    """An IdGenerator that hands out the ids `emit` planned (random ones when none is planned)."""
    global _PLANNED
    if _PLANNED is None:
        from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator

        class PlannedIds(IdGenerator):
            def __init__(self) -> None:
                self.next_trace_id: int | None = None
                self.next_span_id: int | None = None
                self._random = RandomIdGenerator()

            def generate_trace_id(self) -> int:
                planned, self.next_trace_id = self.next_trace_id, None
                return planned or self._random.generate_trace_id()

            def generate_span_id(self) -> int:
                planned, self.next_span_id = self.next_span_id, None
                return planned or self._random.generate_span_id()

        _PLANNED = PlannedIds
    return _PLANNED


__all__ = [
    "PROTOCOLS",
    "Blame",
    "EvaluationResult",
    "emit",
    "export_otlp",
    "plan_run",
    "planned_provider",
    "run_spans",
    "send_spans",
    "span_exporter",
    "write_otlp_file",
]
