"""`bench faults` as independent tasks: one injected fault per task, replayed in a scratch workspace.

A task carries the run it breaks (rows and snapshots), replays it there with the injection and, when
the answer flips, attributes the case with every method. What comes back is small: whether it
flipped, the true label, each method's attribution, and (when asked) the MemTraceBench graph and the
replay itself. The driver calls the same function when it runs the tasks itself, so the results are
the same whatever the executor.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ..attribution.model import Attribution
from ..attribution.tasks import MethodRecipe
from ..executors import ExecutorSpec, run_tasks
from ..executors.scratch import worker_folder
from ..graph import Workspace
from ..graph.journal import ingest_journal, journal_path
from ..graph.model import Run
from ..graph.rows import RunRows
from ..graph.shipping import run_rows
from ..interop import export_smartcomment
from ..progress import Progress, no_progress
from ..systems.replay import replay
from ..systems.shipping import ShippedRun, ship_run
from .fault_verify import verify_in_scratch
from .faults import Injection


@dataclass(slots=True)
class FaultTask:
    """One planned injection and the run it breaks."""

    source: ShippedRun
    injection: Injection
    methods: list[MethodRecipe]
    memtracebench: bool = False
    keep_replay: bool = False
    verify: bool = False


@dataclass(slots=True)
class FaultOutcome:
    """What one injection came to: the replay's id, whether the answer flipped, and if so the label."""

    replay_run: str
    flipped: bool
    #: The true label: the injected operation, or the step of the replay that deleted the unit.
    op_id: str
    attributions: dict[str, Attribution] = field(default_factory=dict)
    #: Per method, the verifier's verdict on its claim (`--verify`): {"verdict": ..., "why": ...}.
    verdicts: dict[str, dict[str, str]] = field(default_factory=dict)
    graph: dict[str, Any] | None = None
    replay: tuple[Run, RunRows] | None = None


def replay_id(injection: Injection) -> str:
    """The replay's id from what it is (run, case, injected operation and patch), not from a clock."""
    key = [injection.run_id, injection.case_id, str(injection.error_type), injection.op_id, injection.patch]
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]


def run_fault(task: FaultTask, llm: Any = None) -> FaultOutcome:
    """Replay one injection in a scratch workspace holding its run; attribute it with every method
    when it flips. The replay is dropped afterwards (read back, it holds a full copy of the run)."""
    injection = task.injection
    ws = SCRATCH.workspace(task.source)
    cases, fixed = [injection.case_id], replay_id(injection)
    result = replay(ws, injection.run_id, injection.patch, cases=cases, llm=llm, run_id=fixed)
    try:
        return _outcome(
            task, ws, result.run_id, not result.case(injection.case_id).correct and bool(result.patched), llm
        )
    finally:
        ws.store.delete_run(result.run_id)
        journal_path(ws.path, result.run_id).unlink(missing_ok=True)


def _outcome(task: FaultTask, ws: Workspace, replay_run: str, flipped: bool, llm: Any) -> FaultOutcome:
    """What a replay came to: for a flip, the label, every method's attribution and what was asked."""
    injection = task.injection
    outcome = FaultOutcome(replay_run, flipped, injection.op_id)
    if not flipped:
        return outcome
    ingest_journal(ws.store, journal_path(ws.path, replay_run))
    if "deleted_unit" in injection.meta:
        outcome.op_id = _deletion_step(ws, injection, replay_run)
    graph, case = ws.view(replay_run), ws.case(replay_run, injection.case_id)
    outcome.attributions = {m.name: m.build(llm).attribute(graph, case) for m in task.methods}
    if task.verify:
        outcome.verdicts = {
            name: verify_in_scratch(ws, claim, llm) for name, claim in outcome.attributions.items()
        }
    if task.memtracebench:
        outcome.graph = _memtracebench_graph(ws, replay_run, injection, outcome.op_id)
    if task.keep_replay:
        outcome.replay = run_rows(ws.store, replay_run)
    return outcome


class ScratchRuns:
    """Scratch workspaces of this process, one per shipped run, kept for the next task breaking the same
    run (rebuilding a run costs more than replaying it); the oldest go beyond `keep`."""

    def __init__(self, keep: int = 4) -> None:
        self.keep = keep
        self.open: OrderedDict[str, tuple[Path, Workspace]] = OrderedDict()

    def workspace(self, source: ShippedRun) -> Workspace:
        if source.token in self.open:
            self.open.move_to_end(source.token)
            return self.open[source.token][1]
        path = Path(tempfile.mkdtemp(prefix="fault-", dir=worker_folder()))  # gone with the process
        source.unpack(path)
        self.open[source.token] = (path, Workspace(path))
        while len(self.open) > self.keep:
            self._drop(next(iter(self.open)))
        return self.open[source.token][1]

    def close(self) -> None:
        """Close and remove every scratch workspace (the driver, once its injections are done)."""
        while self.open:
            self._drop(next(iter(self.open)))

    def _drop(self, token: str) -> None:
        path, ws = self.open.pop(token)
        ws.close()
        shutil.rmtree(path, ignore_errors=True)


#: This process's scratch workspaces for fault tasks.
SCRATCH = ScratchRuns()


