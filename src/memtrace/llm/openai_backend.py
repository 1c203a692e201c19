"""The `openai` backend: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

The SDK's own retries are turned off so that this module decides: 429, 5xx, timeouts and connection
errors are retried with exponential backoff and jitter (a server's Retry-After wins when present);
anything else fails at once. Every failure becomes one `LLMError` line that names the endpoint.

Concurrency: one `threading.BoundedSemaphore` per backend bounds the requests in flight across all
threads that share the client (it is held per HTTP attempt, not while backing off). The client is
synchronous; asyncio code calls `await client.achat(...)`, which runs the call in a worker thread via
`asyncio.to_thread` (so contextvars — run, op, usage scope — travel along) under the same semaphore.
"""

from __future__ import annotations

import email.utils
import os
import random
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import openai

from .base import Completion, Embeddings, Message
from .errors import LLMError, ResponseFormatRejected

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Sent when no key is configured: local servers ignore it, the SDK refuses to run without one.
NO_KEY = "no-key"


class OpenAIBackend:
    """Chat completions and embeddings over HTTP through the `openai` SDK."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_retry_after: float = 60.0,
        max_concurrency: int = 8,
        embed_batch_size: int = 256,
    ) -> None:
        self.endpoint = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key = api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.embed_batch_size = embed_batch_size
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._random = random.Random()
        self._client = openai.OpenAI(base_url=self.endpoint, api_key=key, timeout=timeout, max_retries=0)

    def complete(
        self,
        model: str,
        messages: list[Message],
        *,
        temperature: float,
        max_tokens: int | None,
        response_format: dict[str, Any] | None,
    ) -> Completion:
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if response_format is not None:
            kwargs["response_format"] = response_format
        response = self._call(
            lambda: self._client.chat.completions.create(**kwargs),
            model,
            format_sent=response_format is not None,
        )
        try:
            message = response.choices[0].message if response.choices else None
            text = (message.content if message is not None else None) or ""
            usage = response.usage
            return Completion(
                text=text,
                input_tokens=int(usage.prompt_tokens or 0) if usage else 0,
                output_tokens=int(usage.completion_tokens or 0) if usage else 0,
                model=response.model or model,
            )
        except (AttributeError, TypeError, IndexError) as exc:
            raise LLMError(f"LLM endpoint {self.endpoint} sent a malformed chat response: {exc}") from None

    def embed(self, model: str, texts: list[str]) -> Embeddings:
        vectors: list[list[float]] = []
        tokens = 0
        reported = model
        for start in range(0, len(texts), self.embed_batch_size):
            batch = texts[start : start + self.embed_batch_size]
            response = self._call(lambda b=batch: self._client.embeddings.create(model=model, input=b), model)
            try:
                rows = sorted(response.data, key=lambda d: d.index)
                vectors.extend(list(row.embedding) for row in rows)
                tokens += int(response.usage.prompt_tokens or 0) if response.usage else 0
                reported = response.model or model
            except (AttributeError, TypeError) as exc:
                raise LLMError(
                    f"LLM endpoint {self.endpoint} sent a malformed embeddings response: {exc}"
                ) from None
        if len(vectors) != len(texts):
            raise LLMError(
                f"LLM endpoint {self.endpoint} returned {len(vectors)} embeddings for {len(texts)} texts"
            )
        return Embeddings(vectors, tokens, reported)

    def close(self) -> None:
        self._client.close()

    # -- retries and errors -----------------------------------------------------------------

    def _call[T](self, fn: Callable[[], T], model: str, *, format_sent: bool = False) -> T:
        """Run one request with retries; translate SDK exceptions into one-line `LLMError`s."""
        attempt = 0
        while True:
            try:
                with self._slots:
                    return fn()
            except openai.APIStatusError as exc:
                status = exc.status_code
                if format_sent and status in (400, 422):
                    problem = f"rejected the response format ({status}): {_message(exc)}"
                    raise ResponseFormatRejected(f"LLM endpoint {self.endpoint} {problem}") from None
                if status != 429 and status < 500:
                    raise self._status_error(exc, model) from None
                failure: openai.APIError = exc
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                failure = exc
            if attempt >= self.max_retries:
                raise self._final_error(failure, model, attempt + 1) from None
            time.sleep(self._delay(attempt, failure))
            attempt += 1

    def _delay(self, attempt: int, failure: openai.APIError) -> float:
        """Seconds to wait: the server's Retry-After when given, else exponential backoff with jitter."""
        if isinstance(failure, openai.APIStatusError):
            after = retry_after(failure.response.headers)
            if after is not None:
                return min(after, self.max_retry_after)
        base = min(self.max_backoff, self.backoff * 2**attempt)
        return base / 2 + self._random.uniform(0, base / 2)

    def _status_error(self, exc: openai.APIStatusError, model: str) -> LLMError:
        status, where = exc.status_code, f"LLM endpoint {self.endpoint}"
        if status == 401:
            return LLMError(f"{where} rejected the API key (401): set OPENAI_API_KEY or pass api_key")
        if status == 403:
            return LLMError(f"{where} denied access (403): {_message(exc)}")
        if status == 404:
            return LLMError(f"{where} answered 404 for model {model!r}: {_message(exc)}")
        return LLMError(f"{where} refused the request ({status}): {_message(exc)}")

    def _final_error(self, failure: openai.APIError, model: str, attempts: int) -> LLMError:
        where, tries = f"LLM endpoint {self.endpoint}", f"{attempts} attempt{'s' * (attempts > 1)}"
        if isinstance(failure, openai.APITimeoutError):
            return LLMError(f"{where} timed out after {self.timeout:g}s ({tries})")
        if isinstance(failure, openai.APIConnectionError):
            return LLMError(f"{where} unreachable: {_connection_reason(failure)} ({tries})")
        assert isinstance(failure, openai.APIStatusError)
        if failure.status_code == 429:
            return LLMError(f"{where} is rate limiting (429) after {tries}: {_message(failure)}")
        return LLMError(f"{where} failed with {failure.status_code} after {tries}: {_message(failure)}")


def retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date), or None."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _message(exc: openai.APIStatusError) -> str:
    """The server's error message on one line, shortened."""
    body = exc.body
    text = body.get("message") if isinstance(body, dict) else None
    text = str(text or exc.message or "no details")
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:299] + "…"


def _connection_reason(exc: BaseException) -> str:
    """The root cause of a connection failure in a few words (connection refused, host not found)."""
    cause: BaseException | None = exc
    seen: set[int] = set()
    last = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return "host not found"
        last = cause
        cause = cause.__cause__ or cause.__context__
    text = " ".join(str(last).split()) or type(last).__name__
    return text[:200]
