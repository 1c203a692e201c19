"""The `openai` backend: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

The SDK's own retries are turned off so that this module decides: 429, 5xx, connection errors and
unreadable 200 replies are retried with exponential backoff and jitter (a server's Retry-After wins
when present), a timeout at most once (a hung server would otherwise mean minutes of silence), and
configuration errors (no scheme in the URL, unknown host or model) never. A call's deadline is what
its attempts may take (the timeout per attempt times the attempts): no wait runs past it, and a
server asking to wait longer (Retry-After: 86400) gets no retry, the error saying what it asked.
Each retry prints a notice; every failure becomes one `LLMError` line that names the endpoint.

Concurrency: a limiter (llm/limiter.py) bounds the requests in flight to the endpoint; it is held per
HTTP attempt, not while backing off. By default each backend has its own; the CLI gives every client
of a command one shared per endpoint, served to worker processes too, so `--concurrency` counts the
calls of all workers. A 429 or a Retry-After moves the limiter's "not before" time before the slot is
given back, so every caller waits, not only the one that was told. The client is synchronous;
asyncio code calls `await client.achat(...)`, which runs the call in a worker thread via
`asyncio.to_thread` (so contextvars — run, op, usage scope — travel along) under the same limiter.
"""

from __future__ import annotations

import email.utils
import json
import os
import random
import re
import socket
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import openai

from ..errors import ContextOverflowError, LLMError, MalformedReplyError, ResponseFormatRejected
from .base import Completion, Embeddings, Message
from .limiter import Limiter, Limiters, SlotLimiter

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Sent when no key is configured: local servers ignore it, the SDK refuses to run without one.
NO_KEY = "no-key"
#: An error message that names the response format: the server refused it, whatever the status
#: (llama-cpp-python answers `json_schema` with a 500 "Input should be 'text' or 'json_object'").
_FORMAT_REFUSAL = re.compile(r"response_format|json_schema|json_object", re.IGNORECASE)
#: An error message saying the model does not exist: a configuration error, never worth a retry.
_MODEL_MISSING = re.compile(
    r"model\b.{0,120}\b(?:not found|does not exist)|unknown model|no such model", re.IGNORECASE | re.DOTALL
)

#: A request too long for the server's context window (llama.cpp's 400 and 500, vLLM's, OpenAI's).
_CONTEXT_OVERFLOW = re.compile(
    r"context size has been exceeded|exceeds the available context|maximum context length"
    r"|context_length_exceeded",
    re.IGNORECASE,
)

Notice = Callable[[str], None]
#: Seconds a slot stays leased beyond the per-attempt timeout before it is taken back (a caller that
#: died mid-call must not hold it for ever).
_LEASE_SLACK = 30.0


def print_notice(line: str) -> None:
    """The default retry notice: one line on stderr, so a slow endpoint is never silent."""
    print(f"memtrace: {line}", file=sys.stderr, flush=True)


class _Unreadable(Exception):
    """A 200 reply whose content is not a usable answer (internal: retried, then `MalformedReplyError`)."""


