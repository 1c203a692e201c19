"""The tracer's wrappers of `mem0.AsyncMemory`'s coroutine methods: the same operations as Memory's.

AsyncMemory runs its steps as asyncio tasks and its model, embedder, vector-store and history calls
through `asyncio.to_thread`; both copy contextvars, so the sync wrappers of those calls record
inside the right add() with no hand-off, and concurrent `asyncio.gather`-ed adds each keep their
own subtree. Two things differ from the sync pipeline: mem0 1.0.x's update decision is made in a
worker thread while its writes run as tasks of `_add_to_vector_store`, so the writes are nested in
the decision explicitly (mem0ai_state.under_open_decision) and the decision ends in that task; and
1.0.x searches every fact at once, so the ids mem0 shows the decision are ordered by fact
(AddStep.shown_ids), not by which search finished first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .state import add_step

if TYPE_CHECKING:
    from ...trace import OpScope
    from .state import AddStep


class AsyncWrappers:
    """Async twins of the tracer's add / search / get_all / explicit-call wrappers (a Mem0Tracer mixin)."""

    if TYPE_CHECKING:  # provided by Mem0Tracer, StepsMixin and WritesMixin

        def _add_scope(self, kwargs: dict[str, Any]) -> OpScope: ...
        def _add_step(self, scope: OpScope, messages: Any, kwargs: dict[str, Any]) -> AddStep | None: ...
        def _finish_add(self, scope: OpScope, result: Any) -> Any: ...
        def _close_decision(self, step: AddStep) -> None: ...
        def _store_op(self, name: str, category: str, **metadata: Any) -> OpScope: ...
        def _link_or_record(self, op: OpScope, value: Any, name: str, category: str) -> str: ...
        def _record_found(self, op: OpScope, query_var: str | None, result: Any) -> None: ...
        def _explicit_op(
            self, name: str, category: str, args: tuple[Any, ...], kw: dict[str, Any]
        ) -> OpScope: ...

        pipeline: str

    async def _add_async(self, original: Callable[..., Any], messages: Any, *args: Any, **kwargs: Any) -> Any:
        with self._add_scope(kwargs) as scope:
            step = self._add_step(scope, messages, kwargs)
            if step is None:
                return self._finish_add(scope, await original(messages, *args, **kwargs))
            token = add_step.set(step)  # this task's context: the tasks and threads it starts copy it
            try:
                result = await original(messages, *args, **kwargs)
            finally:
                add_step.reset(token)
            return self._finish_add(scope, result)

    async def _vector_step_async(self, original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """add()'s inner step: the update decision a worker thread opened ends when the writes have run."""
        step = add_step.get()
        try:
            return await original(*args, **kwargs)
        finally:
            if step is not None:
                self._close_decision(step)

    async def _search_async(self, original: Callable[..., Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        with self._store_op("search", "retrieval", pipeline=self.pipeline) as op:
            query_var = self._link_or_record(op, query, "query", "query")
            result = await original(query, *args, **kwargs)
            self._record_found(op, query_var, result)
            return result

    async def _get_all_async(self, original: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with self._store_op("get_all", "retrieval") as op:
            result = await original(*args, **kwargs)
            self._record_found(op, None, result)
            return result

    async def _explicit_async(
        self, name: str, category: str, original: Callable[..., Any], *args: Any, **kw: Any
    ) -> Any:
        with self._explicit_op(name, category, args, kw):
            return await original(*args, **kw)
