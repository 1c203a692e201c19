"""Word-level diff of two texts, for a memory unit's versions and the memory-state diff."""

from __future__ import annotations

import difflib
import re
from typing import Literal

Segment = tuple[Literal["same", "removed", "added"], str]

_TOKENS = re.compile(r"\s+|[^\s]+")


def word_diff(old: str, new: str) -> list[Segment]:
    """Segments that read as the new text with removed words struck and added words marked.

    Whitespace is kept as its own token so the segments join back into either text exactly.
    """
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    segments: list[Segment] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            _append(segments, "same", "".join(a[i1:i2]))
            continue
        if tag in ("delete", "replace"):
            _append(segments, "removed", "".join(a[i1:i2]))
        if tag in ("insert", "replace"):
            _append(segments, "added", "".join(b[j1:j2]))
    return segments


def _append(segments: list[Segment], kind: Literal["same", "removed", "added"], text: str) -> None:
    if not text:
        return
    if segments and segments[-1][0] == kind:
        segments[-1] = (kind, segments[-1][1] + text)
    else:
        segments.append((kind, text))
