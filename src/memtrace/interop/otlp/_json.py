"""OTLP/JSON trace data read straight into WireSpans, each field checked where it is read.

OTLP/JSON is protobuf's JSON mapping of `ExportTraceServiceRequest` with trace and span ids in hex.
Reading it by hand instead of through protobuf's `ParseDict` is several times faster on a large file
and keeps only the spans, and a wrong field is named by its path
(`resourceSpans[0].scopeSpans[0].spans[3].startTimeUnixNano`) with its value quoted briefly. As in
protobuf's parser, fields may be spelled in lowerCamelCase (as OTLP writes them) or snake_case,
null means absent, unknown fields and unknown enum names are ignored.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from functools import cache
from typing import Any

from .._common import brief
from ._wirespan import SPAN_KINDS, WireSpan

_KIND_NAMES = {f"SPAN_KIND_{kind.upper()}": number for number, kind in enumerate(SPAN_KINDS)}
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
_SPECIAL_DOUBLES = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class FieldError(ValueError):
    """A field that is not what OTLP/JSON says it is; `path` names it from the document's top."""

    def __init__(self, path: str, problem: str) -> None:
        self.path, self.problem = path, problem
        super().__init__(f"{path}: {problem}" if path else problem)

    def within(self, prefix: str) -> FieldError:
        """The same error seen from the record holding this one (`prefix` is its field there)."""
        joiner = "" if not self.path or self.path.startswith("[") else "."
        return FieldError(f"{prefix}{joiner}{self.path}", self.problem)


def decode_json(document: Any) -> list[WireSpan]:
    """Spans of one OTLP/JSON ExportTraceServiceRequest document; a bad field is a FieldError."""
    if not isinstance(document, dict) or not ({"resourceSpans", "resource_spans"} & document.keys()):
        raise FieldError("", "no 'resourceSpans'")
    spans: list[WireSpan] = []
    for r, resource_spans in enumerate(_list(document, "resourceSpans")):
        where = f"resourceSpans[{r}]"
        try:
            record = _record(resource_spans)
            resource = _attributes(_object(record, "resource"), "attributes")
            for s, scope_spans in enumerate(_list(record, "scopeSpans")):
                try:
                    for n, span in enumerate(_list(_record(scope_spans), "spans")):
                        try:
                            spans.append(_span(_record(span), resource))
                        except FieldError as exc:
                            raise exc.within(f"spans[{n}]") from None
                except FieldError as exc:
                    raise exc.within(f"scopeSpans[{s}]") from None
        except FieldError as exc:
            raise exc.within(where) from None
        except RecursionError:
            raise FieldError(where, "nested too deeply to read") from None
    return spans


def _span(span: dict[str, Any], resource: dict[str, Any]) -> WireSpan:
    name = _text(span, "name")
    trace_id, span_id = _hex(span, "traceId"), _hex(span, "spanId")
    if len(trace_id) != 32 or len(span_id) != 16:
        raise FieldError("", f"span {brief(name)} has no valid trace or span id")
    start, end = _uint(span, "startTimeUnixNano"), _uint(span, "endTimeUnixNano")
    kind = _enum(span, "kind", _KIND_NAMES)
    status = _object(span, "status")
    error = None
    if _enum(status, "code", _STATUS_NAMES, where="status.") == 2:
        error = _text(status, "message", where="status.") or "error"
    events = []
    for number, event in enumerate(_list(span, "events")):
        try:
            event = _record(event)
            time = _uint(event, "timeUnixNano") / 1e9
            events.append((_text(event, "name"), time, _attributes(event, "attributes")))
        except FieldError as exc:
            raise exc.within(f"events[{number}]") from None
    links = []
    for number, link in enumerate(_list(span, "links")):
        try:
            link = _record(link)
            links.append((_hex(link, "traceId"), _hex(link, "spanId"), _attributes(link, "attributes")))
        except FieldError as exc:
            raise exc.within(f"links[{number}]") from None
    return WireSpan(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_hex(span, "parentSpanId") or None,
        name=name,
        start=start / 1e9,
        end=max(end, start) / 1e9,
        attributes=_attributes(span, "attributes"),
        resource=resource,
        events=events,
        links=links,
        error=error,
        kind=SPAN_KINDS[kind] if 0 <= kind < len(SPAN_KINDS) else "unspecified",
    )


# -- attributes ---------------------------------------------------------------------------------


