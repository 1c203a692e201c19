"""Run a config over conversations and score it, never running the same evaluation twice.

An evaluation of (system, config, conversation, model) is deterministic offline (and replayed from
the LLM cache with a model), so results are kept in memory by that key for the whole optimisation.
Runs the loop needs later, training runs (attributed and replayed) and holdout runs, are recorded
into the workspace; only training runs get session snapshots (replay resumes from them; a system's
snapshots can take tens of MB per run). Validation runs only need their verdicts and are recorded
into a scratch workspace that is deleted straight after, so that a long loop does not fill the disk.
With an executor, the evaluations one step needs (every proposal on every validation conversation)
run in workers as one batch; kept runs come back and are ingested, under ids derived from what they
are, so the workspace and the scores are the same whatever the executor.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..datasets import Conversation
from ..executors import ExecutorSpec
from ..graph import Store
from ..llm import Usage, usage_scope
from ..progress import Progress
from ..systems import RunResult, run_conversation
from ..systems.base import MemorySystem, SystemConfig
from ..systems.run_tasks import RunTask, derived_run_id, record_runs
from .tunables import config_hash

#: One evaluation: the config's hash, the config, the conversation.
_Wanted = tuple[str, SystemConfig, Conversation]


@dataclass(slots=True)
class ConversationScore:
    """One config on one conversation: its run (when kept) and each question's verdict."""

    conversation: str
    run_id: str | None
    outcomes: list[tuple[str, bool]]
    usage: Usage = field(default_factory=Usage)


@dataclass(slots=True)
class Score:
    """One config on a list of conversations; accuracy is pooled over their questions."""

    parts: list[ConversationScore]
    usage: Usage = field(default_factory=Usage)  # what this call spent (cached parts spend nothing)

    @property
    def outcomes(self) -> list[bool]:
        return [ok for part in self.parts for _, ok in part.outcomes]

    @property
    def accuracy(self) -> float:
        outcomes = self.outcomes
        return sum(outcomes) / len(outcomes) if outcomes else 0.0

    @property
    def run_ids(self) -> list[str]:
        return [p.run_id for p in self.parts if p.run_id]


