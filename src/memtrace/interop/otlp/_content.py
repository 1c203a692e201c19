"""Span content for the GenAI attributes that carry text (opt-in): records, messages, scores.

Kept apart from spans.py, which decides names, keys and links, so each stays one concept.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ...graph.model import Operation, VariableVersion


def scores_of(op: Operation) -> dict[str, float]:
    """Per memory unit, the retrieval score the operation recorded (memtrace systems' metadata)."""
    out: dict[str, float] = {}
    for key in ("ranking", "scores"):
        for row in op.metadata.get(key) or []:
            if isinstance(row, (list, tuple)) and row and isinstance(row[0], str):
                score = row[-1]
                if isinstance(score, (int, float)) and not isinstance(score, bool):
                    out.setdefault(row[0], float(score))
    return out


def records_json(
    versions: Iterable[VariableVersion],
    values: Mapping[str, Any],
    changes: Mapping[str, str],
    scores: Mapping[str, float] | None = None,
) -> str:
    """`gen_ai.memory.records`: a JSON list of {id, content, metadata[, score]} (opt-in content)."""
    records = []
    for v in versions:
        record: dict[str, Any] = {"id": v.name}
        if not v.deleted:
            record["content"] = text_of(values.get(v.id))
        metadata: dict[str, Any] = {"version": v.version}
        if v.id in changes:
            metadata["change"] = changes[v.id]
        record["metadata"] = metadata
        if scores and v.name in scores:
            record["score"] = scores[v.name]
        records.append(record)
    return json.dumps(records, ensure_ascii=False, default=str)


def messages_json(value: Any, role: str) -> str:
    """`gen_ai.input.messages` / `gen_ai.output.messages`: role + parts, from a recorded prompt or reply."""
    if isinstance(value, list) and all(isinstance(m, dict) and "content" in m for m in value):
        messages = [
            {"role": m.get("role", role), "parts": [{"type": "text", "content": text_of(m["content"])}]}
            for m in value
        ]
    else:
        messages = [{"role": role, "parts": [{"type": "text", "content": text_of(value)}]}]
    return json.dumps(messages, ensure_ascii=False, default=str)


def text_of(value: Any) -> str:
    """A value as the text a trace UI shows: strings as they are, a memory record by its text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("memory", "text", "content"):
            if isinstance(value.get(key), str):
                return value[key]
    return json.dumps(value, ensure_ascii=False, default=str)
