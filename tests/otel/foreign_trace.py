"""Someone else's instrumentation, as a test input: GenAI memory spans made with the OpenTelemetry SDK
alone (no memtrace), the way an app tracing its own memory layer would emit them."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

QUESTION = "Where does Caroline live?"
STORE = "user-42-memories"


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def foreign_spans(*, extraction_drops_boston: bool = False) -> list[ReadableSpan]:
    """Two sessions stored as memories, then a question whose search misses the one that answers it.

    The spans have the kinds such an app gives them: the agent serves a request (SERVER), each
    session arrives from a queue (CONSUMER), the model and the memory service are called (CLIENT).

    With `extraction_drops_boston`, the first session's extraction returns nothing and no memory is
    created from it: the information never enters memory.
    """
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("their-app")
    sessions = [
        ("Caroline: I moved to Boston last May.", "Caroline moved to Boston in May", "rec-boston"),
        ("Caroline: I love hiking on weekends.", "Likes hiking on weekends", "rec-hiking"),
    ]
    agent = {"gen_ai.operation.name": "invoke_agent"}
    with tracer.start_as_current_span("invoke_agent assistant", kind=SpanKind.SERVER, attributes=agent):
        for said, fact, record_id in sessions:
            dropped = extraction_drops_boston and record_id == "rec-boston"
            with tracer.start_as_current_span("add_memories", kind=SpanKind.CONSUMER):
                chat: dict[str, Any] = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "their-model",
                    "gen_ai.input.messages": _messages("user", said),
                    "gen_ai.output.messages": _messages("assistant", "(no facts)" if dropped else fact),
                }
                with tracer.start_as_current_span("chat their-model", kind=SpanKind.CLIENT, attributes=chat):
                    pass
                if dropped:
                    continue
                record = {"id": record_id, "content": fact}
                create = {
                    "gen_ai.operation.name": "create_memory",
                    "gen_ai.memory.store.id": STORE,
                    "gen_ai.memory.record.id": record_id,
                    "gen_ai.memory.records": json.dumps([record]),
                }
                with tracer.start_as_current_span("create_memory", kind=SpanKind.CLIENT, attributes=create):
                    pass
        with tracer.start_as_current_span("answer_question"):
            search = {
                "gen_ai.operation.name": "search_memory",
                "gen_ai.memory.store.id": STORE,
                "gen_ai.memory.query.text": QUESTION,
                "gen_ai.memory.record.count": 1,
                "gen_ai.memory.records": json.dumps([{"id": "rec-hiking", "content": sessions[1][1]}]),
            }
            with tracer.start_as_current_span("search_memory", kind=SpanKind.CLIENT, attributes=search):
                pass
            answer = {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": _messages("user", f"Memories: Likes hiking on weekends\n{QUESTION}"),
                "gen_ai.output.messages": _messages("assistant", "I don't know where Caroline lives."),
            }
            with tracer.start_as_current_span(
                "chat their-model", kind=SpanKind.CLIENT, attributes=answer
            ) as span:
                span.add_event(
                    "gen_ai.evaluation.result",
                    {"gen_ai.evaluation.name": "correctness", "gen_ai.evaluation.score.label": "fail"},
                )
    provider.shutdown()
    return list(exporter.get_finished_spans())
