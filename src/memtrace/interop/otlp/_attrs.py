"""Reading GenAI span attributes for the OTLP importer: records, messages, verdicts, span order."""

from __future__ import annotations

import json
from typing import Any

from ...vocabulary import CaseVerdict
from . import spans as keys
from ._wire import WireSpan

_PASS = {"pass", "passed", "correct", "true", "right", "good", "yes"}
_FAIL = {"fail", "failed", "incorrect", "wrong", "false", "bad", "no"}


def ordered(spans: list[WireSpan]) -> list[WireSpan]:
    """Spans by start time, a parent before its children when they start together."""
    ids = {s.span_id for s in spans}
    depth: dict[str, int] = {}
    parents = {s.span_id: s.parent_id for s in spans}

    def depth_of(span_id: str) -> int:
        # walk up to a span whose depth is known (or the top), then fill in the path: each span once
        path: list[str] = []
        seen: set[str] = set()
        node: str | None = span_id
        while node in ids and node not in depth and node not in seen:
            seen.add(node)
            path.append(node)
            node = parents.get(node)
        level = depth.get(node or "", -1)  # the top, or a cycle: counted from where it closes
        for span in reversed(path):
            level += 1
            depth[span] = level
        return depth[span_id]

    return sorted(spans, key=lambda s: (s.start, depth_of(s.span_id)))


def records(span: WireSpan) -> dict[str, Any]:
    """The memory records a span names: `gen_ai.memory.records` entries, then the single record id."""
    records: dict[str, Any] = {}
    raw = span.attributes.get(keys.RECORDS)
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = []
        for record in parsed if isinstance(parsed, list) else []:
            if isinstance(record, dict) and record.get("id") is not None:
                records[str(record["id"])] = record
    ids = span.attributes.get(keys.RECORD_IDS)
    for record_id in ids if isinstance(ids, list) else []:
        records.setdefault(str(record_id), {"id": str(record_id)})
    single = span.attributes.get(keys.RECORD_ID)
    if single is not None:
        records.setdefault(str(single), {"id": str(single)})
    return records


def record_value(record: Any) -> Any:
    """What a memory unit version holds: the record's content (its id alone when none was captured)."""
    if isinstance(record, dict) and record.get("content") is not None:
        return {"id": record.get("id"), "memory": record["content"]}
    return {"id": record.get("id") if isinstance(record, dict) else str(record)}


def messages(raw: Any) -> list[tuple[str, str]]:
    """(role, text) of `gen_ai.input.messages` / `gen_ai.output.messages` (JSON, parts or content)."""
    if not isinstance(raw, str):
        return []
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        return [("user", raw)]
    out = []
    for message in parsed if isinstance(parsed, list) else []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role") or "user")
        parts = message.get("parts")
        if isinstance(parts, list):
            text = "\n".join(
                str(p.get("content")) for p in parts if isinstance(p, dict) and p.get("content") is not None
            )
        else:
            text = str(message.get("content") or "")
        if text:
            out.append((role, text))
    return out


def user_messages(attrs: dict[str, Any]) -> list[str]:
    return [text for role, text in messages(attrs.get(keys.INPUT_MESSAGES)) if role == "user"]


def has_messages(attrs: dict[str, Any]) -> bool:
    return keys.INPUT_MESSAGES in attrs or keys.OUTPUT_MESSAGES in attrs


def evaluated_verdict(span: WireSpan) -> tuple[CaseVerdict | None, float | None]:
    """The verdict a span's `gen_ai.evaluation.result` events give (labels first, then scores)."""
    for name, _time, attrs in span.events:
        if name != keys.EVALUATION_EVENT:
            continue
        if keys.ERROR_TYPE in attrs and keys.SCORE_LABEL not in attrs:
            continue
        label = str(attrs.get(keys.SCORE_LABEL, "")).strip().casefold()
        score = attrs.get(keys.SCORE_VALUE)
        score = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
        if label in _PASS:
            return CaseVerdict.CORRECT, score
        if label in _FAIL:
            return CaseVerdict.WRONG, score
        if score is not None:
            return (CaseVerdict.CORRECT if score >= 0.5 else CaseVerdict.WRONG), score
    return None, None


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
