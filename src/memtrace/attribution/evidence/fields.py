"""How a structured message or memory reads as evidence: its text fields are its text, its time
fields are its date (the '[said on ...]' stamp), and its other fields are neither.

Graphs recorded by other tools (smartcomment under MemBase conventions, OpenAI-style chat logs) keep
a message as a dict such as `{"role", "content", "name", "timestamp"}`, or as that dict's JSON dump.
Read as JSON, its keys, ids and timestamps become evidence words and an escaped newline glues two
words ("\\nBelow" -> "nbelow"); a year found only in the timestamp is then demanded of every memory.
MemBase also appends a message's metadata to its text ("Below is this message's metadata:" followed
by "Speaker Name: ..." lines, or a "Timestamp: ..." line) and renders a speaker as "Speaker Clara
(role: user) says: ...": those lines are fields too, and the speaker is written "Clara: ..." as
memtrace's own messages are.

    read_value({"content": "I adopted Pepper", "name": "Clara", "timestamp": "2024-05-10T09:00"})
    # Reading(text='Clara: I adopted Pepper', when='10 May 2024', sources=())
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ...graph.values import TEXT_KEYS
from ...text import format_date, parse_when

#: The keys whose value is what the message or memory says are `graph.values.TEXT_KEYS`, read in order.
#: Keys whose value is when it was said or written: the message's date, never its words.
TIME_KEYS = (
    "timestamp",
    "time",
    "date",
    "datetime",
    "date_time",
    "created_at",
    "session_date",
    "session_time",
    "said_on",
    "when",
)
#: Keys naming who said it: written before the text ("Clara: ...") as memtrace's messages are.
SPEAKER_KEYS = ("speaker", "name", "sender", "author")
#: Speaker values that are roles, not people: no prefix.
_ROLES = frozenset({"user", "assistant", "system", "human", "ai", "bot", "tool"})

#: A stamp the text already has ('[said on 8 May 2023]', '[on 7 May 2023]'): not added twice.
_STAMPED = re.compile(r"\[(?:said )?on [^\]]+\]")
#: An escaped newline, carriage return or tab kept as two characters in stored text.
_ESCAPE = re.compile(r"\\[nrt]")
#: MemBase's appended metadata: a header line, then 'Label: value' lines.
_META_HEADER = re.compile(r"\bmetadata\s*:\s*$", re.IGNORECASE)
_META_LINE = re.compile(r"^(?P<label>[A-Za-z][A-Za-z _]{0,30}?)\s*:\s*(?P<value>.*)$")
_META_SPEAKER = frozenset({"speaker name", "speaker", "name"})
_META_TIME = frozenset({"timestamp", "time", "date", "session date"})
_META_OTHER = frozenset({"speaker role", "role"})
#: How a dict's dump (or a list of them) starts; a tagged line ('[D1:3] ...') does not.
_RECORD = re.compile(r"\s*(?:\{|\[\s*\{)")
_DATE_LINE = re.compile(r"^\s*(?:timestamp|time|date|session date)\s*:", re.IGNORECASE | re.MULTILINE)
#: MemBase's rendering of a speaker: "Speaker Clara (role: user) says: ...".
_SAYS = re.compile(r"^Speaker (?P<name>[^()\n]{1,60}?) \(role: [^)\n]*\) says: ", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Reading:
    """A value read as evidence: what it says, when (formatted like '10 May 2024'), its provenance."""

    text: str
    when: str | None = None
    #: Message ids the value names as its sources (memtrace's memories keep them): tag markers.
    sources: tuple[str, ...] = ()

    def stamped(self) -> str:
        """The text with its date as the '[said on ...]' stamp, unless it already carries one."""
        if self.when is None or _STAMPED.search(self.text):
            return self.text
        return f"{self.text} [said on {self.when}]"


def unescape(text: str) -> str:
    """Escaped newlines and tabs as the whitespace they stand for, so they never glue two words."""
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: " " if m.group() == "\\t" else "\n", text.replace("\\r\\n", "\n"))


def text_lines(text: str) -> list[str]:
    """A stored text's non-blank lines, each a part: escapes undone, MemBase's "Speaker Clara (role:
    user) says: " written "Clara: ", and a date line ('Timestamp: 2024-02-02T12:40:00') made the
    '[said on ...]' stamp of the line before it, which is the message it dates."""
    text = unescape(text)
    if "(role: " in text:
        text = _SAYS.sub(_said_by, text)
    lines = [line for line in text.split("\n") if line.strip()]
    if not _DATE_LINE.search(text):
        return lines
    merged: list[str] = []
    for line in lines:
        match = _META_LINE.match(line.strip())
        when = _when(match.group("value")) if match and match.group("label").lower() in _META_TIME else None
        if when is None or not merged:
            merged.append(line)
        elif not _STAMPED.search(merged[-1]):
            merged[-1] = f"{merged[-1]} [said on {when}]"
    return merged


def as_record(text: str) -> dict | list | None:
    """The dict (or list of dicts) a string spells as JSON or a Python literal; None for other text.

    Only text shaped like one is parsed, so a long-context window ('[D1:3] ...') costs nothing."""
    if not _RECORD.match(text):
        return None
    stripped = text.strip()
    if stripped[-1] != ("}" if stripped[0] == "{" else "]"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        try:
            value = ast.literal_eval(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        return value
    return None


def read_value(value: Any) -> Reading | None:
    """A dict, a list of dicts, or a string spelling one, read by its fields; None for anything else."""
    if isinstance(value, str):
        record = as_record(value)
        return None if record is None else read_value(record)
    if isinstance(value, dict):
        return read_dict(value)
    if isinstance(value, (list, tuple)) and any(isinstance(item, dict) for item in value):
        readings = [read_value(item) or Reading(_plain(item)) for item in value]
        text = "\n".join(r.stamped() for r in readings if r.text)
        return Reading(text, None, tuple(s for r in readings for s in r.sources))
    return None


def read_text(text: str) -> Reading:
    """Plain message text: escapes undone, MemBase's appended metadata taken out as fields.

    Trailing 'Label: value' lines are metadata only under a '... metadata:' header, or when they
    are all dates ('Timestamp: 2023-09-02T09:15:00'): a closing 'Name: Pepper' line stays text."""
    lines = unescape(text).rstrip().split("\n")
    found: list[tuple[str, str]] = []
    end = len(lines)
    while end > 1 and (match := _META_LINE.match(lines[end - 1].strip())):
        label = match.group("label").strip().lower()
        if label not in _META_SPEAKER | _META_TIME | _META_OTHER:
            break
        found.append((label, match.group("value").strip()))
        end -= 1
    if found and end > 1 and _META_HEADER.search(lines[end - 1]):
        end -= 1
    elif not found or any(label not in _META_TIME or _when(raw) is None for label, raw in found):
        found, end = [], len(lines)
    speaker = next((raw for label, raw in found if label in _META_SPEAKER), None)
    when = next((_when(raw) for label, raw in found if label in _META_TIME and _when(raw)), None)
    body = _SAYS.sub(_said_by, "\n".join(lines[:end]).strip())
    return Reading(_with_speaker(body, speaker), when)


def _said_by(match: re.Match[str]) -> str:
    """'Speaker Clara (role: user) says: ' -> 'Clara: ' (nothing for a role such as 'user')."""
    name = match.group("name").strip()
    return "" if name.lower() in _ROLES else f"{name}: "


def read_dict(value: dict) -> Reading:
    """Text fields are the text (with the speaker before it), the first readable time field the date.
    A dict with no text field reads as its values but its time fields, never as its keys."""
    texts = [value[key] for key in TEXT_KEYS if key in value and value[key] not in (None, "")]
    if texts:
        parts = [_field_text(item) for item in texts]
        inner = read_text("\n".join(p.text for p in parts if p.text))
        speaker = next((value[k] for k in SPEAKER_KEYS if isinstance(value.get(k), str)), None)
        text = _with_speaker(inner.text, speaker)
        when = _first_when(value) or inner.when or next((p.when for p in parts if p.when), None)
    else:
        others = [v for k, v in value.items() if k not in TIME_KEYS]
        text = "\n".join(t for t in (_plain(v) for v in others) if t)
        when = _first_when(value)
    sources = value.get("sources")
    found = tuple(s for s in sources if isinstance(s, str)) if isinstance(sources, list) else ()
    return Reading(text, when, found)


def _field_text(item: Any) -> Reading:
    """One text field's value: text, a nested message, or a list of lines."""
    if isinstance(item, str):
        return read_value(item) or Reading(item)
    reading = read_value(item)
    return reading if reading is not None else Reading(_plain(item))