def checked_base_url(url: str) -> str:
    """`url` without a trailing slash; one clear line when it cannot be an HTTP endpoint."""
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise LLMError(f"LLM endpoint {url!r} is not an http:// or https:// URL (e.g. http://{url})")
    return url


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
        notify: Notice | None = print_notice,
        limiters: Limiters | None = None,
    ) -> None:
        """`limiters` shares one limiter per endpoint between clients (and processes); without it
        this backend bounds its own calls to `max_concurrency`."""
        self.endpoint = checked_base_url(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        if timeout <= 0:
            raise LLMError(f"LLM endpoint {self.endpoint}: the timeout must be positive, got {timeout:g}")
        if max_retries < 0:
            raise LLMError(f"LLM endpoint {self.endpoint}: retries cannot be negative, got {max_retries}")
        key = api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.embed_batch_size = embed_batch_size
        self.notify = notify
        self._limiters = limiters
        self.limiter: Limiter = (
            limiters.limiter(self.endpoint) if limiters is not None else SlotLimiter(max_concurrency)
        )
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

        def read(response: Any) -> Completion:
            choices = getattr(response, "choices", None)
            if not isinstance(choices, list):
                raise _Unreadable("a reply without `choices`")
            if not choices or getattr(choices[0], "message", None) is None:
                raise _Unreadable("a reply with no message in `choices`")
            usage = getattr(response, "usage", None)
            try:
                return Completion(
                    text=choices[0].message.content or "",
                    input_tokens=int(usage.prompt_tokens or 0) if usage else 0,
                    output_tokens=int(usage.completion_tokens or 0) if usage else 0,
                    model=getattr(response, "model", None) or model,
                    finish_reason=getattr(choices[0], "finish_reason", None),
                )
            except (AttributeError, TypeError, ValueError) as exc:
                raise _Unreadable(f"a malformed chat reply ({exc})") from None

        return self._call(
            lambda: self._client.chat.completions.create(**kwargs),
            model,
            read,
            format_sent=response_format is not None,
        )

    def embed(self, model: str, texts: list[str]) -> Embeddings:
        vectors: list[list[float]] = []
        tokens = 0
        reported = model

        def read(response: Any) -> Any:
            if not isinstance(getattr(response, "data", None), list):
                raise _Unreadable("an embeddings reply without `data`")
            return response

        for start in range(0, len(texts), self.embed_batch_size):
            batch = texts[start : start + self.embed_batch_size]
            response = self._call(
                lambda b=batch: self._client.embeddings.create(model=model, input=b), model, read
            )
            try:
                rows = sorted(response.data, key=lambda d: d.index)
                vectors.extend(list(row.embedding) for row in rows)
                tokens += int(response.usage.prompt_tokens or 0) if response.usage else 0
                reported = response.model or model
            except (AttributeError, TypeError) as exc:
                raise MalformedReplyError(
                    f"LLM endpoint {self.endpoint} sent a malformed embeddings response: {exc}"
                ) from None
        if len(vectors) != len(texts):
            raise LLMError(
                f"LLM endpoint {self.endpoint} returned {len(vectors)} embeddings for {len(texts)} texts"
            )
        return Embeddings(vectors, tokens, reported)

    def close(self) -> None:
        self._client.close()
        if self._limiters is not None:
            self._limiters.close()

    # -- retries and errors -----------------------------------------------------------------

    def _call[T, R](
        self, fn: Callable[[], R], model: str, read: Callable[[R], T], *, format_sent: bool = False
    ) -> T:
        """Run one request with retries; translate SDK exceptions into one-line `LLMError`s."""
        attempt = timeouts = 0
        budget = self.timeout * (self.max_retries + 1)
        deadline = time.monotonic() + budget
        while True:
            lease = self.limiter.acquire(self.timeout + _LEASE_SLACK)
            try:
                try:
                    return read(fn())
                except openai.APIStatusError as exc:
                    status, message = exc.status_code, _message(exc)
                    if _CONTEXT_OVERFLOW.search(message):
                        raise ContextOverflowError(
                            f"LLM endpoint {self.endpoint} cannot fit the request in its context window "
                            f"({status}: {message}); give the server a larger context or lower --max-tokens"
                        ) from None
                    if format_sent and (status in (400, 422) or _FORMAT_REFUSAL.search(message)):
                        problem = f"rejected the response format ({status}): {message}"
                        raise ResponseFormatRejected(f"LLM endpoint {self.endpoint} {problem}") from None
                    if (status != 429 and status < 500) or _MODEL_MISSING.search(message):
                        raise self._status_error(exc, model) from None
                    failure: Exception = exc
                except openai.APITimeoutError as exc:
                    failure, timeouts = exc, timeouts + 1
                    if timeouts > 1:  # a hung server stays hung: one more try, never five
                        raise self._final_error(failure, model, attempt + 1) from None
                except openai.APIConnectionError as exc:
                    if _connection_reason(exc) == "host not found":
                        raise self._final_error(exc, model, attempt + 1) from None
                    failure = exc
                except json.JSONDecodeError as exc:  # the SDK could not parse a 200 body: it was cut
                    failure = _Unreadable(f"a reply body that is not complete JSON ({exc})")
                except _Unreadable as exc:
                    failure = exc
                asked = _asked_wait(failure)
                if attempt >= self.max_retries:
                    raise self._final_error(failure, model, attempt + 1, asked) from None
                left = deadline - time.monotonic()
                if (asked is not None and asked > left) or left <= 0:
                    past = f"past this call's deadline ({budget:g}s: {self.timeout:g}s per attempt"
                    past += f" x {self.max_retries + 1} attempts); no retry"
                    raise self._final_error(failure, model, attempt + 1, asked, past) from None
                delay = min(self._delay(attempt, asked), left)
                shared = asked is not None or _is_rate_limit(failure)
                if shared:  # told before the slot is free again, so no one slips in meanwhile
                    self.limiter.back_off(delay)
            finally:
                self.limiter.release(lease)
            if self.notify is not None:
                self.notify(
                    f"LLM endpoint {self.endpoint} {self._problem(failure)}{_asked(asked)}; "
                    f"retry {attempt + 1} of {self.max_retries} in {delay:.1f}s"
                )
            if not shared:  # a shared wait is served by the limiter: the next acquire waits it out
                time.sleep(delay)
            attempt += 1

    def _delay(self, attempt: int, asked: float | None) -> float:
        """Seconds to wait: the server's Retry-After when given, else exponential backoff with jitter."""
        if asked is not None:
            return min(asked, self.max_retry_after)
        base = min(self.max_backoff, self.backoff * 2**attempt)
        return base / 2 + self._random.uniform(0, base / 2)

    def _status_error(self, exc: openai.APIStatusError, model: str) -> LLMError:
        status, where = exc.status_code, f"LLM endpoint {self.endpoint}"
        if status == 401:
            return LLMError(f"{where} rejected the API key (401): set OPENAI_API_KEY or pass api_key")
        if status == 403:
            return LLMError(f"{where} denied access (403): {_message(exc)}")
        if status == 404 or _MODEL_MISSING.search(_message(exc)):
            return LLMError(f"{where} does not serve model {model!r} ({status}): {_message(exc)}")
        return LLMError(f"{where} refused the request ({status}): {_message(exc)}")

    def _problem(self, failure: Exception) -> str:
        """What went wrong in a few words (for retry notices and the final error)."""
        if isinstance(failure, openai.APITimeoutError):
            return f"timed out after {self.timeout:g}s"
        if isinstance(failure, openai.APIConnectionError):
            reason = _connection_reason(failure)
            if reason in ("connection refused", "host not found"):
                return f"unreachable: {reason}"
            return f"dropped the connection: {reason}"
        if isinstance(failure, openai.APIStatusError):
            if failure.status_code == 429:
                return f"is rate limiting (429): {_message(failure)}"
            return f"failed with {failure.status_code}: {_message(failure)}"
        return f"sent {failure}"

    def _final_error(
        self, failure: Exception, model: str, attempts: int, asked: float | None = None, why: str = ""
    ) -> LLMError:
        tries = f"{attempts} attempt{'s' * (attempts > 1)}"
        line = f"LLM endpoint {self.endpoint} {self._problem(failure)} ({tries}){_asked(asked)}"
        line += f", {why}" if why else ""
        return MalformedReplyError(line) if isinstance(failure, _Unreadable) else LLMError(line)


def _is_rate_limit(failure: Exception) -> bool:
    return isinstance(failure, openai.APIStatusError) and failure.status_code == 429


def _asked_wait(failure: Exception) -> float | None:
    """The seconds a failed reply's Retry-After header asks the client to wait, or None."""
    if isinstance(failure, openai.APIStatusError):
        return retry_after(failure.response.headers)
    return None


def _asked(seconds: float | None) -> str:
    """'; the server asked to wait 86400s (24.0h, Retry-After)', or '' when it asked nothing."""
    if seconds is None:
        return ""
    if seconds >= 3600:
        readable = f"{seconds:.0f}s ({seconds / 3600:.1f}h, Retry-After)"
    elif seconds >= 120:
        readable = f"{seconds:.0f}s ({seconds / 60:.0f} min, Retry-After)"
    else:
        readable = f"{seconds:g}s (Retry-After)"
    return f"; the server asked to wait {readable}"


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
