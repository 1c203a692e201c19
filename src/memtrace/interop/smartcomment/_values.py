"""Decode smartcomment value strings into the values they spell, and spell them back byte for byte.

smartcomment stores every value as text made by `repr()` (its default) or by the recorder's encoder,
usually `json.dumps`: a question is `'Where ...?'` with its quotes, a memory entry is JSON text, a
RAG chunk is a JSON string whose newlines are escaped. Comparing or scoring that text reads quotes
and escapes as content, so the importer stores the decoded value and remembers its *spelling*
(`repr`, `json`, `json-utf8`, nested as `repr+json`), which re-creates the exact text on export.
A value spelt some other way (JSON with indentation or sorted keys) is `VERBATIM`: decoded all the
same, with its text kept beside it for the export. Text that spells no value stays as it is.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from typing import Any

_SPELLERS: dict[str, Callable[[Any], str]] = {
    "repr": repr,
    "json": json.dumps,
    "json-utf8": lambda value: json.dumps(value, ensure_ascii=False),
}
_DECODABLE = (str, list, dict, tuple)
#: The spelling of a value whose text no speller reproduces: the importer keeps the text itself.
VERBATIM = "verbatim"
#: Metadata key of that kept text.
VERBATIM_TEXT = "text"
_MAX_DEPTH = 3


def _parse(text: str) -> Any:
    """The literal a text spells (JSON first, then a Python literal), or raise ValueError."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        raise ValueError(text) from None


def _decode_once(text: str) -> tuple[Any, str] | None:
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "'\"[{(":
        return None
    try:
        value = _parse(text)
    except ValueError:
        return None
    if not isinstance(value, _DECODABLE) or not _survives_storage(value):
        return None
    for spelling, speller in _SPELLERS.items():
        try:
            if speller(value) == text:
                return value, spelling
        except (TypeError, ValueError):
            continue
    return value, VERBATIM


def _survives_storage(value: Any) -> bool:
    """Values are stored as JSON: a tuple or an int dict key would come back changed and misspelt."""
    if isinstance(value, str):
        return True
    try:
        return json.loads(json.dumps(value)) == value and type(value) is not tuple
    except (TypeError, ValueError, RecursionError):
        return False


def decode_spelled(text: str) -> tuple[Any, str | None]:
    """The value a stored string spells and how it was spelt; `(text, None)` when it is plain text.

    A decoded string that itself spells a structure (JSON text inside a repr) is decoded again.
    """
    value: Any = text
    spellings: list[str] = []
    while isinstance(value, str) and len(spellings) < _MAX_DEPTH:
        decoded = _decode_once(value)
        if decoded is None:
            break
        value, spelling = decoded
        spellings.append(spelling)
    if VERBATIM in spellings:
        return value, VERBATIM
    return value, "+".join(spellings) or None


def respell(value: Any, spelling: str) -> str:
    """The original text of a value decoded with `decode_spelled` (innermost spelling applied first);
    a VERBATIM value has no spelling to apply: its caller kept the text."""
    if spelling == VERBATIM:
        raise ValueError("a verbatim value is exported from its kept text, not respelt")
    text = value
    for name in reversed(spelling.split("+")):
        text = _SPELLERS[name](text)
    return text
