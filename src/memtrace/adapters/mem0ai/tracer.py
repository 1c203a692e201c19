"""Trace a real `mem0.Memory` or `mem0.AsyncMemory` (the `mem0ai` package) without editing its source.

    import memtrace as mt
    from memtrace.adapters.mem0ai import trace

    memory = Memory.from_config(config)
    tracer = trace(memory)            # tracer.pipeline: "classic" (1.0.x) or "additive" (2.x)
    with mt.run("ws/", name="demo", system="mem0ai"):
        memory.add(messages, user_id="u")
        memory.search("question", user_id="u")

`trace` replaces methods on the one Memory object (and on its LLM, embedder, vector store, history
table and OpenAI clients) with wrappers that record operations named and categorised like the
paper's Mem0 graphs, so attribution reads them as it reads memtrace's own Mem0:

- `mem0.add` (construction) reads the messages; inside it `extract_facts` (extraction) with its
  `*.llm` call (category llm, token usage from the OpenAI client call), `embed` (llm),
  `search_memories` (retrieval, the old memories mem0 compares with), and in the classic pipeline
  `update_memory_decision` (update) whose ADD / UPDATE / DELETE / NONE events become
  `create_memory` / `update_memory` (update) and `delete_memory` (deletion) operations nested in
  it; in the additive pipeline `insert_memories` (update) writes the batch. Every write to the
  vector store is a version of the memory unit named by mem0's memory id; each row mem0 writes to
  its history table is recorded on that write (`history` metadata).
- `search` / `get_all` (retrieval) read the units they return and output them as `retrieved`.
- `mem0.update` / `mem0.delete` / `mem0.delete_all` wrap the explicit calls (2.x: the only way a
  memory changes after its ADD).

mem0 1.0.x runs add()'s and search()'s inner step in a thread pool that drops contextvars: the inner
step takes the caller's context from a hand-off (mem0ai_parts.Handoffs), so one add() is one
subtree of the run. An AsyncMemory gets async wrappers of its coroutine methods (mem0ai_async.py):
asyncio tasks and `asyncio.to_thread` copy contextvars, so concurrent adds each keep their own
subtree. Errors mem0 swallows (an update-decision call that failed, a reply it could not
parse, an event naming an id it never showed) are recorded on the operation as status `error`.
With no run recording, every wrapper calls straight through.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from typing import Any

from ...llm.usage import Usage, add_usage
from ...trace import OpScope
from ...trace.context import MUTED, active_run, current_op_var, current_run_var
from .async_wrappers import AsyncWrappers
from .parts import (
    PIPELINE_VERSIONS,
    Handoffs,
    Pipeline,
    check_traceable,
    embedder_in_process,
    found_memories,
    mem0_version,
    message_texts,
    pipeline_for,
    store_is_remote,
)
from .state import (
    AddStep,
    SearchRecord,
    WritesMixin,
    add_step,
    content_key,
    last_search_var,
    new_op,
    under_open_decision,
)
from .steps import StepsMixin

__all__ = ["Mem0Tracer", "SearchRecord", "trace", "untrace"]

_ATTRIBUTE = "_memtrace_tracer"


#: The public calls whose inner step mem0 (1.0.x) runs in a thread pool of its own (their hand-off kind).
_THREAD_HOPS = frozenset({"add", "search"})


def trace(memory: Any, *, pipeline: Pipeline | None = None, remote_store: bool | None = None) -> Mem0Tracer:
    """Instrument `memory` (a `mem0.Memory` or `mem0.AsyncMemory`) in place; again, the same tracer.

    `remote_store` says whether mem0's vector store is a server (its operations become CLIENT spans
    in OpenTelemetry); by default it is read from the store's configuration (a host or url).
    """
    existing = getattr(memory, _ATTRIBUTE, None)
    if isinstance(existing, Mem0Tracer):
        return existing
    check_traceable(memory)
    tracer = Mem0Tracer(memory, pipeline, remote_store=remote_store)
    tracer.install()
    return tracer


def untrace(memory: Any) -> None:
    """Remove the instrumentation `trace` put on `memory` (a no-op when it has none)."""
    tracer = getattr(memory, _ATTRIBUTE, None)
    if isinstance(tracer, Mem0Tracer):
        tracer.uninstall()


class Mem0Tracer(StepsMixin, AsyncWrappers, WritesMixin):
    """The instrumentation of one Memory or AsyncMemory; `pipeline` and `version` say what it records."""

    def __init__(
        self, memory: Any, pipeline: Pipeline | None = None, *, remote_store: bool | None = None
    ) -> None:
        self.memory = memory
        self.version = mem0_version()
        self.pipeline: Pipeline = pipeline or pipeline_for(self.version)
        self.is_async = inspect.iscoroutinefunction(getattr(memory, "add", None))
        self.store_remote = store_is_remote(memory) if remote_store is None else remote_store
        self._embed_remote = not embedder_in_process(memory)
        self._handoffs = Handoffs()
        self._patched: list[tuple[Any, str]] = []

    def describe(self) -> str:
        """One line saying which mem0ai pipeline this tracer records."""
        kind = "AsyncMemory" if self.is_async else "Memory"
        return (
            f"mem0ai {self.version} {kind}: {self.pipeline} pipeline "
            f"(written against mem0ai {PIPELINE_VERSIONS[self.pipeline]})"
        )

    def last_search(self) -> SearchRecord | None:
        """The most recent search recorded in this context (None before any)."""
        return last_search_var.get()

    # -- installing ----------------------------------------------------------------------------

    def install(self) -> None:
        m = self.memory
        explicit, explicit_async = self._explicit, self._explicit_async
        self._wrap(m, "add", self._add, self._add_async)
        self._wrap(m, "_add_to_vector_store", self._vector_step, self._vector_step_async)
        self._wrap(m, "search", self._search, self._search_async)
        self._wrap(m, "_search_vector_store", self._search_step)  # async: no thread pool to bridge
        self._wrap(m, "get_all", self._get_all, self._get_all_async)
        for name, op_name, category in (
            ("update", "mem0.update", "update"),
            ("delete", "mem0.delete", "deletion"),
            ("delete_all", "mem0.delete_all", "deletion"),
        ):
            self._wrap(
                m,
                name,
                functools.partial(explicit, op_name, category),
                functools.partial(explicit_async, op_name, category),
            )
        self._wrap(m, "_create_memory", self._create_memory, self._create_memory_async)
        self._wrap(m, "_update_memory", self._update_memory, self._update_memory_async)
        self._wrap(m, "_delete_memory", self._delete_memory, self._delete_memory_async)
        self._wrap(m.llm, "generate_response", self._generate)
        self._wrap(m.embedding_model, "embed", functools.partial(self._embed, "embed"))
        self._wrap(m.embedding_model, "embed_batch", functools.partial(self._embed, "embed_batch"))
        self._wrap(m.vector_store, "search", self._store_search)
        self._wrap(m.vector_store, "insert", self._store_insert)
        self._wrap(m.db, "add_history", self._history)
        self._wrap(m.db, "batch_add_history", self._history_batch)
        for owner in (getattr(m.llm, "client", None), getattr(m.embedding_model, "client", None)):
            self._wrap_openai(owner)
        setattr(m, _ATTRIBUTE, self)

    def uninstall(self) -> None:
        for owner, name in reversed(self._patched):
            with contextlib.suppress(AttributeError):
                delattr(owner, name)
        self._patched.clear()
        if getattr(self.memory, _ATTRIBUTE, None) is self:
            delattr(self.memory, _ATTRIBUTE)

    def _wrap(
        self,
        owner: Any,
        name: str,
        wrapper: Callable[..., Any],
        async_wrapper: Callable[..., Any] | None = None,
    ) -> None:
        """Shadow `owner.name` by an instance attribute calling `wrapper(original, *args, **kwargs)`.

        A coroutine method (AsyncMemory's) gets a coroutine calling `async_wrapper`, or stays as it
        is when it has none.
        """
        original = getattr(owner, name, None)
        if owner is None or original is None or not callable(original):
            return
        if inspect.iscoroutinefunction(original):
            if async_wrapper is None:
                return
            traced = async_wrapper

            @functools.wraps(original)
            async def call_async(*args: Any, **kwargs: Any) -> Any:
                if active_run() is None:
                    return await original(*args, **kwargs)
                return await traced(original, *args, **kwargs)

            setattr(owner, name, call_async)
        else:
            hop = name if name in _THREAD_HOPS else None

            @functools.wraps(original)
            def call(*args: Any, **kwargs: Any) -> Any:
                if active_run() is None:
                    if hop is not None and current_run_var.get() is MUTED:
                        return self._muted_hop(hop, original, *args, **kwargs)
                    return original(*args, **kwargs)
                return wrapper(original, *args, **kwargs)

            setattr(owner, name, call)
        self._patched.append((owner, name))

    def _wrap_openai(self, client: Any) -> None:
        """Count the token usage the OpenAI SDK returns on the operation that made the call."""
        if client is None or not hasattr(client, "chat") or not hasattr(client, "embeddings"):
            return
        self._wrap(client.chat.completions, "create", self._counted)
        self._wrap(client.embeddings, "create", self._counted)

    def _counted(self, original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        response = original(*args, **kwargs)
        usage = getattr(response, "usage", None)
        if usage is not None:
            tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
            tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
            add_usage(Usage(1, tokens_in, tokens_out))
            op = current_op_var.get()
            if op is not None and op.category == "llm":
                op.metadata["usage"] = {
                    "calls": 1,
                    "input_tokens": tokens_in,
                    "output_tokens": tokens_out,
                    "cached_calls": 0,
                }
                op.metadata["model"] = getattr(response, "model", None)
        return response

    def _muted_hop(self, kind: str, original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A muted add() or search(): its inner step, in mem0's own thread pool, takes this muted
        context too, instead of falling back to the open run (and the replies fetched ahead reach it)."""
        first = args[0] if args else kwargs.get("query" if kind == "search" else "messages")
        key = first if kind == "search" else tuple(message_texts(first))
        handoff = self._handoffs.offer(kind, key)
        try:
            return original(*args, **kwargs)
        finally:
            self._handoffs.withdraw(kind, handoff)

    # -- add() ---------------------------------------------------------------------------------

    def _add(self, original: Callable[..., Any], messages: Any, *args: Any, **kwargs: Any) -> Any:
        with self._add_scope(kwargs) as scope:
            step = self._add_step(scope, messages, kwargs)
            if step is None:
                return self._finish_add(scope, original(messages, *args, **kwargs))
            token = add_step.set(step)
            texts = tuple(message_texts(messages))
            handoff = self._handoffs.offer("add", texts)  # after the set: the context carries it
            try:
                result = original(messages, *args, **kwargs)
            finally:
                add_step.reset(token)
                self._handoffs.withdraw("add", handoff)
            return self._finish_add(scope, result)

    def _add_scope(self, kwargs: dict[str, Any]) -> OpScope:
        scope = new_op("mem0.add", "construction", **self._add_metadata(kwargs))
        self._note_pipeline(scope)
        return scope

    def _add_step(self, scope: OpScope, messages: Any, kwargs: dict[str, Any]) -> AddStep | None:
        """Record the messages of an entered add(); None for a procedural add (no extraction)."""
        texts = message_texts(messages)
        message_vars = [self._link_or_record(scope, text, "message", "message") for text in texts]
        if kwargs.get("memory_type") == "procedural_memory":  # one summary call, no extraction
            if kwargs.get("llm") is not None:
                scope.set(untraced="the procedural summary comes from the llm= model, which is not traced")
            return None
        return AddStep(scope, message_vars)

    @staticmethod
    def _finish_add(scope: OpScope, result: Any) -> Any:
        events = result.get("results") if isinstance(result, dict) else result
        scope.output("mem0.add.results", events, category="update_events")
        return result

    def _note_pipeline(self, op: OpScope) -> None:
        """Say in the run's metadata which mem0ai version and pipeline it recorded."""
        metadata = op.recorder.run.metadata
        if "mem0ai" not in metadata:
            metadata["mem0ai"] = {"version": self.version, "pipeline": self.pipeline}

    def _add_metadata(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        ids = {k: kwargs[k] for k in ("user_id", "agent_id", "run_id") if kwargs.get(k)}
        return {"pipeline": self.pipeline, "mem0ai": self.version, "infer": kwargs.get("infer", True), **ids}

    def _vector_step(self, original: Callable[..., Any], messages: Any, *args: Any, **kwargs: Any) -> Any:
        """add()'s inner step; in 1.0.x it runs in mem0's thread pool, so it takes its caller's context."""
        if add_step.get() is None:
            context = self._handoffs.take("add", tuple(message_texts(messages)))
            if context is not None:
                return context.run(self._vector_step_here, original, messages, *args, **kwargs)
        return self._vector_step_here(original, messages, *args, **kwargs)

    def _vector_step_here(self, original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        step = add_step.get()
        if step is None:
            return original(*args, **kwargs)
        # the step object is shared with the caller's context: the decision it opens is closed here
        try:
            return original(*args, **kwargs)
        finally:
            self._close_decision(step)

    # -- model calls (extraction and the update decision: mem0ai_steps.py) ----------------------

    def _embed(self, name: str, original: Callable[..., Any], text: Any, *args: Any, **kwargs: Any) -> Any:
        action = kwargs.get("memory_action", args[0] if args else None)
        with under_open_decision(), new_op(name, "llm", action=action, remote=self._embed_remote) as op:
            run = op.recorder
            for item in text if isinstance(text, list) else [text]:
                known = run.version_with_content(content_key(item))
                if known is not None:
                    op.use(known)
            vectors = original(text, *args, **kwargs)
            first = vectors[0] if isinstance(text, list) and len(vectors) else vectors
            dims = len(first) if first is not None else 0
            op.set(texts=len(text) if isinstance(text, list) else 1, dims=dims)
            return vectors

    # -- the vector store ----------------------------------------------------------------------

    def _store_search(self, original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        step = add_step.get()
        if step is None or current_op_var.get() is not step.add_op:
            return original(*args, **kwargs)  # a search inside a write, or outside add()
        query = kwargs.get("query", args[0] if args else None)
        with self._store_op("search_memories", "retrieval", pipeline=self.pipeline) as op:
            known = op.recorder.version_with_content(content_key(query))
            if known is not None:
                op.use(known)
            else:
                for var in step.message_vars:
                    op.use(var)
            hits = original(*args, **kwargs)
            found = []
            for hit in hits or []:
                memory_id = str(hit.id)
                self._read_unit(op, memory_id)
                text = (hit.payload or {}).get("data", "")
                found.append({"id": memory_id, "text": text})
                if memory_id not in step.candidate_ids:
                    step.candidate_ids.append(memory_id)
            if isinstance(query, str):
                step.hits[query.strip()] = [f["id"] for f in found]
            op.set(scores=[[str(h.id), round(float(h.score or 0.0), 4)] for h in hits or []])
            step.candidate_vars.append(op.output("candidates", found, category="retrieved"))
            return hits

    # -- questions and explicit calls ------------------------------------------------------------

    def _search(self, original: Callable[..., Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        with self._store_op("search", "retrieval", pipeline=self.pipeline) as op:
            query_var = self._link_or_record(op, query, "query", "query")
            handoff = self._handoffs.offer("search", query)
            try:
                result = original(query, *args, **kwargs)
            finally:
                self._handoffs.withdraw("search", handoff)
            self._record_found(op, query_var, result)
            return result

    def _search_step(self, original: Callable[..., Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        op = current_op_var.get()
        if op is None or op.name != "search":
            context = self._handoffs.take("search", query)
            if context is not None:
                return context.run(original, query, *args, **kwargs)
        return original(query, *args, **kwargs)

    def _get_all(self, original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with self._store_op("get_all", "retrieval") as op:
            result = original(*args, **kwargs)
            self._record_found(op, None, result)
            return result

    def _record_found(self, op: OpScope, query_var: str | None, result: Any) -> None:
        memories = found_memories(result)
        for memory in memories:
            self._read_unit(op, str(memory.get("id")))
        op.set(ranking=[[str(m.get("id")), round(float(m.get("score") or 0.0), 4)] for m in memories])
        texts = [m.get("memory", "") for m in memories]
        retrieved = op.output("retrieved", texts, category="retrieved")
        last_search_var.set(SearchRecord(query_var, retrieved, memories))

    def _explicit(self, name: str, category: str, original: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        with self._explicit_op(name, category, args, kw):
            return original(*args, **kw)

    @staticmethod
    def _explicit_op(name: str, category: str, args: tuple[Any, ...], kw: dict[str, Any]) -> OpScope:
        arguments = {k: v for k, v in kw.items() if isinstance(v, str | int | float | bool)}
        if args:
            arguments["memory_id"] = str(args[0])
        return new_op(name, category, arguments=arguments)
