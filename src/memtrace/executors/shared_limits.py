"""The driver's model-call limiters, served to the workers: one `--concurrency` for all of them.

In this process the limiters are used as they are (`--workers 1`). For a local pool the driver serves
them on loopback (`LimiterServer`): a task carries the address and a secret (`SocketTicket`), no file
is shared, and a worker that dies gives its slots back when its connection closes. The same server
answers lookups in the driver's model cache (as it stood before the command), so a worker's run is
served what it would be in the driver's process. On Ray a named actor holds the limiters
(ray_limits.py); Ray workers see no earlier cache entries. Nothing is started offline.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import secrets
import socket
import socketserver
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import LLMError
from ..llm.cache import CacheEntry
from ..llm.limiter import LimiterTicket, LocalLimiters
from .spec import ExecutorSpec

#: A lookup in the driver's model cache: the entry for a request key, or None.
Lookup = Callable[[str], CacheEntry | None]


@contextlib.contextmanager
def shared_limiters(
    spec: ExecutorSpec, limiters: LocalLimiters, lookup: Lookup | None = None
) -> Iterator[LimiterTicket]:
    """A ticket to `limiters` (and to `lookup`, for a local pool) for the tasks `spec` runs, valid
    inside the `with` block."""
    if spec.in_process:
        yield limiters
        return
    if spec.kind == "ray":
        from .ray_limits import ray_limiters

        with ray_limiters(spec, limiters.capacity) as ticket:
            yield ticket
        return
    server = LimiterServer(limiters, lookup)
    try:
        yield server.ticket
    finally:
        server.close()


@dataclass(frozen=True, slots=True)
class SocketTicket:
    """Where the driver serves its limiters, and the secret a connection must start with."""

    host: str
    port: int
    token: str = field(repr=False)

    def connect(self) -> SocketLimiters:
        return SocketLimiters(self)


class LimiterServer:
    """`limiters` (and `lookup`) served on 127.0.0.1 (a random port), one thread per worker connection."""

    def __init__(
        self, limiters: LocalLimiters, lookup: Lookup | None = None, host: str = "127.0.0.1"
    ) -> None:
        self.limiters = limiters
        token = secrets.token_hex(16)
        self._server = _Server((host, 0), _handler(limiters, lookup, token))
        address = self._server.server_address
        self.ticket = SocketTicket(str(address[0]), int(address[1]), token)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False


def _handler(
    limiters: LocalLimiters, lookup: Lookup | None, token: str
) -> type[socketserver.StreamRequestHandler]:
    class Handler(socketserver.StreamRequestHandler):
        """One worker thread's connection: its requests in order; its slots back when it closes."""

        def handle(self) -> None:
            if not hmac.compare_digest(self.rfile.readline().strip(), token.encode()):
                return
            held: list[tuple[str, int]] = []
            try:
                for line in self.rfile:
                    reply = _serve(limiters, lookup, json.loads(line), held)
                    self.wfile.write(json.dumps(reply).encode() + b"\n")
            except (OSError, ValueError):
                pass  # a worker that died mid-request: its slots go back below
            finally:
                for endpoint in {endpoint for endpoint, _ in held}:
                    limiters.limiter(endpoint).release_all([lease for e, lease in held if e == endpoint])

    return Handler


def _serve(
    limiters: LocalLimiters, lookup: Lookup | None, request: dict[str, Any], held: list[tuple[str, int]]
) -> dict[str, Any]:
    """One request of a worker: acquire (blocks until granted), release, back_off or lookup."""
    kind = request["op"]
    if kind == "lookup":
        entry = lookup(str(request["key"])) if lookup is not None else None
        return {"entry": None if entry is None else {"response": entry.response, "usage": entry.usage}}
    endpoint = str(request["endpoint"])
    limiter = limiters.limiter(endpoint)
    if kind == "acquire":
        lease = limiter.acquire(float(request["hold"]))
        held.append((endpoint, lease))
        return {"lease": lease}
    if kind == "release":
        lease = int(request["lease"])
        limiter.release(lease)
        with contextlib.suppress(ValueError):
            held.remove((endpoint, lease))
        return {}
    if kind == "back_off":
        limiter.back_off(float(request["seconds"]))
        return {}
    raise ValueError(f"unknown limiter request {kind!r}")


class SocketLimiters:
    """A worker's handle on the driver's limiters: one connection per thread, opened on first use."""

    def __init__(self, ticket: SocketTicket) -> None:
        self.ticket = ticket
        self._local = threading.local()
        self._opened: list[tuple[socket.socket, Any]] = []
        self._lock = threading.Lock()

    def limiter(self, endpoint: str) -> _SocketLimiter:
        return _SocketLimiter(self, endpoint.rstrip("/"))

    def lookup(self, key: str) -> CacheEntry | None:
        """The driver's cache entry for a request key (from before the command), or None."""
        entry = self.ask({"op": "lookup", "key": key})["entry"]
        return None if entry is None else CacheEntry(entry["response"], entry["usage"])

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request on this thread's connection and wait for its answer."""
        try:
            conn, reader = self._connection()
            conn.sendall(json.dumps(request).encode() + b"\n")
            line = reader.readline()
        except OSError as exc:
            raise LLMError(f"the shared model-call limiter at {self._where} is unreachable: {exc}") from None
        if not line:
            raise LLMError(f"the shared model-call limiter at {self._where} closed the connection")
        return json.loads(line)

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for conn, reader in opened:
            reader.close()
            conn.close()

    @property
    def _where(self) -> str:
        return f"{self.ticket.host}:{self.ticket.port}"

    def _connection(self) -> tuple[socket.socket, Any]:
        made = getattr(self._local, "made", None)
        if made is None or made[0].fileno() < 0:
            conn = socket.create_connection((self.ticket.host, self.ticket.port))
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.sendall(self.ticket.token.encode() + b"\n")
            made = (conn, conn.makefile("rb"))
            self._local.made = made
            with self._lock:
                self._opened.append(made)
        return made


@dataclass(slots=True)
class _SocketLimiter:
    """One endpoint's limiter in the driver, seen from a worker."""

    limiters: SocketLimiters
    endpoint: str

    def acquire(self, hold: float) -> int:
        return int(self.limiters.ask({"op": "acquire", "endpoint": self.endpoint, "hold": hold})["lease"])

    def release(self, lease: int) -> None:
        self.limiters.ask({"op": "release", "endpoint": self.endpoint, "lease": lease})

    def back_off(self, seconds: float) -> None:
        self.limiters.ask({"op": "back_off", "endpoint": self.endpoint, "seconds": seconds})
