"""The web UI (`memtrace ui`): runs, cases, a case's memory evolution and attribution, annotations.

Needs the `ui` extra (fastapi, uvicorn). Nothing below the CLI imports this package.
"""

from .app import create_app

__all__ = ["create_app"]