def _deletion_step(ws: Workspace, injection: Injection, replay_run: str) -> str:
    """The step of the replay that deleted the unit inside the injected decision (the true label)."""
    unit = injection.meta["deleted_unit"]
    for op in ws.store.ops(replay_run):
        if op.parent_op == injection.op_id and op.category == "deletion" and op.metadata.get("unit") == unit:
            return op.id
    return injection.op_id  # the decision deleted it itself


def _memtracebench_graph(ws: Workspace, replay_run: str, injection: Injection, op_id: str) -> dict[str, Any]:
    """The replayed run as a smartcomment graph with its injected fault as the gold annotation."""
    case = ws.case(replay_run, injection.case_id)
    graph = ws.graph(replay_run)
    data = export_smartcomment(ws.store, replay_run)
    data["data"]["annotations"] = [
        {
            "query_id": case.id,
            "query": case.question,
            "golden_answers": case.gold,
            "golden_answers_id": None,
            "prediction": case.prediction,
            "prediction_id": case.prediction_var,
            "source_evidence_ids": [graph.versions(e)[-1].id for e in case.evidence if graph.versions(e)],
            "final_error_type": injection.error_type,
            "final_op_id": op_id,
        }
    ]
    return data


@dataclass(slots=True)
class Injecting:
    """The driver's side: every system's planned injections, and what to do with each outcome."""

    planned: list[tuple[str, list[Injection]]]
    methods: list[MethodRecipe]
    per_type: int
    memtracebench: bool = False
    keep_replays: bool = False
    verify: bool = False
    #: (system index, plan index) -> the outcome of a flipped injection, filled as they arrive.
    flipped: dict[tuple[int, int], FaultOutcome] = field(default_factory=dict)


def inject_all(
    job: Injecting,
    ws: Workspace,
    spec: ExecutorSpec,
    *,
    llm: Any = None,
    progress: Progress = no_progress,
    on_outcome: Callable[[str, Injection, FaultOutcome], None] | None = None,
) -> None:
    """Try injections until each system has `per_type` flips of every type (or runs out of plans).

    In waves: each (system, type) short of `per_type` by n gets its next n untried plans, so no more
    are tried than one at a time would try, and the same ones whatever the executor."""
    queues = [_by_type(plans) for _, plans in job.planned]
    kept: Counter[tuple[int, str]] = Counter()
    resolved = [0] * len(job.planned)

    def apply(wave: list[tuple[int, int]], index: int, outcome: FaultOutcome) -> None:
        s, i = wave[index]
        name, plans = job.planned[s]
        injection = plans[i]
        injection.replay_run, injection.flipped = outcome.replay_run, outcome.flipped
        if outcome.flipped:
            injection.op_id = outcome.op_id
            kept[(s, injection.error_type)] += 1
            job.flipped[(s, i)] = outcome
            if outcome.replay is not None:
                ws.store.replace_run(*outcome.replay)
        if on_outcome is not None:
            on_outcome(name, injection, outcome)
        resolved[s] += 1
        progress(f"{name}: injecting", resolved[s], len(plans))

    for name, plans in job.planned:
        progress(f"{name}: injecting", 0, len(plans))
    try:
        _waves(job, ws, spec, llm, queues, kept, apply)
    finally:
        SCRATCH.close()  # the scratch workspaces this process made, when it ran tasks itself
    for name, plans in job.planned:  # the rest were not needed: their type had enough flips
        progress(f"{name}: injecting", len(plans), len(plans))


def _waves(
    job: Injecting,
    ws: Workspace,
    spec: ExecutorSpec,
    llm: Any,
    queues: list[dict[str, deque[int]]],
    kept: Counter[tuple[int, str]],
    apply: Callable[[list[tuple[int, int]], int, FaultOutcome], None],
) -> None:
    """Run wave after wave until no (system, type) needs another plan or has one left."""
    shipped: dict[str, ShippedRun] = {}
    while wave := _next_wave(queues, kept, job.per_type):
        tasks = []
        for s, i in wave:
            injection = job.planned[s][1][i]
            if injection.run_id not in shipped:
                shipped[injection.run_id] = ship_run(ws.store, injection.run_id)
            source = shipped[injection.run_id]
            tasks.append(
                FaultTask(source, injection, job.methods, job.memtracebench, job.keep_replays, job.verify)
            )
        if spec.runs_here(len(tasks)):
            for index, task in enumerate(tasks):
                apply(wave, index, run_fault(task, llm))
        else:
            run_tasks(run_fault, tasks, spec, partial(apply, wave))


def _by_type(plans: list[Injection]) -> dict[str, deque[int]]:
    """Plan indexes per error type, in plan order."""
    queues: dict[str, deque[int]] = {}
    for index, injection in enumerate(plans):
        queues.setdefault(injection.error_type, deque()).append(index)
    return queues


def _next_wave(
    queues: list[dict[str, deque[int]]], kept: Counter[tuple[int, str]], per_type: int
) -> list[tuple[int, int]]:
    """For every (system, type) still short of `per_type`, that many of its next plans, in plan order."""
    wave = []
    for s, by_type in enumerate(queues):
        for kind, queue in by_type.items():
            for _ in range(min(per_type - kept[(s, kind)], len(queue))):
                wave.append((s, queue.popleft()))
    return sorted(wave)
