"""The pieces the mem0ai adapter shares: version detection, reply parsing, thread hand-offs.

mem0 parses its model replies after the call returns and swallows what it cannot read; these parsers
read the same replies the same way (code fences stripped, the first JSON object taken) so the
recorded facts and events are what mem0 acted on, and a reply it silently dropped becomes an error
on the recorded operation instead of nothing.
"""

from __future__ import annotations

import contextvars
import json
import re
import threading
from collections import deque
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Literal

from ...errors import MemtraceError

Pipeline = Literal["classic", "additive"]
#: The versions each pipeline was written against (read from their site-packages source).
PIPELINE_VERSIONS = {"classic": "1.0.x", "additive": "2.x"}

_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.I)


class Mem0Swallowed(Exception):
    """A failure mem0 logged and carried on from; recorded as the operation's error."""


def mem0_version() -> str:
    """The installed mem0ai version, or a clear error naming the extra to install."""
    try:
        return metadata.version("mem0ai")
    except metadata.PackageNotFoundError:
        raise MemtraceError(
            "the mem0ai package is not installed: pip install 'memtrace[mem0ai]' (or mem0ai 1.0.x / 2.x)"
        ) from None


def pipeline_for(version: str) -> Pipeline:
    """Which add() pipeline a mem0ai version runs: classic (1.0.x) or additive (2.x and later)."""
    try:
        major = int(version.split(".", 1)[0])
    except ValueError:
        raise MemtraceError(f"cannot read the mem0ai version {version!r}") from None
    if major < 1:
        raise MemtraceError(
            f"mem0ai {version} is not supported: memtrace traces 1.0.x (classic) and 2.x (additive)"
        )
    return "classic" if major == 1 else "additive"


def check_traceable(memory: Any) -> None:
    """Refuse, in one line, what the adapter cannot trace: anything but a local Memory / AsyncMemory,
    and mem0 1.0.x's graph store (its entities would be missing from the run)."""
    try:
        from mem0 import AsyncMemory, Memory
    except ImportError:
        mem0_version()  # names the extra to install
        raise
    kind = type(memory).__name__
    if not isinstance(memory, Memory | AsyncMemory):
        hosted = " (the hosted client runs mem0 on its servers, out of memtrace's sight)"
        raise MemtraceError(
            f"memtrace traces a mem0.Memory or mem0.AsyncMemory, not {type(memory).__module__}.{kind}"
            + (hosted if kind in ("MemoryClient", "AsyncMemoryClient") else "")
        )
    if getattr(memory, "enable_graph", False):
        raise MemtraceError(
            f"memtrace does not trace mem0's graph store: build the {kind} without graph_store to trace it"
        )


#: Vector stores that run inside the Python process (no server between mem0 and the data).
_IN_PROCESS_STORES = frozenset({"faiss"})
#: Embedders that compute in the Python process unless given an endpoint.
_IN_PROCESS_EMBEDDERS = frozenset({"huggingface", "fastembed"})


def store_is_remote(memory: Any) -> bool:
    """Whether mem0's vector store is a server: a host, url or client is configured, or no local path."""
    store = getattr(getattr(memory, "config", None), "vector_store", None)
    config = getattr(store, "config", None)
    if any(getattr(config, key, None) for key in ("host", "url", "client")):
        return True
    return not (getattr(store, "provider", None) in _IN_PROCESS_STORES or getattr(config, "path", None))


def embedder_in_process(memory: Any) -> bool:
    """Whether mem0's embedder computes in this process (a local model with no endpoint configured)."""
    embedder = getattr(getattr(memory, "config", None), "embedder", None)
    config = getattr(embedder, "config", None) or {}
    if getattr(embedder, "provider", None) not in _IN_PROCESS_EMBEDDERS:
        return False
    return not any(isinstance(config, dict) and config.get(k) for k in ("huggingface_base_url", "base_url"))


def reply_json(text: str | None) -> dict[str, Any]:
    """The JSON object of a model reply as mem0 reads it; raises ValueError when there is none."""
    cleaned = _FENCE.sub("", text or "").strip()
    if not cleaned:
        return {}
    try:
        value = json.loads(cleaned, strict=False)
    except json.JSONDecodeError:
        start, end = cleaned.find("{"), cleaned.rfind("}")
        if start < 0 or end <= start:
            raise ValueError(f"no JSON object in the reply {short(cleaned)!r}") from None
        value = json.loads(cleaned[start : end + 1], strict=False)
    if not isinstance(value, dict):
        raise ValueError(f"the reply is JSON but not an object: {short(cleaned)!r}")
    return value


