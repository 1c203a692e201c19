"""`make_client`: build an `LLMClient` from arguments, then the environment, then defaults.

Environment: `MEMTRACE_LLM_BACKEND` (default `openai`), `MEMTRACE_LLM_MODEL`, `MEMTRACE_EMBED_MODEL`,
`MEMTRACE_LLM_CACHE` (`read-write`, `read-only`, `off`), `OPENAI_BASE_URL`, `OPENAI_API_KEY`.
A local server without a key works: a dummy key is sent.
"""

from __future__ import annotations

import os
from pathlib import Path

from .cache import CACHE_MODES, LLMCache, check_mode
from .client import DEFAULT_EMBED_MODEL, DEFAULT_MODEL, LLMClient
from .errors import LLMError

BACKENDS: tuple[str, ...] = ("openai",)


def make_client(
    backend: str | None = None,
    *,
    model: str | None = None,
    embed_model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    workspace: str | Path | None = None,
    cache: str | None = None,
    timeout: float = 60.0,
    max_retries: int = 4,
    backoff: float = 0.5,
    max_backoff: float = 30.0,
    max_concurrency: int = 8,
    json_retries: int = 2,
) -> LLMClient:
    """A client for `backend`; responses are cached in `<workspace>/llm-cache.db` when a workspace is given.

    `timeout` is per HTTP attempt (seconds); `max_retries` counts retries after the first attempt on
    429/5xx/timeouts/connection errors; `max_concurrency` bounds requests in flight across threads.
    """
    env = os.environ
    backend = backend or env.get("MEMTRACE_LLM_BACKEND") or "openai"
    if backend not in BACKENDS:
        raise LLMError(f"unknown LLM backend {backend!r} (known: {', '.join(BACKENDS)})")
    mode = check_mode(cache or env.get("MEMTRACE_LLM_CACHE") or CACHE_MODES[0])
    if mode == "read-only" and workspace is None:
        raise LLMError("replaying from the LLM cache (read-only) needs a workspace")
    from .openai_backend import OpenAIBackend

    transport = OpenAIBackend(
        base_url=base_url or env.get("OPENAI_BASE_URL"),
        api_key=api_key or env.get("OPENAI_API_KEY"),
        timeout=timeout,
        max_retries=max_retries,
        backoff=backoff,
        max_backoff=max_backoff,
        max_concurrency=max_concurrency,
    )
    try:
        store = LLMCache(workspace, mode) if workspace is not None and mode != "off" else None
    except BaseException:
        transport.close()
        raise
    return LLMClient(
        transport,
        model=model or env.get("MEMTRACE_LLM_MODEL") or DEFAULT_MODEL,
        embed_model=embed_model or env.get("MEMTRACE_EMBED_MODEL") or DEFAULT_EMBED_MODEL,
        cache=store,
        json_retries=json_retries,
    )
