"""Proposals: one change of one tunable each, in the order the diagnosis ranks the tunables.

Offline, a guided search: each routed setting moves along its grid in the direction the error types
argue for (retrieval misses -> a larger top_k, trimming losses -> a larger budget, answers to
unanswerable questions -> a higher answer-support threshold, ...), nearest values first (both ways
when the vote is split), skipping values already rejected for this config (`tried`): each routed
setting gets up to `per_tunable` places in rank order, and places left over go to further values of
the best-ranked ones, until `limit` proposals are collected. With an LLM the best-ranked prompt is
rewritten first (textgrad.py), then settings fill the remaining places. Prompts are never proposed
offline (no offline engine reads them), nor offline-only settings with an LLM (tunables.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..systems.tunables import grids as declared_grids
from .diagnose import Diagnosis, TunableFeedback
from .textgrad import rewrite_prompt
from .tunables import applies, is_prompt, is_setting, moves

_WAY = {1: "larger", -1: "smaller", 0: "either way"}


@dataclass(slots=True)
class Proposal:
    """A candidate change and, once evaluated, its validation accuracy."""

    tunable: str
    old: Any
    new: Any
    kind: str  # "setting" | "prompt"
    reason: str
    status: str = "proposed"  # proposed | evaluated | rejected
    validation: float | None = None

    def apply(self, config: BaseModel) -> BaseModel:
        return config.model_copy(update={self.tunable: self.new})

    def label(self, width: int = 48) -> str:
        """`name: old -> new` for tables (prompts shortened)."""
        if self.kind == "prompt":
            text = " ".join(str(self.new).split())
            short = f"{text[: width - 3]}..." if len(text) > width else text
            return f"{self.tunable}: rewrite '{short}'"
        return f"{self.tunable}: {self.old} -> {self.new}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tunable": self.tunable,
            "kind": self.kind,
            "old": self.old,
            "new": self.new,
            "reason": self.reason,
            "status": self.status,
            "validation": self.validation,
        }


def value_key(tunable: str, value: Any) -> str:
    """A stable key for one value of one tunable (prompts by hash)."""
    text = json.dumps(value, sort_keys=True, default=str)
    if len(text) > 64:
        text = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
    return f"{tunable}={text}"


def propose(
    config: BaseModel,
    diagnosis: Diagnosis,
    *,
    system: str,
    tried: set[str],
    limit: int = 4,
    per_tunable: int = 2,
    llm: Any = None,
    prompt_history: dict[str, list[str]] | None = None,
) -> list[Proposal]:
    """Up to `limit` proposals (plus any rejected rewrites, marked `rejected`, which do not count).

    Places are filled by rank: first up to `per_tunable` values of each routed setting, best-ranked
    first; places still free then take further values of the best-ranked settings.
    """
    offline = llm is None
    ranked = [f for f in diagnosis.ranked() if applies(config, f.tunable, offline=offline)]
    proposals: list[Proposal] = []
    prompts = [f for f in ranked if is_prompt(config, f.tunable)]
    if prompts:  # one rewrite a round: of the prompt with the most verified attributions
        feedback = prompts[0]
        history = (prompt_history or {}).get(feedback.tunable, [])
        proposals.append(_rewrite(config, feedback, system, llm, history))
    settings = [f for f in ranked if is_setting(config, f.tunable)]
    grids = declared_grids(config)
    queues = {
        f.tunable: [
            v
            for v in moves(grids[f.tunable], getattr(config, f.tunable), f.direction, decisive=f.decisive)
            if value_key(f.tunable, v) not in tried
        ]
        for f in settings
    }

    def free() -> int:
        return limit - sum(p.status != "rejected" for p in proposals)

    for quota in (per_tunable, None):
        for feedback in settings:
            queue = queues[feedback.tunable]
            take = queue[: min(free(), len(queue) if quota is None else quota)]
            del queue[: len(take)]
            name = feedback.tunable
            proposals += [
                Proposal(name, getattr(config, name), v, "setting", _reason(feedback)) for v in take
            ]
    return proposals


def _reason(feedback: TunableFeedback) -> str:
    ops = ", ".join(f"{op} x{n}" for op, n in feedback.ops.most_common(2))
    errors = ", ".join(f"{kind} {n}" for kind, n in feedback.errors.most_common(2))
    why = feedback.why.most_common(1)[0][0] if feedback.why else ""
    return (
        f"{feedback.attributions} attributions ({feedback.verified} verified; {errors}) at {ops}: "
        f"{why}; move {_WAY[feedback.direction]}{'' if feedback.decisive else ' (split vote)'}"
    )


def _rewrite(
    config: BaseModel, feedback: TunableFeedback, system: str, llm: Any, history: list[str]
) -> Proposal:
    name = feedback.tunable
    old = getattr(config, name)
    new, why = rewrite_prompt(llm, system, name, old, feedback, history)
    reason = f"{_reason(feedback)}; {why}"
    if new is None:
        return Proposal(name, old, old, "prompt", reason, status="rejected")
    return Proposal(name, old, new, "prompt", reason)
