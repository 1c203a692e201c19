"""OTLP/JSON traces for the hostile-input tests, built by hand as a foreign instrumentation sends them:
per session a model call and a created memory record, per question a memory search and an answer
span carrying a `gen_ai.evaluation.result` event (so each question is a case)."""

from __future__ import annotations

import json
from typing import Any

QUESTION = "Where does Caroline live now (question {n})?"


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def trace_spans(
    sessions: int, questions: int, *, trace: int = 1, label: str = "fail"
) -> list[dict[str, Any]]:
    """1 + 3 * (sessions + questions) spans of one trace, in OTLP/JSON (hex ids, string times)."""
    trace_id = f"{trace:032x}"
    spans: list[dict[str, Any]] = []

    def span(name: str, parent: str | None, attributes: dict[str, Any], **extra: Any) -> str:
        span_id = f"{len(spans) + 1:016x}"
        start = 1_700_000_000_000_000_000 + len(spans) * 1_000_000
        record = {
            "traceId": trace_id,
            "spanId": span_id,
            "name": name,
            "kind": 3,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + 500_000),
            "attributes": [_attr(k, v) for k, v in attributes.items()],
            **extra,
        }
        if parent:
            record["parentSpanId"] = parent
        spans.append(record)
        return span_id

    root = span("invoke_agent assistant", None, {"gen_ai.operation.name": "invoke_agent"})
    for n in range(1, sessions + 1):
        batch = span("add_memories", root, {})
        said, fact = f"Caroline: session {n}, I moved to Boston.", f"Caroline lives in Boston ({n})"
        chat = {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": _messages("user", said),
            "gen_ai.output.messages": _messages("assistant", fact),
        }
        span("chat their-model", batch, chat)
        record = {
            "gen_ai.operation.name": "create_memory",
            "gen_ai.memory.record.id": f"rec-{n}",
            "gen_ai.memory.records": json.dumps([{"id": f"rec-{n}", "content": fact}]),
        }
        span("create_memory", batch, record)
    for n in range(1, questions + 1):
        question = QUESTION.format(n=n)
        parent = span("answer_question", root, {})
        search = {
            "gen_ai.operation.name": "search_memory",
            "gen_ai.memory.query.text": question,
            "gen_ai.memory.records": json.dumps([{"id": "rec-1", "content": "Caroline lives in Boston"}]),
        }
        span("search_memory", parent, search)
        answer = {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": _messages("user", question),
            "gen_ai.output.messages": _messages("assistant", "Paris"),
        }
        event = {
            "name": "gen_ai.evaluation.result",
            "timeUnixNano": spans[-1]["endTimeUnixNano"],
            "attributes": [_attr("gen_ai.evaluation.score.label", label), _attr("memtrace.case.id", f"q{n}")],
        }
        span("chat their-model", parent, answer, events=[event])
    return spans


def document(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """One OTLP/JSON ExportTraceServiceRequest holding these spans."""
    resource = {"attributes": [_attr("service.name", "their-app")]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]}


def body(spans: list[dict[str, Any]]) -> bytes:
    return json.dumps(document(spans)).encode()
