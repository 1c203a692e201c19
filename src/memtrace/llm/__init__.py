"""The LLM layer: one client for chat and embeddings over any OpenAI-compatible endpoint.

    from memtrace.llm import make_client, usage_scope
    client = make_client(model="gpt-4.1-mini", workspace="ws/")
    with usage_scope("case q1") as usage:
        reply = client.chat([{"role": "user", "content": "..."}], schema=Facts, name="extract_facts.llm")
    reply.data, usage.input_tokens

Every call is recorded as an `llm` operation of the current run, cached by a hash of the full request
(`<workspace>/llm-cache.db`, record/replay) and counted per run and per case. The OpenAI SDK is
imported only when a client is made, so `import memtrace` and CLI start-up stay fast.
"""

from ..errors import (
    RECOVERABLE_ERRORS,
    CacheMissError,
    ContextOverflowError,
    LLMError,
    LLMOutputError,
    LLMReplyCutError,
    MalformedReplyError,
    ResponseFormatRejected,
)
from .base import Backend, ChatReply, Completion, Embeddings
from .cache import CACHE_FILENAME, LLMCache, request_key
from .client import DEFAULT_EMBED_MODEL, DEFAULT_MODEL, LLMClient
from .config import make_client
from .usage import Usage, UsageScope, current_usage_scope, recorded_usage, run_usage, usage_scope

__all__ = [
    "CACHE_FILENAME",
    "DEFAULT_EMBED_MODEL",
    "DEFAULT_MODEL",
    "RECOVERABLE_ERRORS",
    "Backend",
    "CacheMissError",
    "ChatReply",
    "Completion",
    "ContextOverflowError",
    "Embeddings",
    "LLMCache",
    "LLMClient",
    "LLMError",
    "LLMOutputError",
    "LLMReplyCutError",
    "MalformedReplyError",
    "OpenAIBackend",
    "ResponseFormatRejected",
    "Usage",
    "UsageScope",
    "current_usage_scope",
    "make_client",
    "recorded_usage",
    "request_key",
    "run_usage",
    "usage_scope",
]


def __getattr__(name: str) -> object:
    """`OpenAIBackend` on first use: importing it loads the OpenAI SDK (about a second)."""
    if name == "OpenAIBackend":
        from .openai_backend import OpenAIBackend

        return OpenAIBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
