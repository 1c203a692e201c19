"""Re-execute a recorded run with some operations' outputs changed: the graph made executable.

`replay(workspace, run, patches)` finds the earliest patched operation, restarts the system from
the last snapshot before it (everything earlier is copied from the original run, not re-run),
re-executes from there with the patches applied, and answers the chosen questions. The result is
a new run whose `parent_run` is the original and whose metadata lists the patches. Offline the
systems are deterministic, so an unpatched replay reproduces the original exactly; with an LLM,
unchanged prompts are answered from the record/replay cache.

Patches are keyed by operation id (trace/patch.py):
    Patch().replace_output("extracted_facts", [...])    replace an output the system goes on to use
    Patch().cancel("mem-3") / .delete("mem-3") / .replace("mem-3", value)   change a memory write
The older dict form ({"memory": {"mem-3": CANCEL}}) is still accepted.

Inside `replay_ids(seed)` the n-th replay's run id is derived from (seed, n), so the same work
replayed in any process, on any executor, makes the same runs (attribution/verify_tasks.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MemtraceError, NotFoundError, NotReplayableError
from ..eval import make_judge
from ..graph import Run, Workspace
from ..trace import Recorder
from ..trace.patch import CANCEL, DELETE, Patch, PatchPolicy
from .registry import find_system, system_class
from .runner import CaseResult, answer_questions, construct
from .snapshots import MarkerWriter, load_snapshots, restore, snapshot_markers

__all__ = ["CANCEL", "DELETE", "Patch", "ReplayIds", "ReplayResult", "replay", "replay_ids"]

#: Patches as callers give them: a `Patch`, or its JSON / older dict form, per operation id.
Patches = Mapping[str, Patch | Mapping[str, Any]]


@dataclass(slots=True)
class ReplayResult:
    """The replayed run and what its questions came out as."""

    run_id: str
    parent_run: str
    patched: list[str]
    cases: list[CaseResult] = field(default_factory=list)
    resumed_after_seq: int = 0
    seconds: float = 0.0
    #: Operations re-executed (the reused prefix before `resumed_after_seq` is copied, not re-run).
    replayed_ops: int = 0

    def case(self, case_id: str) -> CaseResult:
        for result in self.cases:
            if result.id == case_id:
                return result
        raise NotFoundError(f"replay {self.run_id} did not answer case {case_id!r}")


@dataclass(slots=True)
class ReplayIds:
    """The ids given to the replays started inside `replay_ids`, and who to tell when each has closed
    (a worker reads the replay's journal then, before anything indexes and removes it)."""

    seed: str
    closed: Callable[[Run], None] | None = None
    made: list[str] = field(default_factory=list)

    def take(self) -> str:
        run_id = hashlib.sha256(f"{self.seed}/{len(self.made)}".encode()).hexdigest()[:12]
        self.made.append(run_id)
        return run_id


_IDS: ContextVar[ReplayIds | None] = ContextVar("memtrace_replay_ids", default=None)


@contextlib.contextmanager
def replay_ids(seed: str, closed: Callable[[Run], None] | None = None) -> Iterator[ReplayIds]:
    """Replays started in the block get ids derived from `seed` (the n-th from (seed, n)); `closed` is
    called with each replay's run once its recording has closed, even when the replay failed."""
    ids = ReplayIds(seed, closed)
    token = _IDS.set(ids)
    try:
        yield ids
    finally:
        _IDS.reset(token)


def replay(
    workspace: str | Path | Workspace,
    run: str,
    patches: Patches | None = None,
    *,
    cases: list[str] | None = None,
    llm: Any = None,
    name: str | None = None,
    run_id: str | None = None,
) -> ReplayResult:
    """Re-execute run `run` with `patches` applied; answer `cases` (default: all of its questions).

    Given an open Workspace, replays record through its store (no connection opened or closed per
    replay, which is what verifying thousands of attributions needs); their journals are indexed
    at the workspace's next open. `run_id` fixes the replay's id (a task's result must not depend on
    where it ran).
    """
    typed = {op_id: Patch.from_json(patch) for op_id, patch in (patches or {}).items()}
    if isinstance(workspace, Workspace):
        return _replay(workspace, run, typed, cases=cases, llm=llm, name=name, run_id=run_id)
    with Workspace(workspace) as ws:
        return _replay(ws, run, typed, cases=cases, llm=llm, name=name, run_id=run_id)


def _replay(
    ws: Workspace,
    run: str,
    patches: dict[str, Patch],
    *,
    cases: list[str] | None,
    llm: Any,
    name: str | None,
    run_id: str | None = None,
) -> ReplayResult:
    started = time.perf_counter()
    original = ws.run(run)
    earlier = PatchPolicy.patches_of(original.metadata)
    if original.parent_run and earlier is not None:
        # A replayed run is its parent with patches: replay the parent with those plus these.
        merged = {**earlier, **patches}
        again = name or f"{original.name}+"
        return _replay(ws, original.parent_run, merged, cases=cases, llm=llm, name=again, run_id=run_id)
    graph = ws.graph(original.id)
    patch_seqs = _patch_seqs(graph, patches)
    recorded_by = find_system(original.system)
    if recorded_by is not None and not recorded_by.snapshots:
        raise NotReplayableError(
            f"run {original.id} ({original.system}) cannot be replayed: that system's state cannot be "
            "snapshotted (it wraps live clients), so no re-execution can start from it"
        )
    conversation, snapshots = load_snapshots(ws.path, original.id)
    first_question = _question_start(ws, original.id, conversation, cases)
    wanted = [q for q in conversation.questions if cases is None or q.id in cases]
    if cases is not None and len(wanted) != len(set(cases)):
        missing = sorted(set(cases) - {q.id for q in wanted})
        raise NotFoundError(f"run {original.id} has no question(s) {', '.join(missing)}")
    first_patch = min(patch_seqs, default=2**62)
    # Only snapshots signed with the user's key are listed; construction re-runs past the others.
    construction = next((s for s in snapshots if s.label == "construction"), None)
    markers = snapshot_markers(ws.path, original.id)
    question_stage = first_patch > markers.get("construction", 2**62)
    system = system_class(original.system or "")(
        system_class(original.system or "").Config(**original.config), llm=llm
    )
    snapshot = None
    if construction is not None and question_stage:
        # Question stage: start at the first wanted question so its operations keep their seqs.
        snapshot = construction
        resume_seq = first_question - 1 if first_question else construction.seq
    else:
        snapshot = max((s for s in snapshots if s.seq < first_patch), key=lambda s: s.seq, default=None)
        resume_seq = snapshot.seq if snapshot is not None else 0
    asked = wanted
    if question_stage and construction is None and wanted:
        # No trusted state at question time: answer the earlier questions too, as the recording
        # did, so the wanted ones (and the patched operation) keep their seqs.
        last = max(conversation.questions.index(q) for q in wanted)
        asked = conversation.questions[: last + 1]
    ids = _IDS.get()
    recorder = Recorder(
        ws.store,
        run_id=run_id if run_id is not None else ids.take() if ids is not None else None,
        name=name or f"{original.name}~replay",
        system=original.system,
        dataset=original.dataset,
        conversation=original.conversation,
        config=original.config,
        metadata={"llm": getattr(llm, "model", None) or "offline"},
        patch_policy=PatchPolicy(patches, resume_from=(original.id, resume_seq)),
    )
    with _announced(ids, recorder), recorder:
        system.start(recorder, conversation)
        if construction is not None and resume_seq >= construction.seq:
            restore(system, construction, recorder, conversation)
        else:
            if snapshot is not None:
                restore(system, snapshot, recorder, conversation)
            construct(
                system,
                conversation,
                recorder,
                from_session=snapshot.next_session if snapshot else 0,
                writer=MarkerWriter(recorder, markers, first_patch),
            )
        answered = answer_questions(system, asked, recorder, _judge_like(ws, original.id, llm))
        results = [r for r in answered if any(q.id == r.id for q in wanted)]
        patched = list(recorder.patched)
    return ReplayResult(
        recorder.id,
        original.id,
        patched,
        results,
        resume_seq,
        time.perf_counter() - started,
        recorder.ops_recorded,
    )


def _patch_seqs(graph: Any, patches: dict[str, Patch]) -> list[int]:
    """The seqs of the recorded operations patched (NotFoundError names a bad op id).

    A patch may also address an operation of the re-execution that the recording does not have (an
    earlier patch that adds outputs moves every later seq): its id must then lie past that patch.
    """
    known = [op_id for op_id in patches if graph.has_op(op_id)]
    seqs = [graph.op(op_id).seq for op_id in known]
    for op_id in patches:
        if op_id in known:
            continue
        _, _, number = op_id.rpartition("#")
        if not seqs or not number.isdigit() or int(number) <= min(seqs):
            graph.op(op_id)  # raises NotFoundError naming it
    return seqs


@contextlib.contextmanager
def _announced(ids: ReplayIds | None, recorder: Recorder) -> Iterator[None]:
    """Tell `replay_ids`'s listener about the replay once its recorder has closed (entered first, so
    it exits after the recorder)."""
    try:
        yield
    finally:
        if ids is not None and ids.closed is not None:
            ids.closed(recorder.run)


def _judge_like(ws: Workspace, run_id: str, llm: Any) -> Any:
    """The kind of judge the original run's verdicts came from, so a replayed verdict compares."""
    methods = {c.metadata.get("method") for c in ws.cases(run_id) if c.verdict is not None}
    if "llm" in methods:
        if llm is None:
            raise MemtraceError(f"run {run_id} was judged by an LLM: replay it with an LLM client")
        return make_judge("llm", client=llm)
    return make_judge("f1" if methods == {"f1"} else "strict")


def _question_start(ws: Workspace, run_id: str, conversation: Any, cases: list[str] | None) -> int | None:
    """The seq of the `question` operation of the first wanted case in the original run."""
    wanted = [q.id for q in conversation.questions if cases is None or q.id in cases]
    if not wanted:
        return None
    graph = ws.graph(run_id)
    first = next((c for c in ws.cases(run_id) if c.id == wanted[0]), None)
    if first is None or not first.prediction_var:
        raise NotFoundError(f"run {run_id}: case {wanted[0]} was never answered")
    answer = graph.producers(first.prediction_var)[-1]
    scope = graph.op(answer.parent_op) if answer.parent_op else answer
    while scope.name != "question" and scope.parent_op:
        scope = graph.op(scope.parent_op)
    return scope.seq
