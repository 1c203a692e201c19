"""Structured (JSON) output: the schema sent to the model, and parsing + validating what comes back.

Servers differ: OpenAI and vLLM accept a `json_schema` response format, some only `json_object`,
some neither. The client walks down `FORMAT_LEVELS` when one is rejected and always validates the
reply itself, so the result is the same whichever the server enforced. Local models often wrap JSON
in code fences or prose; `extract_json` tolerates that before giving up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

#: Ways to ask for JSON, strongest first.
FORMAT_LEVELS: tuple[str, ...] = ("json_schema", "json_object", "prompt")

_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)
_NAME_OK = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(slots=True)
class OutputSpec:
    """What a chat call must return: a JSON schema (or any JSON) and how to validate it."""

    name: str
    schema: dict[str, Any] | None
    validate: Callable[[Any], Any]

    @property
    def first_level(self) -> int:
        """Schemas start at `json_schema`; plain JSON mode starts at `json_object`."""
        return 0 if self.schema is not None else 1

    def response_format(self, level: int) -> dict[str, Any] | None:
        kind = FORMAT_LEVELS[level]
        if kind == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": self.name, "schema": self.schema, "strict": False},
            }
        if kind == "json_object":
            return {"type": "json_object"}
        return None

    def instruction(self, level: int) -> str | None:
        """A system note for levels where the server does not enforce the schema itself."""
        if FORMAT_LEVELS[level] == "json_schema":
            return None
        if self.schema is None:
            return "Reply with a single JSON value and nothing else."
        schema = json.dumps(self.schema, ensure_ascii=False)
        return f"Reply with a single JSON object and nothing else. It must match this JSON schema:\n{schema}"


def output_spec(schema: dict[str, Any] | type[BaseModel] | None, json_mode: bool) -> OutputSpec | None:
    """The spec for a `chat(schema=..., json_mode=...)` call, or None for plain text."""
    if schema is None:
        return OutputSpec("json", None, lambda data: data) if json_mode else None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        model = schema

        def validate_model(data: Any) -> Any:
            try:
                return model.model_validate(data)
            except ValidationError as exc:
                raise ValueError(pydantic_problems(exc)) from None

        return OutputSpec(_safe_name(model.__name__), model.model_json_schema(), validate_model)
    if isinstance(schema, dict):
        frozen = schema

        def validate_dict(data: Any) -> Any:
            problems = schema_problems(data, frozen)
            if problems:
                raise ValueError("; ".join(problems[:5]))
            return data

        return OutputSpec(_safe_name(str(schema.get("title") or "response")), schema, validate_dict)
    raise TypeError(
        f"schema must be a JSON schema dict or a pydantic model class, not {type(schema).__name__}"
    )


def parse_reply(text: str, spec: OutputSpec) -> Any:
    """Parse and validate a reply; raises ValueError with a message fit to send back to the model."""
    return spec.validate(extract_json(text))


def extract_json(text: str) -> Any:
    """The JSON value in `text`, tolerating code fences and prose around one object or array."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        first_error = exc
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = stripped.find(opener), stripped.rfind(closer)
        if 0 <= start < end:
            try:
                return json.loads(stripped[start : end + 1])
            except json.JSONDecodeError:
                continue
    raise ValueError(f"the reply is not valid JSON ({first_error})")


def pydantic_problems(exc: ValidationError) -> str:
    """A compact one-line summary of a pydantic validation error."""
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "$"
        parts.append(f"{where}: {error['msg']}")
    return "the JSON does not match the schema: " + "; ".join(parts)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def schema_problems(
    value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None, path: str = "$"
) -> list[str]:
    """Problems of `value` against a JSON schema (the common subset: types, properties, required,
    additionalProperties, items, enum, const, anyOf/oneOf/allOf, local $ref). Empty when valid."""
    root = root if root is not None else schema
    if "$ref" in schema:
        schema = _resolve(schema["$ref"], root)
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        kinds = expected if isinstance(expected, list) else [expected]
        if not any(_TYPES.get(k, lambda _v: True)(value) for k in kinds):
            return [f"{path}: expected {' or '.join(kinds)}, got {_json_type(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        problems.append(f"{path}: must be {schema['const']!r}")
    for key in ("anyOf", "oneOf"):
        if key in schema and all(schema_problems(value, s, root, path) for s in schema[key]):
            problems.append(f"{path}: matches none of the allowed shapes")
    for sub in schema.get("allOf", []):
        problems.extend(schema_problems(value, sub, root, path))
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        problems.extend(
            f"{path}: missing required key {k!r}" for k in schema.get("required", []) if k not in value
        )
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                problems.extend(schema_problems(item, properties[key], root, f"{path}.{key}"))
            elif extra is False:
                problems.append(f"{path}: unexpected key {key!r}")
            elif isinstance(extra, dict):
                problems.extend(schema_problems(item, extra, root, f"{path}.{key}"))
    if isinstance(value, list):
        if "items" in schema and isinstance(schema["items"], dict):
            for i, item in enumerate(value):
                problems.extend(schema_problems(item, schema["items"], root, f"{path}[{i}]"))
        if len(value) < schema.get("minItems", 0):
            problems.append(f"{path}: needs at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{path}: allows at most {schema['maxItems']} items")
    return problems


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#/"):
        return {}
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}


def _json_type(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](value):
            return name
    return type(value).__name__


def _safe_name(name: str) -> str:
    """OpenAI schema names allow [a-zA-Z0-9_-], at most 64 characters."""
    return _NAME_OK.sub("_", name)[:64] or "response"
