"""EverMemOS prompts and the JSON shapes their replies must have.

Kept apart from the pipeline so the tunable texts are easy to read and to diff. Every prompt is a
`str.format` template (literal braces doubled); each names its placeholders in a comment.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

# {history}: the buffered messages, one per line; {new_message}: the message just received.
BOUNDARY_PROMPT = (
    "You segment a conversation into episodes: runs of messages about one topic or event.\n"
    "Decide whether the NEW message starts a new episode, which closes the buffered messages as a "
    "finished episode. Close it on a clear change of topic, a new event, or a long pause; keep "
    "small talk and follow-ups with the episode they belong to.\n\n"
    "Buffered messages:\n{history}\n\nNEW message:\n{new_message}\n\n"
    'Reply with JSON: {{"boundary": true or false, "reason": "a few words"}}'
)

# {date}: the episode's date; {messages}: its messages, one per line.
EPISODE_PROMPT = (
    "Write the episodic memory of this conversation excerpt from {date}: a short third-person "
    "summary (2-5 sentences) that keeps every name, place, number, title and date, and resolves "
    "relative dates ('yesterday', 'last week') to absolute ones using the date given.\n\n"
    "Messages:\n{messages}\n\n"
    'Reply with JSON: {{"title": "a few words", "summary": "the summary"}}'
)

# {date}: the episode's date; {messages}: its messages, one per line.
EVENT_LOG_PROMPT = (
    "List the atomic facts stated in this conversation excerpt from {date}. Each fact is one short, "
    "self-contained third-person sentence naming the person it is about (never 'I' or 'he'), with "
    "relative dates resolved to absolute dates. Skip greetings, questions and small talk.\n\n"
    "Messages:\n{messages}\n\n"
    'Reply with JSON: {{"facts": ["...", "..."]}}'
)

# {date}: the episode's date; {messages}: its messages, one per line.
FORESIGHT_PROMPT = (
    "From this conversation excerpt from {date}, list what the speakers plan, intend or expect to do "
    "later (foresight): one short third-person sentence each, naming the person and, when said, "
    "when it will happen as an absolute date. Return an empty list when there is none.\n\n"
    "Messages:\n{messages}\n\n"
    'Reply with JSON: {{"foresight": ["..."]}}'
)

# {question}: the question; {memories}: the retrieved memories, numbered.
SUFFICIENCY_PROMPT = (
    "You check whether retrieved memories are enough to answer a question about a conversation.\n\n"
    "Question: {question}\n\nRetrieved memories:\n{memories}\n\n"
    "If they contain what the answer needs, reply sufficient=true. Otherwise reply sufficient=false "
    "and give up to 3 short search queries that would find the missing information (other wording, "
    "the people or things involved, the time it happened).\n"
    'Reply with JSON: {{"sufficient": true or false, "reason": "a few words", '
    '"followup_queries": ["..."]}}'
)


class BoundaryReply(BaseModel):
    boundary: bool
    reason: str = ""


class EpisodeReply(BaseModel):
    title: str = ""
    summary: str


class EventLogReply(BaseModel):
    facts: list[str] = Field(default_factory=list)


class ForesightReply(BaseModel):
    foresight: list[str] = Field(default_factory=list)


class SufficiencyReply(BaseModel):
    sufficient: bool
    reason: str = ""
    followup_queries: list[str] = Field(default_factory=list)