def extracted_facts(text: str | None, pipeline: Pipeline) -> list[str]:
    """The facts an extraction reply holds: `facts` (classic) or `memory[].text` (additive)."""
    data = reply_json(text)
    if pipeline == "classic":
        facts = data.get("facts", [])
        items = facts if isinstance(facts, list) else [facts]
        return [str(f.get("fact", f.get("text", "")) if isinstance(f, dict) else f).strip() for f in items]
    items = data.get("memory", [])
    return [str(m.get("text", "")).strip() for m in items if isinstance(m, dict) and m.get("text")]


def decision_events(text: str | None, aliases: dict[str, str]) -> tuple[list[dict[str, Any]], list[Any]]:
    """The update decision's events with mem0's temporary ids ("0", "1", ...) mapped to memory ids.

    Returns (events mem0 acts on, items it skips): an event without text, or an UPDATE / DELETE naming
    an id it never showed the model (mem0 logs a KeyError and moves on).
    """
    events, skipped = [], []
    for item in reply_json(text).get("memory", []) or []:
        if not isinstance(item, dict) or not item.get("text"):
            skipped.append(item)
            continue
        kind = item.get("event")
        alias = str(item.get("id", ""))
        if kind == "ADD":
            events.append({"event": "ADD", "text": item["text"], "id": None})
        elif kind in ("UPDATE", "DELETE", "NONE"):
            if alias in aliases:
                event = {"event": kind, "text": item["text"], "id": aliases[alias]}
                if item.get("old_memory"):
                    event["old_memory"] = item["old_memory"]
                events.append(event)
            elif kind != "NONE":
                skipped.append(item)
        else:
            skipped.append(item)
    return events, skipped


def found_memories(result: Any) -> list[dict[str, Any]]:
    """The memories a `search()` or `get_all()` returned: 1.0.x's {"results": [...]} or a bare list."""
    items = result.get("results", []) if isinstance(result, dict) else result or []
    return [m for m in items if isinstance(m, dict)]


def short(text: str, width: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def message_texts(messages: Any) -> list[str]:
    """The texts of the messages add() was given (str, one dict, or a list of dicts), system left out."""
    if isinstance(messages, str):
        return [messages]
    items = [messages] if isinstance(messages, dict) else messages if isinstance(messages, list) else []
    texts = []
    for item in items:
        if isinstance(item, dict) and item.get("role") != "system" and item.get("content") is not None:
            content = item["content"]
            texts.append(content if isinstance(content, str) else json.dumps(content, default=str))
    return texts


@dataclass(slots=True, eq=False)
class _Handoff:
    context: contextvars.Context
    key: Any


class Handoffs:
    """Contexts handed from a public call to the inner step mem0 runs in its own thread pool.

    `Memory.add` (1.0.x) and `Memory.search` (1.0.x) submit their inner step to a fresh
    ThreadPoolExecutor, which does not carry contextvars: the inner step takes the context its
    caller left here (matched by what it was called with), so it records inside the caller's run
    and operation. A caller whose inner step ran in its own thread withdraws its hand-off.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, deque[_Handoff]] = {}

    def offer(self, kind: str, key: Any) -> _Handoff:
        handoff = _Handoff(contextvars.copy_context(), key)
        with self._lock:
            self._waiting.setdefault(kind, deque()).append(handoff)
        return handoff

    def take(self, kind: str, key: Any) -> contextvars.Context | None:
        """The waiting context for `kind` offered with `key` (else the oldest waiting one)."""
        with self._lock:
            waiting = self._waiting.get(kind)
            if not waiting:
                return None
            match = next((h for h in waiting if h.key == key), waiting[0])
            waiting.remove(match)
            return match.context

    def withdraw(self, kind: str, handoff: _Handoff) -> None:
        with self._lock:
            waiting = self._waiting.get(kind)
            if waiting and handoff in waiting:
                waiting.remove(handoff)
