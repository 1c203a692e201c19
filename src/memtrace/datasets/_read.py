"""Reading dataset files with one-line errors that name the file and the first bad record.

Loaders raise `Bad(problem)` deep inside a record; `read_records` turns it into `FormatError(path, problem)`
so the user sees e.g. "data.json: conversation 3 (sample_id conv-42): qa[17] has no 'question'".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import FormatError

_KIND_NAMES: dict[type, str] = {
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true/false",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


class Bad(Exception):
    """A problem in one record; the loader's caller adds the file name."""


def kind(value: object) -> str:
    """How a JSON value's type reads in a message ("a list", "null")."""
    return _KIND_NAMES.get(type(value), type(value).__name__)


def read_json(path: str | Path) -> Any:
    """Parse a JSON file, or raise FormatError saying why not (missing, unreadable, not JSON)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(p, "no such file") from None
    except IsADirectoryError:
        raise FormatError(p, "is a directory, expected a JSON file") from None
    except UnicodeDecodeError as exc:
        raise FormatError(p, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise FormatError(p, f"cannot be read ({exc.strerror or exc})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(p, f"not valid JSON ({exc.msg}: line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise FormatError(
            p, "nested too deeply to read (more levels than Python's recursion limit)"
        ) from None


def need(record: dict[str, Any], key: str, types: type | tuple[type, ...], where: str) -> Any:
    """record[key], which must exist and be of `types` (bool never counts as a number)."""
    if key not in record:
        raise Bad(f"{where} has no {key!r}")
    return check(record[key], types, f"{where} has {key!r} as")


def opt(record: dict[str, Any], key: str, types: type | tuple[type, ...], where: str) -> Any:
    """record[key] if present and not null (then of `types`), else None."""
    value = record.get(key)
    if value is None:
        return None
    return check(value, types, f"{where} has {key!r} as")


def check(value: Any, types: type | tuple[type, ...], what: str) -> Any:
    """`value` if it is one of `types`; else Bad("<what> <kind>, expected ..."); `what` ends in a verb."""
    wanted = types if isinstance(types, tuple) else (types,)
    if isinstance(value, wanted) and not (isinstance(value, bool) and bool not in wanted):
        return value
    expected = " or ".join(dict.fromkeys(_KIND_NAMES.get(t, t.__name__) for t in wanted))
    raise Bad(f"{what} {kind(value)}, expected {expected}")


def text_of(value: Any) -> str:
    """A scalar answer as text: LoCoMo writes some answers as numbers (2022, 3.5 -> "2022", "3.5")."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def answers_of(value: Any, what: str) -> list[str]:
    """A gold answer (string, number, or list of them) as a list of strings."""
    if isinstance(value, list):
        return [text_of(check(v, (str, int, float), f"{what}[{i}] is")) for i, v in enumerate(value)]
    return [text_of(check(value, (str, int, float), f"{what} is"))]


def read_records(path: str | Path, parse: Any) -> Any:
    """Run `parse(data)` on the file's JSON, turning a `Bad` anywhere into FormatError(path, ...)."""
    data = read_json(path)
    try:
        return parse(data)
    except Bad as exc:
        raise FormatError(path, " ".join(str(exc).split())) from None
