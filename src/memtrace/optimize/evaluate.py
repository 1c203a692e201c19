"""Run a config over conversations and score it, never running the same evaluation twice.

An evaluation of (system, config, conversation, model) is deterministic offline (and replayed from
the LLM cache with a model), so results are kept in memory by that key for the whole optimisation.
Runs the loop needs later, training runs (attributed and replayed) and holdout runs, are recorded
into the workspace; only training runs get session snapshots (replay resumes from them; a system's
snapshots can take tens of MB per run). Validation runs only need their verdicts and are recorded
into a scratch workspace that is deleted straight after, so that a long loop does not fill the disk.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..datasets import Conversation
from ..llm import Usage, usage_scope
from ..progress import Progress
from ..systems import run_conversation
from ..systems.base import MemorySystem, SystemConfig
from .tunables import config_hash


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
        key = config_hash(config)
        parts, spent = [], Usage()
        for done, conversation in enumerate(conversations, 1):
            # A kept run serves a scratch request too (same verdicts), never the other way round.
            part = self.cache.get((key, conversation.id, True)) or (
                None if keep else self.cache.get((key, conversation.id, False))
            )
            if part is None:
                part = self._run(config, conversation, label, keep, snapshots)
                self.cache[(key, conversation.id, keep)] = part
                spent.add(part.usage)
            parts.append(part)
            if self.progress:
                self.progress(label, done, len(conversations))
        return Score(parts, spent)

    def _run(
        self, config: SystemConfig, conversation: Conversation, label: str, keep: bool, snapshots: bool
    ) -> ConversationScore:
        system = self.system_class(config.model_copy(deep=True), llm=self.llm)
        name = f"optimize/{label}/{config_hash(config)}/{conversation.id}"
        meta = {"optimize": label, "config_hash": config_hash(config)}
        self.runs += 1
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
