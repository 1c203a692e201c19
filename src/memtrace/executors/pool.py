"""Run independent tasks on a local process pool or on Ray, delivering results to the driver in order.

The driver applies each result as it arrives, in task order, so what it writes is the same for one
worker or many; a task whose worker died is run again, and Ctrl-C stops the workers and keeps every
result that had already come back. Each task carries the driver's code registrations (reach.py); when
one cannot reach a worker, or one local worker would do, the same tasks run in the driver.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from typing import Any

from ..errors import MemtraceError
from .reach import WorkerSetup, driver_setup
from .spec import ExecutorSpec
from .tasks import CRASH_ONCE_ENV, Deliver, Ordered, attempt


def run_tasks(
    fn: Callable[[Any], Any],
    payloads: Sequence[Any],
    spec: ExecutorSpec,
    deliver: Deliver,
    *,
    preload: Sequence[str] = (),
) -> None:
    """Run `fn(payload)` for every payload; `deliver(index, result)` in the driver, in task order.

    `fn` must be a module-level function and payloads picklable. On Ctrl-C the results that came back
    are delivered (whatever their order) before `KeyboardInterrupt` goes on. Local workers start
    with `fn`'s module and the `preload` modules imported once, before they fork.
    """
    if not payloads:
        return
    setup, problem = driver_setup(spec.kind)
    if problem is not None:
        spec.notice(problem)
    if problem is not None or spec.runs_here(len(payloads)):
        _run_here(fn, payloads, deliver)
    elif spec.kind == "ray":
        from .ray_backend import run_on_ray

        run_on_ray(fn, payloads, spec, setup, Ordered(deliver))
    else:
        _run_local(fn, payloads, spec, setup, Ordered(deliver), preload)


def _run_here(fn: Callable[[Any], Any], payloads: Sequence[Any], deliver: Deliver) -> None:
    """The same tasks one after another in this process: what the workers would have returned."""
    for index, payload in enumerate(payloads):
        deliver(index, fn(payload))


def _context(preload: Sequence[str] = ()) -> multiprocessing.context.BaseContext:
    """forkserver where it exists (workers start clean, without this process's threads), else spawn.

    The forkserver imports `preload` once and forks every worker from there: eight workers each
    importing memtrace and the OpenAI SDK on two busy cores took 19 s, preloaded 3 s. (A forkserver
    already running in this process keeps the modules it started with.)
    """
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", *[name for name in preload if name != "__main__"]])
    return context


def _run_local(
    fn: Callable[[Any], Any],
    payloads: Sequence[Any],
    spec: ExecutorSpec,
    setup: WorkerSetup,
    out: Ordered,
    preload: Sequence[str],
) -> None:
    task = partial(attempt, fn, os.environ.get(CRASH_ONCE_ENV), setup)
    attempts = [0] * len(payloads)
    remaining = set(range(len(payloads)))
    workers = min(spec.count, len(payloads))
    while remaining:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context([fn.__module__, *preload]))
        futures: dict[Future[Any], int] = {}
        broken = False
        try:
            for index in sorted(remaining):
                attempts[index] += 1
                futures[pool.submit(task, payloads[index])] = index
            pending = set(futures)
            while pending and not broken:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = futures[future]
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        broken = True  # a worker died: every unfinished task runs again in a new pool
                        continue
                    remaining.discard(index)
                    out(index, result)
        except BaseException:
            _stop(pool)
            out.flush()
            raise
        pool.shutdown(wait=True, cancel_futures=True)
        failed = [i for i in remaining if attempts[i] > spec.retries]
        if failed:
            raise MemtraceError(
                f"task {failed[0] + 1} of {len(payloads)}: its worker died"
                f" {attempts[failed[0]]} times; giving up"
            )
    out.flush()


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop the workers now: cancel what has not started and end the processes running tasks."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)
