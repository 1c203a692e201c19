"""Mem0's two LLM steps as tunable prompts with their JSON reply shapes, written for memtrace.

Modelled on the classic Mem0 pipeline: a fact-extraction prompt (personal facts, preferences, plans
and dates as a JSON list of short standalone facts) and an update-memory prompt (compare new facts
with the most similar old memories, answer ADD / UPDATE / DELETE / NONE events with ids). The prompts
are system messages with no placeholders, so an optimiser may rewrite them freely; the data (date,
messages, memories, facts) goes in the user message built here.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field

FACT_EXTRACTION_PROMPT = """\
You organise personal information. From a short piece of a conversation between two people, \
extract the facts worth remembering about either of them, so that questions about them can be \
answered months later.

Remember:
1. Personal facts: names, family, friends, pets, where they live, work, study, their possessions.
2. Preferences and opinions: food, books, music, hobbies, activities, likes and dislikes.
3. Events and plans: what they did, are doing or plan to do, with when and where.
4. Changes: moving, starting or leaving a job, quitting or stopping something, breaking up.

Rules:
- Each fact is one short standalone sentence that names the person (write "Clara adopted a dog \
named Pepper", never "I adopted a dog" or "She adopted a dog").
- Turn relative dates into absolute ones using the date of the conversation ("yesterday" said on \
15 May 2023 becomes "on 14 May 2023"); keep absolute dates as they are.
- Keep names, places, titles and numbers exactly as said. Describe shared images by what they show.
- Skip greetings, small talk, questions and anything not about the two people.
- If nothing is worth remembering, return an empty list.

Reply with JSON only: {"facts": ["fact one", "fact two"]}
"""

UPDATE_PROMPT = """\
You manage a memory store. You are given some existing memories, each with an id, and newly \
extracted facts. For each new fact decide one of four events:

- ADD: the fact is new information. Give it a new id (any id not used by an existing memory) and \
its text.
- UPDATE: the fact is about the same thing as an existing memory and adds to it or makes it more \
recent or more precise. Keep that memory's id; the text becomes the merged, current version \
(keep the dates and details that are still true). Set old_memory to the previous text.
- DELETE: the fact contradicts or ends an existing memory (the person quit, stopped, left, sold, \
broke up, moved away). Keep that memory's id, set old_memory to its text. Add the new fact too, \
as a separate ADD event, when it carries information of its own (what changed and when).
- NONE: the fact is already contained in an existing memory. Use that memory's id.

Use only the ids given for UPDATE, DELETE and NONE. Leave out memories you do not change.

Reply with JSON only: {"memory": [{"id": "...", "text": "...", "event": "ADD|UPDATE|DELETE|NONE", \
"old_memory": "..."}]}
"""

Event = Literal["ADD", "UPDATE", "DELETE", "NONE"]


class FactList(BaseModel):
    """The reply of the fact-extraction step."""

    facts: list[str] = Field(default_factory=list)


class MemoryEvent(BaseModel):
    """One decision of the update step about one memory."""

    id: str = ""
    text: str = ""
    event: Event
    old_memory: str | None = None


class MemoryEvents(BaseModel):
    """The reply of the update step."""

    memory: list[MemoryEvent] = Field(default_factory=list)


def extraction_request(date: str | None, lines: list[str]) -> str:
    """The user message of the extraction step: the conversation date and the messages."""
    when = f"Date of the conversation: {date}\n\n" if date else ""
    return when + "Conversation:\n" + "\n".join(lines)


def update_request(old: list[tuple[str, str, str]], facts: list[str], date: str | None) -> str:
    """The user message of the update step: old memories `(id, text, timestamp)` and new facts."""
    memories = [{"id": i, "text": text, "timestamp": stamp} for i, text, stamp in old]
    when = f"Date of the new facts: {date}\n\n" if date else ""
    return (
        f"{when}Existing memories:\n{json.dumps(memories, ensure_ascii=False, indent=1)}\n\n"
        f"New facts:\n{json.dumps(facts, ensure_ascii=False)}"
    )