class Evaluator:
    """Runs `system_class` configs into `workspace` (or a scratch one) with an in-memory cache."""

    def __init__(
        self,
        system_class: type[MemorySystem],
        workspace: str | Path,
        *,
        dataset: str,
        llm: Any = None,
        judge: Any = None,
        progress: Progress | None = None,
        executor: ExecutorSpec | None = None,
    ) -> None:
        self.system_class = system_class
        self.judge = judge  # None: the runner's default for the system's client
        self.workspace = Path(workspace)
        self.dataset = dataset
        self.llm = llm
        self.progress = progress
        self.model = getattr(llm, "model", None) or "offline"
        self.cache: dict[tuple[str, str, bool], ConversationScore] = {}
        self.runs = 0  # evaluations actually run (not answered from the cache)
        # Model calls stay in this process (their client, cache and usage counting live here).
        self.executor = executor if executor is not None and llm is None else ExecutorSpec(workers=1)
        self._taken: set[str] | None = None  # run ids in the workspace, read on the first kept run

    def score(
        self,
        config: SystemConfig,
        conversations: list[Conversation],
        *,
        label: str,
        keep: bool = False,
        snapshots: bool = False,
    ) -> Score:
        """Score `config` on `conversations`; `keep` records the runs into the workspace (`snapshots`:
        with session snapshots, for runs that will be replayed)."""
        return self.score_all([config], conversations, label=label, keep=keep, snapshots=snapshots)[0]

    def score_all(
        self,
        configs: list[SystemConfig],
        conversations: list[Conversation],
        *,
        label: str,
        keep: bool = False,
        snapshots: bool = False,
    ) -> list[Score]:
        """Score each of `configs` on `conversations`, running what the cache lacks as one batch."""
        wanted: dict[tuple[str, str], _Wanted] = {}
        for config in configs:
            key = config_hash(config)
            for conversation in conversations:
                if self._cached(key, conversation.id, keep) is None:
                    wanted.setdefault((key, conversation.id), (key, config, conversation))
        spent: dict[str, Usage] = {}
        total, done = len(wanted), 0

        def arrived(item: _Wanted, part: ConversationScore) -> None:
            nonlocal done
            self.cache[(item[0], item[2].id, keep)] = part
            spent.setdefault(item[0], Usage()).add(part.usage)
            done += 1
            if self.progress:
                self.progress(label, done, total)

        self._evaluate(list(wanted.values()), label, keep, snapshots, arrived)
        scores = []
        for config in configs:
            key = config_hash(config)
            parts = [self._cached(key, c.id, keep) for c in conversations]
            scores.append(Score([p for p in parts if p is not None], spent.pop(key, Usage())))
        return scores

    def _cached(self, key: str, conversation: str, keep: bool) -> ConversationScore | None:
        """A kept run serves a scratch request too (same verdicts), never the other way round."""
        return self.cache.get((key, conversation, True)) or (
            None if keep else self.cache.get((key, conversation, False))
        )

    def _evaluate(
        self,
        wanted: list[_Wanted],
        label: str,
        keep: bool,
        snapshots: bool,
        arrived: Callable[[_Wanted, ConversationScore], None],
    ) -> None:
        """Run `wanted` here one by one, or in workers; `arrived(item, part)` in the order of `wanted`."""
        self.runs += len(wanted)
        if self.executor.runs_here(len(wanted)):
            for item in wanted:
                arrived(item, self._run(item[1], item[2], label, keep, snapshots))
            return
        tasks = [
            self._task(config, conversation, label, keep, snapshots) for _, config, conversation in wanted
        ]

        def done(index: int, result: RunResult) -> None:
            outcomes = [(case.id, case.correct) for case in result.cases]
            run_id = result.run_id if keep else None
            arrived(wanted[index], ConversationScore(wanted[index][2].id, run_id, outcomes))

        if keep:
            self.workspace.mkdir(parents=True, exist_ok=True)
        record_runs(tasks, self.workspace, self.executor, done)

    def _task(
        self, config: SystemConfig, conversation: Conversation, label: str, keep: bool, snapshots: bool
    ) -> RunTask:
        """One evaluation as a task for a worker (a scratch workspace there; the record back if kept)."""
        return RunTask(
            self.system_class.name,
            config.model_copy(deep=True),
            conversation,
            self.dataset,
            self._run_id(config, conversation, keep),
            self.judge,
            name=f"optimize/{label}/{config_hash(config)}/{conversation.id}",
            metadata={"optimize": label, "config_hash": config_hash(config)},
            snapshots=snapshots,
            keep=keep,
        )

    def _run_id(self, config: SystemConfig, conversation: Conversation, keep: bool) -> str:
        """An id from what the run is; a kept one also from the ids the workspace already holds."""
        if not keep:
            return derived_run_id(
                self.system_class.name, conversation.id, self.dataset, config.model_dump(), ()
            )
        if self._taken is None:
            store = Store(self.workspace)
            try:
                self._taken = {run.id for run in store.runs()}
            finally:
                store.close()
        run_id = derived_run_id(
            self.system_class.name, conversation.id, self.dataset, config.model_dump(), self._taken
        )
        self._taken.add(run_id)
        return run_id

    def _run(
        self, config: SystemConfig, conversation: Conversation, label: str, keep: bool, snapshots: bool
    ) -> ConversationScore:
        system = self.system_class(config.model_copy(deep=True), llm=self.llm)
        name = f"optimize/{label}/{config_hash(config)}/{conversation.id}"
        meta = {"optimize": label, "config_hash": config_hash(config)}
        with usage_scope(f"optimize {label} {conversation.id}") as usage:
            if keep:
                self.workspace.mkdir(parents=True, exist_ok=True)
                result = run_conversation(
                    system,
                    conversation,
                    self.workspace,
                    judge=self.judge,
                    dataset=self.dataset,
                    name=name,
                    metadata=meta,
                    snapshots=snapshots,
                    run_id=self._run_id(config, conversation, keep),
                )
            else:
                scratch = Path(tempfile.mkdtemp(prefix="optimize-scratch-", dir=self._scratch_root()))
                try:
                    result = run_conversation(
                        system,
                        conversation,
                        scratch,
                        judge=self.judge,
                        dataset=self.dataset,
                        name=name,
                        metadata=meta,
                        snapshots=False,
                    )
                finally:
                    shutil.rmtree(scratch, ignore_errors=True)
        outcomes = [(case.id, case.correct) for case in result.cases]
        return ConversationScore(
            conversation.id, result.run_id if keep else None, outcomes, usage.usage.copy()
        )

    def _scratch_root(self) -> Path:
        root = self.workspace / "optimize-scratch"
        root.mkdir(parents=True, exist_ok=True)
        return root

    def close(self) -> None:
        """Remove the scratch folder (empty unless a run was interrupted)."""
        shutil.rmtree(self.workspace / "optimize-scratch", ignore_errors=True)
