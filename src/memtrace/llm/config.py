"""`make_client`: build an `LLMClient` from arguments, then the environment, then defaults.

Environment: `MEMTRACE_LLM_BACKEND` (default `openai`), `MEMTRACE_LLM_MODEL`, `MEMTRACE_EMBED_MODEL`,
`MEMTRACE_LLM_CACHE` (`read-write`, `read-only`, `off`), `MEMTRACE_LLM_TIMEOUT` (seconds per attempt),
`MEMTRACE_LLM_RETRIES` (retries after the first attempt), `MEMTRACE_LLM_MAX_TOKENS` (output tokens per
chat call), `OPENAI_BASE_URL`, `OPENAI_API_KEY`. A local server without a key works: a dummy key is sent.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import LLMError
from .cache import CACHE_MODES, CacheEntry, LLMCache, check_mode
from .client import DEFAULT_EMBED_MODEL, DEFAULT_MAX_TOKENS, DEFAULT_MODEL, LLMClient

if TYPE_CHECKING:
    from .limiter import Limiters, LimiterTicket
    from .openai_backend import Notice

BACKENDS: tuple[str, ...] = ("openai",)
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 4


def env_number[N: (int, float)](name: str, kind: type[N], default: N) -> N:
    """A number from environment variable `name`, or `default` when unset; one clear line when unreadable."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        raise LLMError(f"environment variable {name}={raw!r} is not a valid {kind.__name__}") from None


def make_client(
    backend: str | None = None,
    *,
    model: str | None = None,
    embed_model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    workspace: str | Path | None = None,
    cache: str | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    max_tokens: int | None = None,
    backoff: float = 0.5,
    max_backoff: float = 30.0,
    max_concurrency: int = 8,
    json_retries: int = 2,
    notify: Notice | bool | None = True,
    limiters: Limiters | None = None,
    cache_upto: int | None = None,
    cache_fallback: Callable[[str], CacheEntry | None] | None = None,
) -> LLMClient:
    """A client for `backend`; responses are cached in `<workspace>/llm-cache.db` when a workspace is given.

    `timeout` is per HTTP attempt (seconds); `max_retries` counts retries after the first attempt on
    429/5xx/connection errors/unreadable replies (a timeout is retried once at most); `max_tokens`
    bounds every chat reply; `notify` gets a line per retry (True: stderr, None/False: silent);
    `limiters` bounds the calls in flight per endpoint together with other clients (default: this
    client's own limit of `max_concurrency`); `cache_upto` hides the cache entries past that mark but
    this client's own and `cache_fallback` answers a miss (llm/cache.py). The client's `recipe` makes
    the same client elsewhere.
    """
    env = os.environ
    backend = backend or env.get("MEMTRACE_LLM_BACKEND") or "openai"
    if backend not in BACKENDS:
        raise LLMError(f"unknown LLM backend {backend!r} (known: {', '.join(BACKENDS)})")
    mode = check_mode(cache or env.get("MEMTRACE_LLM_CACHE") or CACHE_MODES[0])
    if mode == "read-only" and workspace is None:
        raise LLMError("replaying from the LLM cache (read-only) needs a workspace")
    from .openai_backend import OpenAIBackend, print_notice

    transport = OpenAIBackend(
        base_url=base_url or env.get("OPENAI_BASE_URL"),
        api_key=api_key or env.get("OPENAI_API_KEY"),
        timeout=timeout
        if timeout is not None
        else env_number("MEMTRACE_LLM_TIMEOUT", float, DEFAULT_TIMEOUT),
        max_retries=max_retries
        if max_retries is not None
        else env_number("MEMTRACE_LLM_RETRIES", int, DEFAULT_RETRIES),
        backoff=backoff,
        max_backoff=max_backoff,
        max_concurrency=max_concurrency,
        notify=print_notice if notify is True else notify or None,
        limiters=limiters,
    )
    try:
        store = (
            LLMCache(workspace, mode, upto=cache_upto, fallback=cache_fallback)
            if workspace is not None and mode != "off"
            else None
        )
        client = LLMClient(
            transport,
            model=model or env.get("MEMTRACE_LLM_MODEL") or DEFAULT_MODEL,
            embed_model=embed_model or env.get("MEMTRACE_EMBED_MODEL") or DEFAULT_EMBED_MODEL,
            cache=store,
            json_retries=json_retries,
            max_tokens=max_tokens
            if max_tokens is not None
            else env_number("MEMTRACE_LLM_MAX_TOKENS", int, DEFAULT_MAX_TOKENS),
        )
    except BaseException:
        transport.close()
        raise
    client.recipe = ClientRecipe(
        backend=backend,
        model=client.model,
        embed_model=client.embed_model,
        base_url=transport.endpoint,
        api_key=api_key or env.get("OPENAI_API_KEY"),
        timeout=transport.timeout,
        max_retries=transport.max_retries,
        max_tokens=client.max_tokens,
        cache=mode,
        backoff=backoff,
        max_backoff=max_backoff,
        max_concurrency=max_concurrency,
        json_retries=json_retries,
        notify=notify is True,
    )
    return client


@dataclass(frozen=True, slots=True)
class ClientRecipe:
    """The settings `make_client` resolved (arguments, environment, defaults), so a worker process
    or a Ray task makes the same client without the driver's environment or files."""

    backend: str
    model: str
    embed_model: str
    base_url: str
    #: The key the driver used (a remote worker may not have it in its environment); never printed.
    api_key: str | None = field(repr=False)
    timeout: float
    max_retries: int
    max_tokens: int
    cache: str
    backoff: float
    max_backoff: float
    max_concurrency: int
    json_retries: int
    notify: bool
    #: How to reach the limiters the driver shares (None: the client limits itself).
    limiters: LimiterTicket | None = None
    #: Cache entries past this mark are not served unless the client made them (llm/cache.py).
    cache_upto: int | None = None

    def sharing(self, ticket: LimiterTicket | None, cache_upto: int | None = None) -> ClientRecipe:
        """This recipe with its calls counted by the shared limiters behind `ticket`, served from
        the cache only up to `cache_upto`."""
        return dataclasses.replace(self, limiters=ticket, cache_upto=cache_upto)

    def build(self, workspace: str | Path | None) -> LLMClient:
        """The client, caching into `workspace` (a task's scratch workspace, shipped back); a ticket
        that also reaches the driver's cache (`lookup`) answers what the scratch cache misses."""
        limiters = self.limiters.connect() if self.limiters is not None else None
        try:
            return make_client(
                self.backend,
                model=self.model,
                embed_model=self.embed_model,
                base_url=self.base_url,
                api_key=self.api_key,
                workspace=workspace,
                cache=self.cache,
                timeout=self.timeout,
                max_retries=self.max_retries,
                max_tokens=self.max_tokens,
                backoff=self.backoff,
                max_backoff=self.max_backoff,
                max_concurrency=self.max_concurrency,
                json_retries=self.json_retries,
                notify=self.notify,
                limiters=limiters,
                cache_upto=self.cache_upto,
                cache_fallback=getattr(limiters, "lookup", None),
            )
        except BaseException:
            if limiters is not None:
                limiters.close()
            raise