def _plain(item: Any) -> str:
    """A value without text fields as words: strings and numbers, never keys or time fields."""
    if item is None or isinstance(item, bool):
        return ""
    if isinstance(item, str):
        reading = read_value(item)
        return reading.stamped() if reading is not None else unescape(item)
    if isinstance(item, dict):
        return read_dict(item).stamped()
    if isinstance(item, (list, tuple)):
        return "\n".join(t for t in (_plain(v) for v in item) if t)
    return str(item)


def _with_speaker(text: str, speaker: Any) -> str:
    """'Clara: text' when the speaker is a person the text does not already name first."""
    if not isinstance(speaker, str) or not speaker.strip() or not text:
        return text
    name = " ".join(speaker.split())
    if name.lower() in _ROLES or len(name) > 40 or text.startswith(f"{name}:"):
        return text
    return f"{name}: {text}"


def _first_when(value: dict) -> str | None:
    for key in TIME_KEYS:
        when = _when(value.get(key))
        if when is not None:
            return when
    return None


def _when(raw: Any) -> str | None:
    """A time field as a date ('10 May 2024'): a date string, or epoch seconds or milliseconds."""
    if isinstance(raw, str):
        return _date_of(raw.strip())
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        seconds = raw / 1000 if raw > 1e11 else raw
        if not 1e8 < seconds < 1e10:
            return None
        return format_date(datetime.fromtimestamp(seconds, tz=UTC))
    return None


@functools.lru_cache(maxsize=65_536)
def _date_of(text: str) -> str | None:
    """A date string as a date, cached: every line of a long-context window repeats its day's."""
    when = parse_when(text)
    return format_date(when) if when is not None else None
