"""`memtrace run --system mem0ai`: the real mem0ai library over a dataset, traced by the adapter.

mem0's LLM and embedder point at the run's OpenAI-compatible endpoint (`--model`, `--base-url`);
its vector store is a local qdrant folder and its history table a SQLite file, both under
`<workspace>/mem0ai/<run id>/`; `MEM0_TELEMETRY=False` and `MEM0_DIR=<workspace>/mem0ai/home` are
set before mem0 is imported, so nothing is written outside the workspace and nothing is sent home.
Every `batch_size` messages of a session go to `Memory.add` as one exchange; each question is a
`Memory.search` whose memories memtrace's shared answer step reads. mem0 has no offline mode, and
its state (a qdrant client) cannot be pickled, so these runs take no snapshots and cannot be
replayed: verification reports them as not verifiable. A search only reads the store, so the
question stage's model calls are fetched ahead on the Memory itself (systems/ahead.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, ClassVar

from ..adapters.mem0ai import found_memories
from ..adapters.mem0ai.tracer import Mem0Tracer, trace
from ..datasets import Question, Session
from ..errors import MemtraceError
from ..llm import ahead
from ..llm.limiter import slot
from .answering import answer_question
from .base import Answer, MemorySystem, Message, SystemConfig

#: Where mem0 keeps its own config folder inside a workspace (MEM0_DIR).
MEM0_HOME = "mem0ai/home"


class Mem0AIConfig(SystemConfig):
    #: Messages per `Memory.add` call: 2 is one exchange.
    batch_size: int = 2
    #: Memories a question's search returns to the answer step.
    top_k: int = 10
    #: The endpoint's embedding model (None: the LLM client's) and its embedding size (qdrant's
    #: collection is made with it).
    embed_model: str | None = None
    embedding_dims: int = 1536
    #: mem0 2.x drops search hits scoring under its threshold (default 0.1); None keeps mem0's default.
    search_threshold: float | None = None
    #: mem0's own prompt overrides (None: mem0's built-in prompts), the tunables of its two LLM steps.
    custom_fact_extraction_prompt: str | None = None
    custom_update_memory_prompt: str | None = None


def import_mem0(workspace: str | Path) -> Any:
    """Import `mem0` with telemetry off and its home folder in the workspace (set before import)."""
    if "mem0" not in sys.modules:
        home = Path(workspace) / MEM0_HOME
        home.mkdir(parents=True, exist_ok=True)
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ["MEM0_DIR"] = str(home)
    try:
        import mem0
        from mem0.memory import telemetry
    except ImportError as exc:
        raise MemtraceError(
            f"--system mem0ai needs the mem0ai package: pip install 'memtrace[mem0ai]' ({exc})"
        ) from None
    if telemetry.MEM0_TELEMETRY:
        raise MemtraceError(
            "mem0 was imported with telemetry on: set MEM0_TELEMETRY=False before importing mem0"
        )
    return mem0


def mem0_config(
    folder: Path, *, model: str, embed_model: str, base_url: str, api_key: str, config: Mem0AIConfig
) -> dict[str, Any]:
    """A `Memory.from_config` dict: OpenAI-compatible LLM and embedder, qdrant and history in `folder`."""
    endpoint = {"api_key": api_key, "openai_base_url": base_url}
    settings: dict[str, Any] = {
        "llm": {"provider": "openai", "config": {"model": model, "temperature": 0.0, **endpoint}},
        "embedder": {
            "provider": "openai",
            "config": {"model": embed_model, "embedding_dims": config.embedding_dims, **endpoint},
        },
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "memtrace",
                "path": str(folder / "qdrant"),
                "embedding_model_dims": config.embedding_dims,
                "on_disk": True,
            },
        },
        "history_db_path": str(folder / "history.db"),
    }
    if config.custom_fact_extraction_prompt:
        settings["custom_fact_extraction_prompt"] = config.custom_fact_extraction_prompt
    if config.custom_update_memory_prompt:
        settings["custom_update_memory_prompt"] = config.custom_update_memory_prompt
    return settings


def share_endpoint(memory: Any, backend: Any) -> None:
    """mem0 calls the endpoint through OpenAI clients of its own: each of their calls takes a slot of
    memtrace's limiter for the endpoint too, so `--concurrency` counts them with every other call,
    and is answered from the replies fetched ahead when a run has them (llm/ahead.py)."""
    limiter = getattr(backend, "limiter", None)
    hold = 3 * float(getattr(backend, "timeout", 60.0)) + 30  # mem0's SDK retries inside the slot
    endpoint = getattr(backend, "endpoint", None)
    owners = [getattr(memory.llm, "client", None), getattr(memory.embedding_model, "client", None)]
    for owner in {id(o): o for o in owners if o is not None}.values():
        chat = getattr(owner, "chat", None)
        for kind, api in (
            ("chat", getattr(chat, "completions", None)),
            ("embeddings", getattr(owner, "embeddings", None)),
        ):
            original = getattr(api, "create", None)
            if original is None:
                continue

            def send(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                if limiter is None:
                    return _original(*args, **kwargs)
                with slot(limiter, hold):
                    return _original(*args, **kwargs)

            def create(*args: Any, _send: Any = send, _kind: str = kind, **kwargs: Any) -> Any:
                request = {"endpoint": endpoint, "mem0ai": _kind, "args": args, **kwargs}
                return ahead.through(request, lambda: _send(*args, **kwargs))

            api.create = create  # type: ignore[union-attr]


class Mem0AISystem(MemorySystem):
    """The real mem0ai `Memory`, one per conversation, traced in place."""

    name = "mem0ai"
    Config = Mem0AIConfig
    config: Mem0AIConfig
    runs_offline: ClassVar[bool] = False
    snapshots: ClassVar[bool] = False
    answers_in_place: ClassVar[bool] = True  # a search only reads the store

    def reset(self) -> None:
        self.close()
        assert self.llm is not None  # runs_offline = False: the constructor refused no client
        run = self.recorder
        workspace = run.store.path.parent
        mem0 = import_mem0(workspace)
        folder = workspace / "mem0ai" / run.id
        folder.mkdir(parents=True, exist_ok=True)
        backend = self.llm.backend
        client = getattr(backend, "_client", None)
        settings = mem0_config(
            folder,
            model=self.llm.model,
            embed_model=self.config.embed_model or self.llm.embed_model,
            base_url=getattr(backend, "endpoint", None) or os.environ.get("OPENAI_BASE_URL", ""),
            api_key=getattr(client, "api_key", None) or os.environ.get("OPENAI_API_KEY") or "not-needed",
            config=self.config,
        )
        self.memory = mem0.Memory.from_config(settings)
        share_endpoint(self.memory, backend)  # first: the tracer then counts calls served ahead too
        self.tracer: Mem0Tracer = trace(self.memory)
        self.user = self.conversation.id if self.conversation else "user"
        self.pending: list[Message] = []

    def close(self) -> None:
        """Release the previous conversation's Memory (its SQLite history and qdrant folder lock)."""
        memory = getattr(self, "memory", None)
        if memory is not None:
            memory.close()
            client = getattr(memory.vector_store, "client", None)
            if client is not None:
                client.close()
            self.memory = None

    def ingest(self, message: Message) -> None:
        self.pending.append(message)
        if len(self.pending) >= self.config.batch_size:
            self._flush()

    def end_session(self, session: Session) -> None:
        self._flush()

    def finish(self) -> None:
        self._flush()

    def _flush(self) -> None:
        batch, self.pending = self.pending, []
        if batch:
            self.memory.add([{"role": "user", "content": m.text} for m in batch], user_id=self.user)

    def answer(self, question: Question) -> Answer:
        if self.tracer.pipeline == "classic":
            result = self.memory.search(question.question, user_id=self.user, limit=self.config.top_k)
        else:
            extra = (
                {} if self.config.search_threshold is None else {"threshold": self.config.search_threshold}
            )
            scope = {"user_id": self.user}
            result = self.memory.search(question.question, filters=scope, top_k=self.config.top_k, **extra)
        memories = found_memories(result)
        found = self.tracer.last_search()
        if found is not None and found.memories != memories:
            found = None  # an earlier search's record: this one was muted (answered ahead)
        return answer_question(
            question,
            [m.get("memory", "") for m in memories],
            config=self.config,
            llm=self.llm,
            context_var=found.retrieved_var if found is not None else None,
            query_var=found.query_var if found is not None else None,
        )
