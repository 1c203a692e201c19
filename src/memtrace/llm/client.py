"""`LLMClient`: the one interface for chat and embeddings, whatever the backend.

Every call is (1) recorded as an operation of category `llm` nested under the current operation, with
the prompt messages as an input variable (`prompt`) and the reply text as an output (`llm_response`);
(2) answered from the record/replay cache when the identical request was seen before; (3) counted in
the usage scopes of its context (run, case); (4) for JSON output, parsed and validated, with the error
fed back to the model for another try before giving up with `LLMOutputError`.

Every chat call is bounded by `max_tokens` (the client's default unless the call gives one): a weak
model can otherwise write inside a JSON string until its context is full. A reply the limit cut is
reported as cut (`LLMReplyCutError`), not as invalid JSON.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import Any

import numpy as np
from pydantic import BaseModel

from ..errors import LLMError, LLMOutputError, LLMReplyCutError, ResponseFormatRejected
from ..trace import op as trace_op
from . import ahead
from .base import Backend, ChatReply, Completion, Message
from .cache import LLMCache, request_key
from .structured import FORMAT_LEVELS, OutputSpec, output_spec, parse_reply
from .usage import Usage, add_usage

DEFAULT_MODEL = "gpt-4.1-mini"
DEFAULT_EMBED_MODEL = "text-embedding-3-small"
#: Output tokens per chat call unless configured: enough for any answer, extraction or verdict here.
DEFAULT_MAX_TOKENS = 1024

#: The weakest response format level each endpoint needed, shared by every client of that endpoint
#: (a judge client and a system client on one server step down once, not each on its own).
_format_floors: dict[str, int] = {}
_format_lock = threading.Lock()


def forget_response_formats(endpoint: str | None = None) -> None:
    """Forget the format level learnt for `endpoint` (all when None): a new server on that address
    may accept what the old one refused."""
    with _format_lock:
        if endpoint is None:
            _format_floors.clear()
        else:
            _format_floors.pop(endpoint.rstrip("/"), None)


class LLMClient:
    """Chat and embeddings with recording, caching, usage accounting and validated JSON output."""

    def __init__(
        self,
        backend: Backend,
        *,
        model: str = DEFAULT_MODEL,
        embed_model: str = DEFAULT_EMBED_MODEL,
        cache: LLMCache | None = None,
        json_retries: int = 2,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        if max_tokens < 1:
            raise LLMError(
                f"LLM endpoint {backend.endpoint}: max_tokens must be at least 1, got {max_tokens}"
            )
        self.backend = backend
        self.model = model
        self.embed_model = embed_model
        self.cache = cache
        self.json_retries = json_retries
        self.max_tokens = max_tokens
        self._usage = Usage()
        self._lock = threading.Lock()
        #: How to make this client again in another process: the `config.ClientRecipe` that
        #: `make_client` sets (None for a client made otherwise).
        self.recipe: Any = None

    @property
    def usage(self) -> Usage:
        """Everything this client has counted so far (all runs and cases)."""
        with self._lock:
            return self._usage.copy()

    # -- chat -------------------------------------------------------------------------------

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        schema: dict[str, Any] | type[BaseModel] | None = None,
        json_mode: bool = False,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        name: str = "llm.chat",
    ) -> ChatReply:
        """One chat completion, recorded as operation `name`; `data` holds the validated JSON."""
        spec = output_spec(schema, json_mode)
        max_tokens = self.max_tokens if max_tokens is None else max_tokens
        messages = _checked(messages)
        total, rejected = Usage(), []
        with trace_op(name, category="llm") as op:
            op.input(f"{name}.prompt", messages, category="prompt")
            metadata: dict[str, Any] = {
                "model": self.model,
                "backend": self.backend.name,
                "temperature": temperature,
                "max_tokens": max_tokens,
                "json_mode": spec is not None,
                "schema": spec.name if spec is not None and spec.schema is not None else None,
            }
            try:
                reply = self._chat_loop(messages, spec, temperature, max_tokens, name, total, rejected)
            except LLMOutputError as exc:
                op.output(f"{name}.response", exc.reply, category="llm_response")
                raise
            finally:
                cached = total.calls > 0 and total.cached_calls == total.calls
                op.set(**metadata, usage=total.as_dict(), cached=cached, attempts=total.calls)
                if rejected:
                    op.set(rejected=rejected)
            op.set(finish_reason=reply.finish_reason)
            op.output(f"{name}.response", reply.text, category="llm_response")
        return reply

    async def achat(self, messages: list[dict[str, str]], **options: Any) -> ChatReply:
        """`chat` for asyncio code: runs in a worker thread with the caller's context (run, op, usage)."""
        return await asyncio.to_thread(functools.partial(self.chat, messages, **options))

    def _chat_loop(
        self,
        messages: list[Message],
        spec: OutputSpec | None,
        temperature: float,
        max_tokens: int | None,
        name: str,
        total: Usage,
        rejected: list[dict[str, str]],
    ) -> ChatReply:
        """Ask, parse, and on invalid JSON ask again with the problem appended (json_retries times)."""
        conversation = list(messages)
        attempts = 1 + (self.json_retries if spec is not None else 0)
        problem, text = "", ""
        for _ in range(attempts):
            completion, cached = self._complete(conversation, spec, temperature, max_tokens, name)
            delta = Usage(1, completion.input_tokens, completion.output_tokens, int(cached))
            total.add(delta)
            if not ahead.fetching():  # the recorded pass counts it when it is served
                self._count(delta)
            text = completion.text
            all_cached = total.cached_calls == total.calls
            if spec is None:
                return ChatReply(text, None, total, all_cached, completion.model, completion.finish_reason)
            try:
                data = parse_reply(text, spec)
            except ValueError as exc:
                cut = completion.finish_reason == "length"
                problem = (
                    f"the reply was cut at the length limit (max_tokens={max_tokens})" if cut else str(exc)
                )
                rejected.append({"text": _short(text, 2000), "error": problem})
                advice = "Answer again with shorter JSON" if cut else "Answer again with only the JSON"
                conversation = [
                    *conversation,
                    {"role": "assistant", "content": text},
                    {
                        "role": "user",
                        "content": f"Your reply could not be used: {problem}. {advice}, nothing else.",
                    },
                ]
                continue
            return ChatReply(text, data, total, all_cached, completion.model, completion.finish_reason)
        if problem.startswith("the reply was cut"):
            raise LLMReplyCutError(
                f"model {self.model} at {self.backend.endpoint}: {problem} in all {attempts} attempts "
                f"({name}); last reply: {_short(text, 160)!r}",
                reply=text,
                attempts=attempts,
            )
        what = "valid JSON" if spec is None or spec.schema is None else f"JSON matching schema {spec.name!r}"
        raise LLMOutputError(
            f"model {self.model} did not return {what} after {attempts} attempts ({name}): {problem}; "
            f"last reply: {_short(text, 160)!r}",
            reply=text,
            attempts=attempts,
        )

    def _complete(
        self,
        messages: list[Message],
        spec: OutputSpec | None,
        temperature: float,
        max_tokens: int | None,
        name: str,
    ) -> tuple[Completion, bool]:
        """One model answer for the exact request, from the cache when it was recorded before."""
        request = {
            "kind": "chat",
            "endpoint": self.backend.endpoint,  # two servers may serve different models under one name
            "model": self.model,
            "messages": messages,
            "temperature": float(temperature),  # 0 and 0.0 are the same request
            "max_tokens": max_tokens,
            "json": spec is not None,
            "schema": spec.schema if spec is not None else None,
        }
        key = request_key(request)
        if self.cache is not None:
            hit = self.cache.lookup(key, request, name)
            if hit is not None:
                usage = hit.usage
                completion = Completion(
                    text=str(hit.response.get("text", "")),
                    input_tokens=int(usage.get("input_tokens", 0)),
                    output_tokens=int(usage.get("output_tokens", 0)),
                    model=str(hit.response.get("model", self.model)),
                    finish_reason=hit.response.get("finish_reason"),
                )
                return completion, True
        completion = self._send(messages, spec, temperature, max_tokens)
        if self.cache is not None and not ahead.fetching():
            self.cache.save(
                key,
                "chat",
                request,
                {
                    "text": completion.text,
                    "model": completion.model,
                    "finish_reason": completion.finish_reason,
                },
                {"input_tokens": completion.input_tokens, "output_tokens": completion.output_tokens},
            )
        return completion, False

    def _send(
        self, messages: list[Message], spec: OutputSpec | None, temperature: float, max_tokens: int | None
    ) -> Completion:
        """Call the backend, stepping down json_schema -> json_object -> prompt-only when refused."""
        if spec is None:
            return ahead.complete(
                self.backend,
                self.model,
                messages,
                temperature=temperature,
                max_tokens=max_tokens,
                response_format=None,
            )
        endpoint = self.backend.endpoint
        level = max(spec.first_level, _format_floors.get(endpoint, 0))
        while True:
            note = spec.instruction(level)
            wire = _with_system_note(messages, note) if note else messages
            try:
                completion = ahead.complete(
                    self.backend,
                    self.model,
                    wire,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    response_format=spec.response_format(level),
                )
            except ResponseFormatRejected:
                if level + 1 >= len(FORMAT_LEVELS):
                    raise
                level += 1
                continue
            if level > _format_floors.get(endpoint, 0):
                with _format_lock:  # remember only a level that worked, so one odd 400 does not stick
                    _format_floors[endpoint] = max(_format_floors.get(endpoint, 0), level)
            return completion

    # -- embeddings -------------------------------------------------------------------------

    def embed(self, texts: list[str], *, name: str = "llm.embed") -> np.ndarray:
        """Embedding vectors (float32, one row per text); each text is cached on its own."""
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with trace_op(name, category="llm") as op:
            found: dict[str, list[float]] = {}
            tokens, misses = 0, []
            endpoint = self.backend.endpoint
            requests = {
                t: {"kind": "embed", "endpoint": endpoint, "model": self.embed_model, "input": t}
                for t in dict.fromkeys(texts)
            }
            for text, request in requests.items():
                hit = (
                    self.cache.lookup(request_key(request), request, name) if self.cache is not None else None
                )
                if hit is None:
                    misses.append(text)
                else:
                    found[text] = list(hit.response["vector"])
                    tokens += int(hit.usage.get("input_tokens", 0))
            if misses:
                result = self.backend.embed(self.embed_model, misses)
                tokens += result.input_tokens
                share, extra = divmod(result.input_tokens, len(misses))
                for i, (text, vector) in enumerate(zip(misses, result.vectors, strict=True)):
                    found[text] = vector
                    if self.cache is not None:
                        request = requests[text]
                        used = {"input_tokens": share + (1 if i < extra else 0)}
                        self.cache.save(request_key(request), "embed", request, {"vector": vector}, used)
            delta = Usage(1, tokens, 0, int(not misses))
            self._count(delta)
            op.set(
                model=self.embed_model,
                backend=self.backend.name,
                texts=len(texts),
                cache_hits=len(requests) - len(misses),
                usage=delta.as_dict(),
                cached=not misses,
            )
        return np.asarray([found[t] for t in texts], dtype=np.float32)

    async def aembed(self, texts: list[str], *, name: str = "llm.embed") -> np.ndarray:
        """`embed` for asyncio code (a worker thread with the caller's context)."""
        return await asyncio.to_thread(functools.partial(self.embed, texts, name=name))

    # -- housekeeping -----------------------------------------------------------------------

    def _count(self, delta: Usage) -> None:
        with self._lock:
            self._usage.add(delta)
        add_usage(delta)

    def close(self) -> None:
        self.backend.close()
        if self.cache is not None:
            self.cache.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = self.cache.mode if self.cache is not None else "off"
        return f"<LLMClient {self.backend.name} {self.model} at {self.backend.endpoint} cache={mode}>"


def _checked(messages: list[dict[str, str]]) -> list[Message]:
    """Copy the messages and fail early, with one line, on a shape the endpoint would reject."""
    if not messages:
        raise LLMError("chat needs at least one message")
    out: list[Message] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message or "content" not in message:
            raise LLMError(f"chat message {i} must be a dict with 'role' and 'content', got {message!r:.80}")
        out.append(dict(message))
    return out


def _with_system_note(messages: list[Message], note: str) -> list[Message]:
    """Add `note` to the leading system message (or put one first): chat templates want one system turn."""
    if messages and messages[0].get("role") == "system":
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{note}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
