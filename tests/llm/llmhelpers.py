"""A scripted OpenAI-compatible HTTP server (a test double) for tests that need a real endpoint.

Tests of the LLM layer, of the traced systems and of the attribution agent talk to it over real HTTP
through the `openai` SDK, so retries, timeouts, status codes and headers behave as in production.

    with ScriptedOpenAIServer() as server:
        server.enqueue(Reply.error(429, headers={"Retry-After": "0.1"}), "ok")
        client = scripted_client(server)
        client.chat([{"role": "user", "content": "hi"}]).text  # -> "ok" after one retry

Chat requests take the next scripted reply from the queue, or call `server.default` when it is empty.
Embedding requests take from `server.embed_queue`, or get deterministic vectors from `fake_vector`.

Behaviours of real servers it reproduces: llama-cpp-python refusing `json_schema` with a 500
(`reject_status=500`, `reject_message=LLAMA_CPP_PYTHON_REFUSAL`), a reply cut by `max_tokens`
(`Reply.cut`), a 200 whose JSON body stops short (`Reply.truncated_body`) or has no `choices`
(`Reply.without_choices`), and a hung endpoint (`Reply.slow`).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import memtrace as mt
from memtrace.graph import Operation
from memtrace.llm import LLMClient, make_client
from memtrace.llm.client import forget_response_formats

EMBED_DIM = 8
#: What llama-cpp-python 0.3.x answers (HTTP 500) to `response_format: {"type": "json_schema"}`.
LLAMA_CPP_PYTHON_REFUSAL = (
    "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]"
)


@dataclass
class Reply:
    """One scripted answer: a chat text (200) or an error status, optionally after a delay."""

    text: str = "ok"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: dict[str, Any] | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    finish_reason: str = "stop"
    raw: bytes | None = None  # sent as the body as is (a broken reply), overriding everything else
    choices: bool = True

    @classmethod
    def cut(cls, text: str) -> Reply:
        """A reply the server stopped at `max_tokens` (`finish_reason: "length"`)."""
        return cls(text=text, finish_reason="length")

    @classmethod
    def truncated_body(cls, keep: int = 40) -> Reply:
        """A 200 whose JSON body ends after `keep` bytes (a proxy or server that died mid-reply)."""
        whole = json.dumps({"id": "x", "object": "chat.completion", "choices": [{"index": 0}]})
        return cls(raw=whole[:keep].encode())

    @classmethod
    def without_choices(cls) -> Reply:
        """A 200 chat completion without `choices` (seen from misconfigured proxies)."""
        return cls(choices=False)

    @classmethod
    def error(
        cls, status: int, message: str = "scripted error", headers: dict[str, str] | None = None
    ) -> Reply:
        """An OpenAI-style error body with `status`."""
        body = {"error": {"message": message, "type": "scripted", "code": status}}
        return cls(text="", status=status, headers=dict(headers or {}), body=body)

    @classmethod
    def slow(cls, seconds: float, text: str = "slow") -> Reply:
        """A reply that arrives only after `seconds` (to trip client timeouts)."""
        return cls(text=text, delay=seconds)


@dataclass
class SeenRequest:
    """What the server received: path, headers and the parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def response_format(self) -> dict[str, Any] | None:
        return self.body.get("response_format")


def fake_vector(text: str, dim: int = EMBED_DIM) -> list[float]:
    """A deterministic unit-ish vector from a text's hash, so equal texts embed equally."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(b - 128) / 128 for b in digest[:dim]]


def echo_reply(body: dict[str, Any]) -> Reply:
    """The default chat reply: `echo: <last user message>`."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return Reply(text=f"echo: {users[-1]['content'] if users else ''}")


class ScriptedOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1 (random port) answering from a script; a test double."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        reject_json_schema: bool = False,
        reject_json_object: bool = False,
        reject_status: int = 400,
        reject_message: str | None = None,
        default: Callable[[dict[str, Any]], Reply | str] = echo_reply,
    ) -> None:
        self.api_key = api_key
        self.reject_json_schema = reject_json_schema
        self.reject_json_object = reject_json_object
        self.reject_status = reject_status
        self.reject_message = reject_message
        self.default = default
        self.queue: deque[Reply | str] = deque()
        self.embed_queue: deque[Reply] = deque()
        self.requests: list[SeenRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)
        self.clients: list[LLMClient] = []  # closed with the server

    @property
    def url(self) -> str:
        """The base URL to give the client (ends in /v1)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def enqueue(self, *replies: Reply | str) -> None:
        """Script the next chat replies in order (a str is a 200 reply with that text)."""
        with self._lock:
            self.queue.extend(replies)

    @property
    def chat_requests(self) -> list[SeenRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def embed_requests(self) -> list[SeenRequest]:
        return [r for r in self.requests if r.path.endswith("/embeddings")]

    @property
    def request_count(self) -> int:
        return len(self.requests)

    def start(self) -> ScriptedOpenAIServer:
        # a port reused from an earlier test's server must not inherit the format level it forced
        forget_response_formats(self.url)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        for client in self.clients:
            client.close()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering ---------------------------------------------------------------------------

    def answer(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict, dict | bytes]:
        """(status, headers, JSON body) for one request; runs in the handler thread."""
        with self._lock:
            self.requests.append(SeenRequest(path, headers, body))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return self._route(path, headers, body)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _route(
        self, path: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict, dict | bytes]:
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {}, Reply.error(401, "Incorrect API key provided").body or {}
        if path.endswith("/embeddings"):
            return self._embeddings(body)
        if path.endswith("/chat/completions"):
            return self._chat(body)
        return 404, {}, Reply.error(404, f"no route {path}").body or {}

    def _next(self, queue: deque, fallback: Callable[[], Reply | str | None]) -> Reply | None:
        with self._lock:
            item = queue.popleft() if queue else None
        if item is None:
            item = fallback()
        return Reply(text=item) if isinstance(item, str) else item

    def _wait(self, reply: Reply) -> None:
        if reply.delay:
            self._stopping.wait(reply.delay)

    def _chat(self, body: dict[str, Any]) -> tuple[int, dict, dict | bytes]:
        kind = (body.get("response_format") or {}).get("type")
        if (kind == "json_schema" and self.reject_json_schema) or (
            kind == "json_object" and self.reject_json_object
        ):
            message = self.reject_message or f"response_format {kind} is not supported"
            return self.reject_status, {}, Reply.error(self.reject_status, message).body or {}
        reply = self._next(self.queue, lambda: self.default(body))
        assert reply is not None
        self._wait(reply)
        if reply.raw is not None:
            return reply.status, reply.headers, reply.raw
        if reply.status != 200:
            return reply.status, reply.headers, reply.body or {}
        prompt_tokens = reply.input_tokens
        if prompt_tokens is None:
            prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        completion_tokens = reply.output_tokens
        if completion_tokens is None:
            completion_tokens = len(reply.text.split())
        payload = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        if not reply.choices:
            del payload["choices"]
        return 200, reply.headers, payload

    def _embeddings(self, body: dict[str, Any]) -> tuple[int, dict, dict]:
        reply = self._next(self.embed_queue, lambda: None)
        if reply is not None:
            self._wait(reply)
            if reply.status != 200:
                return reply.status, reply.headers, reply.body or {}
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else texts
        tokens = sum(len(str(t).split()) for t in texts)
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)} for i, t in enumerate(texts)]
        payload = {
            "object": "list",
            "data": data,
            "model": body.get("model", "scripted-embed"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        return 200, {}, payload


def _handler_for(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in two writes

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, extra, payload = server.answer(self.path, headers, body)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler


def llm_ops(workspace: Path | str, run: str) -> list[Operation]:
    """The recorded `llm` operations of a run, in seq order (the workspace is closed again)."""
    with mt.open(workspace) as ws:
        return ws.graph(run).ops_by_category("llm")


def scripted_client(
    server: ScriptedOpenAIServer, workspace: Path | str | None = None, **options: Any
) -> LLMClient:
    """A client for `server` with tiny timeouts and backoffs so failure tests stay fast."""
    settings: dict[str, Any] = {
        "model": "scripted-model",
        "base_url": server.url,
        "api_key": server.api_key,
        "workspace": workspace,
        "timeout": 2.0,
        "max_retries": 2,
        "backoff": 0.001,
        "max_backoff": 0.01,
    }
    settings.update(options)
    client = make_client("openai", **settings)
    server.clients.append(client)
    return client
