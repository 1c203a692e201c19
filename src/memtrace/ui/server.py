"""`memtrace ui`: serve one workspace's web UI with uvicorn on the loopback interface."""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Callable
from pathlib import Path

import uvicorn

from ..errors import ListenError
from .app import create_app
from .guard import LOOPBACK, url_host

HOST = LOOPBACK


def free_port() -> int:
    """A port nothing listens on right now (for tests; `--port 0` binds one directly)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def listen(host: str, port: int) -> socket.socket:
    """A socket bound and listening on host:port (port 0: any free one), so the URL printed after
    it is already the server's; a taken port is one line (ListenError), not a traceback."""
    if not 0 <= port <= 65535:
        raise ListenError(f"port {port} is not a TCP port (0 to 65535; 0 picks a free one)")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if os.name != "nt":  # as uvicorn does; on Windows it would let two servers share a port
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ListenError(
                f"port {port} on {host} is taken: stop what uses it, or pick another with --port"
                " (--port 0 picks a free one)"
            ) from None
        raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def serve(
    workspace: str | Path,
    *,
    port: int = 8765,
    host: str = HOST,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve until interrupted: bind the port, open the workspace (a bad folder fails before any
    URL is shown), then announce the URL the server already listens on."""
    sock = listen(host, port)
    try:
        chosen = sock.getsockname()[1]
        app = create_app(workspace, port=chosen, host=host)
        config = uvicorn.Config(app, host=host, port=chosen, log_level="warning")
        announce(f"http://{url_host(host)}:{chosen}/")
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
