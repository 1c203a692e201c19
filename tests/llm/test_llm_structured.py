"""Parsing and validating JSON replies without a server: fences, prose, the JSON-schema subset."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from memtrace.llm.structured import extract_json, output_spec, parse_reply, schema_problems


class Event(BaseModel):
    action: str
    memory_id: int | None = None


def test_extract_json_tolerates_fences_and_prose() -> None:
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('Sure! Here it is: {"a": [1, 2]} Hope this helps.') == {"a": [1, 2]}
    assert extract_json("Result:\n[1, 2]") == [1, 2]
    with pytest.raises(ValueError, match="not valid JSON"):
        extract_json("no json here")


def test_schema_problems_cover_the_common_subset() -> None:
    schema = {
        "type": "object",
        "properties": {
            "events": {"type": "array", "items": {"$ref": "#/$defs/Event"}, "minItems": 1},
            "note": {"type": ["string", "null"]},
        },
        "required": ["events"],
        "additionalProperties": False,
        "$defs": {
            "Event": {
                "type": "object",
                "properties": {
                    "event": {"enum": ["ADD", "UPDATE", "DELETE", "NONE"]},
                    "id": {"type": "integer"},
                },
                "required": ["event"],
            }
        },
    }
    assert schema_problems({"events": [{"event": "ADD", "id": 3}], "note": None}, schema) == []
    problems = schema_problems({"events": [{"event": "MERGE", "id": True}], "extra": 1}, schema)
    assert "$.events[0].event: 'MERGE' is not one of ['ADD', 'UPDATE', 'DELETE', 'NONE']" in problems
    assert "$.events[0].id: expected integer, got boolean" in problems
    assert "$: unexpected key 'extra'" in problems
    assert schema_problems({}, schema) == ["$: missing required key 'events'"]
    assert schema_problems({"events": []}, schema) == ["$.events: needs at least 1 items"]
    assert schema_problems(1.5, {"anyOf": [{"type": "string"}, {"type": "integer"}]}) == [
        "$: matches none of the allowed shapes"
    ]


def test_pydantic_spec_returns_model_instances_and_readable_errors() -> None:
    spec = output_spec(Event, json_mode=False)
    assert spec is not None and spec.name == "Event" and spec.schema is not None
    assert parse_reply('{"action": "ADD"}', spec) == Event(action="ADD")
    with pytest.raises(ValueError, match=r"does not match the schema: memory_id: .*integer"):
        parse_reply('{"action": "ADD", "memory_id": "seven"}', spec)


def test_spec_names_and_levels() -> None:
    assert output_spec(None, json_mode=False) is None
    plain = output_spec(None, json_mode=True)
    assert (
        plain is not None and plain.first_level == 1 and plain.response_format(1) == {"type": "json_object"}
    )
    odd = output_spec({"title": "my schema!", "type": "object"}, json_mode=False)
    assert odd is not None and odd.name == "my_schema_" and odd.first_level == 0
    assert odd.response_format(2) is None and "JSON schema" in (odd.instruction(2) or "")
    with pytest.raises(TypeError):
        output_spec("not a schema", json_mode=False)  # type: ignore[arg-type]
