"""The recording API: `run`, `op`, `traced`, `track`, `disable`/`enable`, `propagate`.

Every entry point first checks whether anything records; when nothing does, it returns a shared
no-op object or calls the function straight through, so instrumented code costs next to nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from .context import MUTED, active_run, current_op_var, current_run_var, open_runs, switch
from .noop import NoopRecorder
from .recorder import Recorder
from .scope import NOOP_OP, NoopOp, OpScope
from .sink import Sink


def run(
    workspace: str | Path | None,
    *,
    name: str,
    system: str | None = None,
    dataset: str | None = None,
    conversation: str | None = None,
    config: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    parent_run: str | None = None,
    capture_source: bool = False,
    sinks: Sequence[Sink] = (),
    otel: Any = False,
    run_id: str | None = None,
) -> Recorder | NoopRecorder:
    """Open a recorded run in a workspace folder and/or `sinks`; use it as a context manager.

    `workspace=None` with `sinks=[memtrace.InMemorySink()]` records without touching the disk. While
    recording is disabled this returns a `NoopRecorder` and writes nothing at all. `otel=True` also
    sends each operation as an OpenTelemetry GenAI span as it happens, to the global tracer provider
    (or to the `TracerProvider` given as `otel`); it needs the `memtrace[otel]` extra. `run_id` fixes
    the run's id (random by default).
    """
    if not switch.enabled:
        return NoopRecorder()
    if otel is not False and otel is not None:
        from ..interop.otlp.sink import OtelSink

        sinks = (*sinks, OtelSink(None if otel is True else otel))
    return Recorder(
        workspace,
        name=name,
        system=system,
        dataset=dataset,
        conversation=conversation,
        config=config,
        metadata=metadata,
        parent_run=parent_run,
        capture_source=capture_source,
        sinks=sinks,
        run_id=run_id,
    )


def op(name: str, category: str = "operation", **metadata: Any) -> OpScope | NoopOp:
    """A scope recording one operation of the current run (a no-op when nothing records)."""
    if not switch.enabled:
        return NOOP_OP
    recorder = current_run_var.get()
    if recorder is None:
        if not open_runs:
            return NOOP_OP
        recorder = open_runs[-1]
    elif recorder is MUTED:
        return NOOP_OP
    return OpScope(recorder, name, category, metadata)


@overload
def traced[**P, R](fn: Callable[P, R]) -> Callable[P, R]: ...
@overload
def traced[**P, R](
    *, name: str | None = None, category: str = "operation", output: str | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]: ...


def traced[**P, R](
    fn: Callable[P, R] | None = None,
    *,
    name: str | None = None,
    category: str = "operation",
    output: str | None = None,
) -> Any:
    """Record every call of a function as an operation: arguments in, return value out.

    An argument whose content was already recorded (say, the return value of an earlier traced call)
    is linked to that version instead of being stored again, so data flow appears without extra code.
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        op_name = name or func.__qualname__.rsplit("<locals>.", 1)[-1]
        out_name = output or f"{op_name}.return"
        params = [
            p.name
            for p in inspect.signature(func).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        skip_first = bool(params) and params[0] in ("self", "cls")

        def record_inputs(scope: OpScope, args: tuple, kwargs: dict) -> None:
            named = list(zip(params, args, strict=False))
            if len(args) > len(params):
                named.extend((f"arg{i}", a) for i, a in enumerate(args[len(params) :], len(params)))
            named.extend(kwargs.items())
            recorder = scope.recorder
            for i, (param, value) in enumerate(named):
                if skip_first and i == 0:
                    continue
                existing = recorder.version_with_content(recorder.blob_for(value))
                if existing is not None:
                    scope.use(existing)
                else:
                    scope.input(f"{op_name}.{param}", value)

        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                if active_run() is None:
                    return await func(*args, **kwargs)
                with op(op_name, category) as scope:
                    record_inputs(scope, args, kwargs)
                    result = await func(*args, **kwargs)
                    if result is not None:
                        scope.output(out_name, result)
                    return result

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if active_run() is None:
                return func(*args, **kwargs)
            with op(op_name, category) as scope:
                record_inputs(scope, args, kwargs)
                result = func(*args, **kwargs)
                if result is not None:
                    scope.output(out_name, result)
                return result

        return wrapper

    return decorate(fn) if fn is not None else decorate


def track(obj: object, name: str) -> None:
    """Register a mutable object as variable `name` so `op.mutated(obj)` can version it."""
    recorder = active_run()
    if recorder is not None:
        recorder.track(obj, name)


def current_run() -> Recorder | None:
    """The run recording right now in this context, or None."""
    return active_run()


def current_op() -> OpScope | None:
    """The innermost open operation in this context, or None."""
    return current_op_var.get()


def disable() -> None:
    """Turn recording off process-wide: every API call becomes a cheap no-op."""
    switch.enabled = False


def enable() -> None:
    """Turn recording back on."""
    switch.enabled = True


def is_enabled() -> bool:
    return switch.enabled


@contextlib.contextmanager
def muted() -> Iterator[None]:
    """Record nothing in this context (this thread, or this asyncio task) while the block runs;
    other threads keep recording into their runs. For work done only to learn something ahead."""
    run_token, op_token = current_run_var.set(MUTED), current_op_var.set(None)
    try:
        yield
    finally:
        current_op_var.reset(op_token)
        current_run_var.reset(run_token)


def propagate[**P, R](fn: Callable[P, R]) -> Callable[P, R]:
    """Bind `fn` to a copy of the current context so a worker thread records under the current op."""
    context = contextvars.copy_context()

    @functools.wraps(fn)
    def bound(*args: P.args, **kwargs: P.kwargs) -> R:
        return context.copy().run(fn, *args, **kwargs)

    return bound
