"""`verify` as independent tasks: one claim's verification (its replays) per task.

Nothing is read from the driver's workspace by a worker: each run with claims to verify is stashed
once (its rows, its snapshot files; executors/stash.py) and a worker rebuilds it in a scratch
workspace of its own, kept for the next claims of that run. The worker signs the snapshots the
driver's user key had signed again under a key of its own (systems/signing.py), verifies the claim
with replay ids derived from it, and returns the verdict with each replay's journal. The driver
takes the claims (verify/claims.py, so concurrent verifiers still split the work), ingests the
replays and saves the verdicts in claim order: the store is the one an in-process pass writes.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing import util
from pathlib import Path
from typing import Any

from ..executors import ExecutorSpec, RunRecord, Stash, Stashed, fetch, ingest_run, pack_replay, run_tasks
from ..graph import Run, Store, Workspace
from ..graph.copying import pending_prefix
from ..graph.journal import journal_path
from ..graph.rows import RunRows
from ..graph.shipping import run_rows
from ..systems.replay import replay_ids
from ..systems.signing import task_key
from ..systems.snapshots import SnapshotFiles, snapshot_files, write_snapshot_files
from .model import Attribution, save_attribution
from .verify.claims import VerifyClaims, replay_seed, to_verify
from .verify.counterfactual import verify, verify_all
from .verify.verdicts import Verification

Progress = Callable[[int, int], None]

#: Scratch workspaces a worker keeps open, one per run, for the next claims of the same run.
_KEEP = 2


@dataclass(slots=True)
class RunShipment:
    """A run as a worker rebuilds it: its rows (a replay's source runs first) and snapshot folders."""

    runs: list[tuple[Run, RunRows]]
    snapshots: dict[str, SnapshotFiles] = field(default_factory=dict)


@dataclass(slots=True)
class ClaimTask:
    """One claim to verify: the attribution, its run (stashed), and the seed of its replay ids."""

    attribution: Attribution
    run: Stashed
    seed: str
    oracle: bool = True
    #: Where the worker makes its scratch workspace: the local stash's folder, else its temp folder.
    scratch_in: str | None = None


@dataclass(slots=True)
class ClaimResult:
    """The verdict, and every replay it recorded, to be ingested by the driver before it is saved."""

    outcome: Verification
    replays: list[RunRecord]
    #: Replays the verification read back, so their reused prefix was copied (as it is in the driver
    #: when it verifies in process): the driver copies it too, for the same rows.
    read: list[str] = field(default_factory=list)


def verify_workspace(
    workspace: str | Path,
    *,
    method: str = "flow",
    llm: Any = None,
    progress: Progress | None = None,
    oracle: bool = True,
    runs: list[str] | None = None,
    limit: int | None = None,
    refresh: bool = False,
    executor: ExecutorSpec | None = None,
) -> list[Verification]:
    """`verify_all` on `executor`: in this process for one local worker or with a model client (it is
    not shipped to workers yet), else one task per claim."""
    if executor is None or executor.in_process or llm is not None:
        return verify_all(
            workspace,
            method=method,
            llm=llm,
            progress=progress,
            oracle=oracle,
            runs=runs,
            limit=limit,
            refresh=refresh,
        )
    with Workspace(workspace) as ws, VerifyClaims(ws) as claims, Stash(executor) as stash:
        attributions = to_verify(ws, method, runs, limit, refresh)
        taken = [a for a in attributions if claims.take(a)]
        # A run's claims one after another, so a worker rebuilds each run once (keys are stored, so
        # the order the verdicts are saved in changes no row).
        first = {run_id: n for n, run_id in reversed(list(enumerate(a.run_id for a in taken)))}
        taken.sort(key=lambda a: first[a.run_id])
        done = len(attributions) - len(taken)
        if progress:  # the bar's total, before the runs are sent
            progress(done, len(attributions))
        shipped: dict[str, Stashed] = {}
        tasks = []
        for attribution in taken:
            if attribution.run_id not in shipped:
                shipped[attribution.run_id] = stash.put(attribution.run_id, ship_run(ws, attribution.run_id))
            seed = replay_seed(ws.store, attribution)
            tasks.append(ClaimTask(attribution, shipped[attribution.run_id], seed, oracle, stash.folder))
        results: list[Verification] = []

        def deliver(index: int, result: ClaimResult) -> None:
            nonlocal done
            for record in result.replays:  # a run already there (a re-sent result) is left alone
                ingest_run(ws.store, record)
            for run_id in result.read:
                ws.store.complete(run_id)
            save_attribution(ws.store, result.outcome.record(), taken[index].settings_key or "")
            claims.finish(taken[index])
            results.append(result.outcome)
            done += 1
            if progress:
                progress(done, len(attributions))

        run_tasks(verify_claim, tasks, executor, deliver)
        return results


def ship_run(ws: Workspace, run_id: str) -> RunShipment:
    """Run `run_id` (and the runs a replay of it resumes from) with its snapshot folders, as data."""
    chain = [ws.run(run_id)]
    while chain[-1].parent_run and ws.store.has_run(chain[-1].parent_run):
        chain.append(ws.run(chain[-1].parent_run))
    shipment = RunShipment([run_rows(ws.store, run.id) for run in reversed(chain)])
    for run in chain:
        shipment.snapshots[run.id] = snapshot_files(ws.path, run.id)
    return shipment


# -- in a worker ---------------------------------------------------------------------------------

#: This worker process's signing key: its scratch snapshots are signed with it, never the user's.
_KEY = secrets.token_bytes(32)
#: Stash key -> (scratch folder, its open workspace), least recently used first.
_SCRATCH: OrderedDict[str, tuple[Path, Workspace]] = OrderedDict()
_CLEANUP: list[util.Finalize] = []


def verify_claim(task: ClaimTask) -> ClaimResult:
    """In a worker: verify one claim in the scratch workspace of its run, returning its replays."""
    ws = _scratch(task.run, task.scratch_in)
    replays: list[RunRecord] = []

    def closed(run: Run) -> None:  # read before verification indexes (and removes) the journal
        replays.append(pack_replay(ws.store, run))

    try:
        with task_key(_KEY), replay_ids(task.seed, closed):
            outcome = verify(ws, task.attribution, llm=None, oracle=task.oracle)
        with ws.store.transaction() as conn:
            read = [r.run.id for r in replays if r.prefix and pending_prefix(conn, r.run.id) is None]
    finally:
        for record in replays:  # the next claim of this run starts from the run alone
            ws.store.delete_run(record.run.id)
            journal_path(ws.path, record.run.id).unlink(missing_ok=True)
    return ClaimResult(outcome, replays, read)


def _scratch(stashed: Stashed, folder: str | None) -> Workspace:
    """The scratch workspace holding the stashed run, built on the first claim of it."""
    if stashed.key in _SCRATCH:
        _SCRATCH.move_to_end(stashed.key)
        return _SCRATCH[stashed.key][1]
    while len(_SCRATCH) >= _KEEP:
        _drop(*_SCRATCH.popitem(last=False)[1])
    if not _CLEANUP:
        _CLEANUP.append(util.Finalize(None, _drop_all, exitpriority=10))
    shipment: RunShipment = fetch(stashed)
    path = Path(tempfile.mkdtemp(prefix="memtrace-verify-", dir=folder))
    try:
        store = Store(path)
        try:
            for run, rows in shipment.runs:
                store.replace_run(run, rows)
        finally:
            store.close()
        for run_id, files in shipment.snapshots.items():
            write_snapshot_files(path, run_id, files, _KEY)
        ws = Workspace(path)
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    _SCRATCH[stashed.key] = (path, ws)
    return ws


def _drop(path: Path, ws: Workspace) -> None:
    ws.close()
    shutil.rmtree(path, ignore_errors=True)


def _drop_all() -> None:
    """At the worker's exit: registered by the first scratch workspace, in the worker itself (a pool
    worker exits through multiprocessing's finalizers, not atexit, and one forked from a process that
    had registered it at import starts with an empty registry)."""
    while _SCRATCH:
        _drop(*_SCRATCH.popitem()[1])
