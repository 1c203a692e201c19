"""`memtrace ui`: serve one workspace's web UI with uvicorn on the loopback interface."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import uvicorn

from .app import create_app

HOST = "127.0.0.1"


def free_port() -> int:
    """A port nothing listens on right now (for `--port 0` and tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def serve(workspace: str | Path, *, port: int = 8765, announce: Callable[[str], None] = print) -> None:
    """Serve until interrupted; the workspace is opened first so a bad folder fails before listening."""
    chosen = port or free_port()
    app = create_app(workspace, port=chosen)
    config = uvicorn.Config(app, host=HOST, port=chosen, log_level="warning")
    server = uvicorn.Server(config)
    announce(f"http://{HOST}:{chosen}/")
    server.run()
