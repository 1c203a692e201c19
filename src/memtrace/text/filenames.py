"""The one way to turn data (run names, dataset ids) into a file name: it stays in its folder and is valid.

Run names come from imported files and sample ids from datasets, so `../../x` or `rag/sample-0`
must neither escape the target folder nor name a folder that does not exist.
"""

from __future__ import annotations

import re
import unicodedata

#: Characters no file name may hold on some system we run on: separators, controls, Windows' reserved.
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\<>:"|?*]+')
_WINDOWS_RESERVED = {
    "CON",
    "PRN",
    "AUX",
    "NUL",
    *(f"COM{i}" for i in range(1, 10)),
    *(f"LPT{i}" for i in range(1, 10)),
}
#: Bytes kept of a name (file systems allow 255; room is left for a suffix).
MAX_NAME_BYTES = 120


def safe_filename(text: str, *, fallback: str = "unnamed") -> str:
    """`text` as one path component: unsafe characters become `_`, no leading dot, bounded length."""
    name = _UNSAFE.sub("_", unicodedata.normalize("NFC", text)).strip().lstrip(".").strip()
    name = name.encode("utf-8")[:MAX_NAME_BYTES].decode("utf-8", "ignore").rstrip(". ")
    if not name:
        return fallback
    if name.split(".", 1)[0].upper() in _WINDOWS_RESERVED:
        name = f"_{name}"
    return name
