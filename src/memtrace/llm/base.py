"""The shapes shared by the client and its backends: a reply, a raw completion, the backend protocol.

A backend only moves requests over the wire (or through a local model). Caching, recording, usage
accounting and JSON validation live once in `LLMClient`, so every backend gets them for free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .usage import Usage

Message = dict[str, str]


@dataclass(slots=True)
class ChatReply:
    """What `LLMClient.chat` returns. `data` is the parsed, validated JSON when a schema or JSON mode
    was asked for (a model instance for a pydantic schema), else None."""

    text: str
    data: Any
    usage: Usage
    cached: bool
    model: str
    finish_reason: str | None = None  # "length": the max_tokens limit cut the reply


@dataclass(slots=True)
class Completion:
    """One raw answer from a backend: text, the token counts the server reported, and why it stopped
    (`finish_reason`: "length" means the `max_tokens` limit cut it)."""

    text: str
    input_tokens: int
    output_tokens: int
    model: str
    finish_reason: str | None = None


@dataclass(slots=True)
class Embeddings:
    """Raw vectors from a backend, one per input text, and the input tokens the server reported."""

    vectors: list[list[float]]
    input_tokens: int
    model: str


@runtime_checkable
class Backend(Protocol):
    """Moves one request to a model. Raises `LLMError` (one readable line) on failure and
    `ResponseFormatRejected` when the server refuses the `response_format` it was sent."""

    name: str
    endpoint: str

    def complete(
        self,
        model: str,
        messages: list[Message],
        *,
        temperature: float,
        max_tokens: int | None,
        response_format: dict[str, Any] | None,
    ) -> Completion: ...

    def embed(self, model: str, texts: list[str]) -> Embeddings: ...

    def close(self) -> None: ...
