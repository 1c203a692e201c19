"""Errors of the LLM layer: each reads as one line a user can act on, never a transport traceback."""

from __future__ import annotations

from ..graph.errors import MemtraceError


class LLMError(MemtraceError):
    """A model call failed: endpoint unreachable, key rejected, timed out, misconfigured, ..."""


class LLMOutputError(LLMError):
    """The model kept answering with text that is not valid JSON or does not match the schema."""

    def __init__(self, message: str, *, reply: str, attempts: int) -> None:
        self.reply = reply
        self.attempts = attempts
        super().__init__(message)


class CacheMissError(LLMError):
    """Replay (read-only cache) needed a response that was never recorded."""


class ResponseFormatRejected(LLMError):
    """The endpoint refused the `response_format` it was sent; the client falls back to a simpler one."""


class LLMReplyCutError(LLMOutputError):
    """The reply stopped at the `max_tokens` limit (`finish_reason == "length"`) before the JSON closed."""


class MalformedReplyError(LLMError):
    """The endpoint answered 200 with a body the client cannot read (cut JSON, no `choices`)."""


class ContextOverflowError(LLMError):
    """The prompt plus `max_tokens` did not fit the server's context window (llama.cpp: "Context size
    has been exceeded"): the same request fails again, so it is never retried."""


#: Failures of one model call that a run survives: the operation is recorded as failed and the run goes on.
RECOVERABLE_ERRORS: tuple[type[LLMError], ...] = (LLMOutputError, MalformedReplyError, ContextOverflowError)