def _attributes(record: dict[str, Any], name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, pair in enumerate(_list(record, name)):
        try:
            pair = _record(pair)
            out[_text(pair, "key")] = _any(_field(pair, "value"))
        except FieldError as exc:
            raise exc.within(f"{name}[{number}]") from None
    return out


def _any(value: Any) -> Any:
    """An AnyValue: its one set member as a Python value (None when none is set)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise FieldError("value", f"expected an object, not {_kind(value)} {brief(value)}")
    for key, member in value.items():
        kind = _ANY_MEMBERS.get(key)
        if kind is None or member is None:
            continue
        try:
            return kind(member)
        except FieldError as exc:
            raise exc.within(f"value.{key}") from None
    return None


def _string(member: Any) -> str:
    if not isinstance(member, str):
        raise FieldError("", f"expected a string, not {_kind(member)} {brief(member)}")
    return member


def _bool(member: Any) -> bool:
    if not isinstance(member, bool):
        raise FieldError("", f"expected true or false, not {_kind(member)} {brief(member)}")
    return member


def _int(member: Any) -> int:
    if isinstance(member, int) and not isinstance(member, bool):
        return member
    if isinstance(member, str) and re.fullmatch(r"-?[0-9]{1,20}", member):
        return int(member)
    if isinstance(member, float) and member.is_integer():
        return int(member)
    raise FieldError("", f"expected an integer, not {_kind(member)} {brief(member)}")


def _double(member: Any) -> float:
    if isinstance(member, (int, float)) and not isinstance(member, bool):
        return float(member)
    if isinstance(member, str):
        if member in _SPECIAL_DOUBLES:
            return _SPECIAL_DOUBLES[member]
        try:
            return float(member)
        except ValueError:
            pass
    raise FieldError("", f"expected a number, not {_kind(member)} {brief(member)}")


def _array(member: Any) -> list[Any]:
    values = _list(_record(member), "values")
    out = []
    for number, item in enumerate(values):
        try:
            out.append(_any(item))
        except FieldError as exc:
            raise exc.within(f"values[{number}]") from None
    return out


def _kvlist(member: Any) -> dict[str, Any]:
    return _attributes(_record(member), "values")


def _bytes(member: Any) -> str:
    try:
        return binascii.hexlify(base64.b64decode(_string(member), validate=True)).decode()
    except binascii.Error:
        raise FieldError("", f"not base64: {brief(member)}") from None


_ANY_MEMBERS = {
    spelling: reader
    for camel, reader in (
        ("stringValue", _string),
        ("boolValue", _bool),
        ("intValue", _int),
        ("doubleValue", _double),
        ("arrayValue", _array),
        ("kvlistValue", _kvlist),
        ("bytesValue", _bytes),
    )
    for spelling in (camel, re.sub("([A-Z])", r"_\1", camel).lower())
}


# -- fields -------------------------------------------------------------------------------------


@cache
def _snake(name: str) -> str:
    return re.sub("([A-Z])", r"_\1", name).lower()


def _field(record: dict[str, Any], name: str) -> Any:
    value = record.get(name)
    return record.get(_snake(name)) if value is None else value


def _record(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FieldError("", f"expected an object, not {_kind(value)} {brief(value)}")
    return value


def _list(record: dict[str, Any], name: str) -> list[Any]:
    value = _field(record, name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(name, f"expected a list, not {_kind(value)} {brief(value)}")
    return value


def _object(record: dict[str, Any], name: str) -> dict[str, Any]:
    value = _field(record, name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FieldError(name, f"expected an object, not {_kind(value)} {brief(value)}")
    return value


def _text(record: dict[str, Any], name: str, *, where: str = "") -> str:
    value = _field(record, name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FieldError(where + name, f"expected a string, not {_kind(value)} {brief(value)}")
    return value


def _uint(record: dict[str, Any], name: str) -> int:
    value = _field(record, name)
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, float) and value >= 0 and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
        return int(value)
    raise FieldError(name, f"expected a time in nanoseconds, not {_kind(value)} {brief(value)}")


def _enum(record: dict[str, Any], name: str, names: dict[str, int], *, where: str = "") -> int:
    value = _field(record, name)
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        return names.get(value, 0)  # an unknown name, as protobuf's parser does with unknown fields
    raise FieldError(where + name, f"expected a number or a name, not {_kind(value)} {brief(value)}")


def _hex(record: dict[str, Any], name: str) -> str:
    value = _field(record, name)
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise FieldError(name, f"expected a hex string, not {_kind(value)} {brief(value)}")
    try:
        return bytes.fromhex(value).hex()
    except ValueError:
        raise FieldError(name, f"{brief(value)} is not hex") from None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )
