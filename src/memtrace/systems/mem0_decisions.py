"""Mem0's update decisions and the text of its memory values, apart from the system's recorded steps.

`decide_offline` is what the update step decides without a model (ADD, UPDATE, DELETE or NONE by the
key words a fact shares with the memories it is compared with); `events_from_reply` reads a model's
decision instead, and `plan_events` turns either into the events as they will apply. The text
helpers read memory values tolerantly, since a replay patch may write any JSON into a unit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..text import tag_lines
from .rules import content_stems

if TYPE_CHECKING:
    from .mem0_config import Mem0Config
    from .mem0_prompts import MemoryEvents

_STAMP = re.compile(r"\s*\[(?:said )?on [^\]]+\]")
#: A fact that ends something ("quit the band", "no longer works at X"); `obj` is what ended.
_ENDS = re.compile(
    r"\b(?:quit|quits|quitting|no longer|stopped|stops|stopping|left|sold|broke up with|broke up|"
    r"moved out of|moved away from|gave up|ended|cancell?ed)\b(?P<obj>[^.,;:!?\[]*)",
    re.I,
)
_CLAUSE_END = re.compile(r"\b(?:and|but|because|so|since|after|before|when|while)\b", re.I)
#: Words that say when or how much, not what: two facts sharing only these are not about one thing.
GENERIC = frozenset(
    content_stems(
        "yesterday today tonight tomorrow ago day days week weeks month months year years last next "
        "still just really lately now also though even much many lot lots thing things time times big "
        "news yes oh well sure pretty one two three four five six seven eight nine ten first"
    )
)
_NUMERAL = re.compile(r"^\d+$")


@dataclass(slots=True)
class Fact:
    """An extracted fact with its recorded variable and (offline) the speaker it is about."""

    text: str
    var: str | None
    owner: str | None
    #: The dialogue ids of the messages the fact came from (its provenance, kept on the memory).
    sources: tuple[str, ...] = ()


def memory_text(value: Any) -> str:
    """The text of a memory value; tolerant, since a replay patch may write any JSON into a unit."""
    if isinstance(value, dict):
        value = value.get("memory")
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def as_texts(value: Any) -> list[str]:
    """A (possibly patched) list of facts or passages as non-empty strings."""
    if value is None:
        return []
    items = value if isinstance(value, list | tuple) else [value]
    texts = [
        memory_text(item.get("text", item.get("memory")) if isinstance(item, dict) else item)
        for item in items
    ]
    return [text.strip() for text in texts if text.strip()]


def body(text: str) -> str:
    """A memory text without its date stamps, so dates never make two facts look alike."""
    return _STAMP.sub("", text)


def key_words(text: str, names: frozenset[str] = frozenset()) -> frozenset[str]:
    """The stems that say what a fact is about: content words minus names, dates and amounts."""
    return frozenset(s for s in content_stems(body(text)) - names - GENERIC if not _NUMERAL.match(s))


def ended(text: str, names: frozenset[str]) -> frozenset[str] | None:
    """What a fact says has ended ("quit the band" -> {band}), or None when it ends nothing."""
    found = _ENDS.search(body(text))
    if found is None:
        return None
    what = _CLAUSE_END.split(found.group("obj"), maxsplit=1)[0]
    return key_words(what, names) or None


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def decide_offline(
    fact: Fact,
    candidates: list[tuple[str | None, str, str | None]],
    names: frozenset[str],
    config: Mem0Config,
) -> list[dict[str, Any]]:
    """Mem0's decision by rules: events for one fact given `(unit, text, owner)` candidates, best first.

    NONE for a fact a memory already holds; DELETE (plus ADD of the fact itself, which says what
    changed and when) for a fact that ends a memory of the same speaker; UPDATE for a close fact about
    the same thing (it replaces a memory it covers, else is merged in as its newest line); else ADD.
    """
    add = {"id": None, "text": fact.text, "event": "ADD"}
    words = key_words(fact.text, names)
    what = ended(fact.text, names)
    if what:
        same = [(u, t) for u, t, owner in candidates if owner == fact.owner and ended(t, names) is None]
        best = max(same, key=lambda c: len(what & key_words(c[1], names)), default=None)
        if best is not None and what & key_words(best[1], names):
            return [{"id": best[0], "text": best[1], "event": "DELETE", "old_memory": best[1]}, add]
    for unit, text, owner in candidates:
        old = key_words(text, names)
        score = dice(words, old)
        if (words and words <= old) or (score >= config.duplicate_threshold and not old < words):
            return [{"id": unit, "text": text, "event": "NONE"}]
        if score >= config.update_threshold and owner == fact.owner and len(words & old) >= 2:
            merged = fact.text if old <= words else "\n".join([*text.splitlines(), fact.text])
            merged = "\n".join(merged.splitlines()[-config.merge_lines :])
            return [{"id": unit, "text": merged, "event": "UPDATE", "old_memory": text}]
    return [add]


def memory_line(entry: Any) -> str:
    """A memory as the answer step reads it: its text with its date stamp (added when it has none)."""
    text = memory_text(entry)
    stamp = entry.get("timestamp") if isinstance(entry, dict) else None
    if _STAMP.search(text.rstrip().rpartition("\n")[2]) or not stamp:
        return text
    return f"{text} [said on {stamp}]"


def context_line(entry: Any) -> str:
    """A memory as the answer's context holds it: `memory_line` behind the ids of the messages it came
    from ('[D1:7,D1:8] ...'), so the context keeps each memory's provenance as long-context lines do."""
    line = memory_line(entry)
    sources = entry.get("sources") if isinstance(entry, dict) else None
    ids = (
        [s for s in sources if isinstance(s, str) and s and not any(c in s for c in " ,[]")]
        if sources
        else []
    )
    return tag_lines(",".join(ids), line) if ids else line


