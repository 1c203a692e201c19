"""The LLM layer: one client for chat and embeddings over any OpenAI-compatible endpoint.

    from memtrace.llm import make_client, usage_scope
    client = make_client(model="gpt-4.1-mini", workspace="ws/")
    with usage_scope("case q1") as usage:
        reply = client.chat([{"role": "user", "content": "..."}], schema=Facts, name="extract_facts.llm")
    reply.data, usage.input_tokens

Every call is recorded as an `llm` operation of the current run, cached by a hash of the full request
(`<workspace>/llm-cache.db`, record/replay) and counted per run and per case.
"""

from .base import Backend, ChatReply, Completion, Embeddings
from .cache import CACHE_FILENAME, LLMCache, request_key
from .client import DEFAULT_EMBED_MODEL, DEFAULT_MODEL, LLMClient
from .config import make_client
from .errors import CacheMissError, LLMError, LLMOutputError, ResponseFormatRejected
from .openai_backend import OpenAIBackend
from .usage import Usage, UsageScope, current_usage_scope, recorded_usage, run_usage, usage_scope

__all__ = [
    "CACHE_FILENAME",
    "DEFAULT_EMBED_MODEL",
    "DEFAULT_MODEL",
    "Backend",
    "CacheMissError",
    "ChatReply",
    "Completion",
    "Embeddings",
    "LLMCache",
    "LLMClient",
    "LLMError",
    "LLMOutputError",
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
