"""The same tasks on Ray (`memtrace[ray]`): one remote call per task, retried by Ray when a worker dies.

Workers need the memtrace package and nothing else: payloads carry the data, results carry what the
task recorded, so no filesystem is shared. With no address a local Ray starts (`ray.init()`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import MemtraceError
from .tasks import CRASH_ONCE_ENV, Ordered, attempt

if TYPE_CHECKING:
    from .reach import WorkerSetup
    from .spec import ExecutorSpec


def connect(spec: ExecutorSpec) -> Any:
    """The `ray` module, connected: to `spec.ray_address`, else an already started Ray, else a local
    one with `spec.workers` CPUs."""
    try:
        import ray
    except ImportError:
        raise MemtraceError("--executor ray needs Ray: pip install 'memtrace[ray]'") from None

    if not ray.is_initialized():
        if spec.ray_address:
            ray.init(address=spec.ray_address)
        else:
            ray.init(num_cpus=spec.workers) if spec.workers else ray.init()
    return ray


def run_on_ray(
    fn: Callable[[Any], Any], payloads: Sequence[Any], spec: ExecutorSpec, setup: WorkerSetup, out: Ordered
) -> None:
    """Submit every task, deliver results as they finish; Ctrl-C cancels what is still running."""
    ray = connect(spec)
    remote = ray.remote(max_retries=spec.retries, retry_exceptions=False)(attempt)
    marker = os.environ.get(CRASH_ONCE_ENV)
    shared = ray.put(setup)  # one copy in the object store, not one per task
    refs = {remote.remote(fn, marker, shared, payload): index for index, payload in enumerate(payloads)}
    pending = list(refs)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                index = refs.pop(ref)  # the last handle on the result: the store frees it once delivered
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # the task raised: the cause is the error
                    raise exc.as_instanceof_cause() from None
                except ray.exceptions.WorkerCrashedError:
                    raise MemtraceError(
                        f"task {index + 1} of {len(payloads)}: its worker died {spec.retries + 1} times"
                    ) from None
                out(index, result)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        out.flush()
        raise
    out.flush()