def well_formed_events(value: Any) -> list[dict[str, Any]]:
    """The well-formed events of a (possibly patched) `update_events` value."""
    items = value if isinstance(value, list) else [value]
    return [
        e
        for e in items
        if isinstance(e, dict)
        and e.get("event") in ("ADD", "UPDATE", "DELETE", "NONE")
        and (e["event"] != "ADD" or memory_text(e.get("text")).strip())
    ]


def plan_events(events: list[dict[str, Any]], memories: dict[str, Any], created: int) -> list[dict[str, Any]]:
    """The events as they will apply: ADDs given their new unit ids (`mem-N` after `created`), events
    on units gone dropped.

    Simulated on a copy of the live texts so that the recorded events are exactly what the system's
    `_apply` does (an LLM may UPDATE a unit it also DELETEs).
    """
    texts = {unit: memory_text(value) for unit, value in memories.items()}
    planned = []
    for event in events:
        kind, unit = event["event"], event["id"]
        if kind == "ADD":
            created += 1
            planned.append({**event, "id": f"mem-{created}"})
            continue
        if unit not in texts:
            continue
        old = texts[unit]
        if kind == "UPDATE":
            texts[unit] = event["text"]
        elif kind == "DELETE":
            del texts[unit]
        planned.append({"id": unit, "text": event["text"] or old, "event": kind, "old_memory": old})
    return planned


def events_from_reply(
    reply: MemoryEvents, alias: dict[str, str | None]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The model's events with its short ids ("0", "1", ...) mapped back to units through `alias`, and
    the items that name no known unit (or UPDATE to nothing), kept aside to be recorded as ignored."""
    events: list[dict[str, Any]] = []
    ignored: list[dict[str, Any]] = []
    for item in reply.memory:
        unit = alias.get(item.id.strip())
        if item.event == "ADD" and item.text.strip():
            events.append({"id": None, "text": item.text.strip(), "event": "ADD"})
        elif unit is not None and (item.event != "UPDATE" or item.text.strip()):
            events.append({"id": unit, "text": item.text.strip(), "event": item.event})
        else:
            ignored.append(item.model_dump())
    return events, ignored
