"""Record/replay cache of model responses: `<workspace>/llm-cache.db`, keyed by the FULL request.

The paper's cache key ignored the prompt text, so an edited prompt could replay a stale answer. Here
the key is a hash of everything that can change the answer: model, messages, every parameter and the
output schema. Replaying a run (counterfactual verification, fault injection) then reuses exactly
the answers whose requests did not change and asks the model only for the rest.

Modes: `read-write` (default: hits are served, misses are called and stored), `read-only` (replay:
a miss is a `CacheMissError` naming the request), `off` (no file, every call goes to the model).

A cache opened `upto` a mark (`high_water` taken when a command began) serves only the entries from
before that mark and its own: the runs of one command never answer each other's calls, so whether a
call was served from the cache does not depend on which runs happened to go first, or where. A
worker's cache (in its scratch workspace) asks a `fallback` on a miss: the driver's cache up to the
mark, so a worker is served what a run in the driver's process would be.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import CacheMissError, LLMError

CacheMode = Literal["read-write", "read-only", "off"]
CACHE_MODES: tuple[str, ...] = ("read-write", "read-only", "off")
CACHE_FILENAME = "llm-cache.db"
#: Bumped when the meaning of a request or response changes, so old entries stop matching.
KEY_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT NOT NULL,
    request TEXT NOT NULL, response TEXT NOT NULL, usage TEXT, created_at REAL NOT NULL
);
"""


def request_key(request: dict[str, Any]) -> str:
    """The sha256 of the canonical JSON of a request (sorted keys, no whitespace)."""
    canonical = json.dumps(
        {"v": KEY_VERSION, **request}, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(slots=True)
class CacheEntry:
    """A stored response and the usage of the call that produced it."""

    response: dict[str, Any]
    usage: dict[str, int]


def check_mode(mode: str) -> CacheMode:
    if mode not in CACHE_MODES:
        raise LLMError(f"unknown LLM cache mode {mode!r} (use one of: {', '.join(CACHE_MODES)})")
    return mode  # type: ignore[return-value]


class LLMCache:
    """The SQLite cache file of one workspace; safe to share between threads and processes (WAL)."""

    def __init__(
        self,
        workspace: str | Path,
        mode: CacheMode = "read-write",
        *,
        upto: int | None = None,
        fallback: Callable[[str], CacheEntry | None] | None = None,
    ) -> None:
        self.mode = check_mode(mode)
        self.upto = upto
        self.fallback = fallback
        self._own: set[str] = set()
        self.path = Path(workspace) / CACHE_FILENAME
        if self.mode == "read-only" and not self.path.exists():
            raise CacheMissError(f"read-only LLM cache {self.path} does not exist: nothing was recorded")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise LLMError(f"cannot open LLM cache {self.path}: {exc}") from None

    def lookup(self, key: str, request: dict[str, Any], label: str) -> CacheEntry | None:
        """The stored response for `key`; in read-only mode a miss raises an error naming the request."""
        with self._lock:
            row = self._conn.execute(
                "SELECT response, usage, rowid FROM llm_cache WHERE key = ?", (key,)
            ).fetchone()
            if row is not None and self.upto is not None and row[2] > self.upto and key not in self._own:
                row = None  # another run of this command made it: not ours to replay
        if row is not None:
            return CacheEntry(json.loads(row[0]), json.loads(row[1] or "{}"))
        if self.fallback is not None and (entry := self.fallback(key)) is not None:
            return entry
        if self.mode == "read-only":
            raise CacheMissError(
                f"LLM cache miss in read-only (replay) mode: no recorded reply for {label} request "
                f"{key[:12]} ({describe_request(request)}) in {self.path}"
            )
        return None

    def save(
        self, key: str, kind: str, request: dict[str, Any], response: dict[str, Any], usage: dict[str, int]
    ) -> None:
        """Store a response (nothing happens in read-only mode)."""
        if self.mode != "read-write":
            return
        row = (
            key,
            kind,
            str(request.get("model", "")),
            json.dumps(request, ensure_ascii=False, default=str),
            json.dumps(response, ensure_ascii=False),
            json.dumps(usage),
            time.time(),
        )
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO llm_cache VALUES (?, ?, ?, ?, ?, ?, ?)", row)
            self._own.add(key)

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def describe_request(request: dict[str, Any], width: int = 80) -> str:
    """A short human description of a request for error messages: model and the last message."""
    model = request.get("model", "?")
    messages = request.get("messages")
    if messages:
        last = " ".join(str(messages[-1].get("content", "")).split())
        text = last if len(last) <= width else last[: width - 1] + "…"
        return f"model {model}, {len(messages)} messages, last: {text!r}"
    text = " ".join(str(request.get("input", "")).split())
    text = text if len(text) <= width else text[: width - 1] + "…"
    return f"model {model}, input: {text!r}"


def high_water(workspace: str | Path) -> int:
    """The mark of a workspace's cache now (its highest row number; 0 when there is none yet)."""
    path = Path(workspace) / CACHE_FILENAME
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM llm_cache").fetchone()[0])
    except sqlite3.OperationalError:  # a file without the table yet
        return 0
    finally:
        conn.close()


def cache_rows(workspace: str | Path) -> list[tuple]:
    """Every entry of a workspace's cache as rows (a parallel task hands its model calls back)."""
    path = Path(workspace) / CACHE_FILENAME
    if not path.exists():
        return []
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM llm_cache ORDER BY key").fetchall()
    finally:
        conn.close()


def add_cache_rows(workspace: str | Path, rows: list[tuple]) -> None:
    """Add entries a task recorded elsewhere; an entry already cached is kept (the same request)."""
    if not rows:
        return
    cache = LLMCache(workspace)
    try:
        with cache._lock:
            cache._conn.executemany("INSERT OR IGNORE INTO llm_cache VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    finally:
        cache.close()
