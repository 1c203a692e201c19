"""How recorded values read on a page: a memory's text, a list line by line, anything else as JSON."""

from __future__ import annotations

import json
from typing import Any

from ..graph.values import value_text

#: Keys whose value is the text of a memory record (mem0's `memory`, a document's `text`).
_TEXT_KEYS = ("memory", "text", "content")


def display_text(value: Any) -> str:
    """The words a person reads for a value: the memory text of a record, one line per list item."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in _TEXT_KEYS:
            if isinstance(value.get(key), str):
                return value[key]
        return json.dumps(value, ensure_ascii=False, indent=1, default=str)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "\n".join(value)
    return value_text(value)


def shorten(text: str, width: int = 160) -> str:
    """One line of at most `width` characters."""
    flat = " ".join(text[: 4 * width].split())  # a long-context window is megabytes: cut first
    return flat if len(flat) <= width else flat[: width - 1] + "…"
