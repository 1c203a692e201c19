"""Attribute and verify the training failures, then group them by the tunable they point at.

The flow method attributes every failed case of the training runs (stored attributions are reused,
so a config already diagnosed costs nothing); replay verifies them (ResponseErrors by elimination,
the others by a repaired re-execution, at most `verify_limit` replays a round, spread over the error
types in case order); each attribution (verification never moves a claim, it only records what it
confirmed) is routed to tunables (routing.py). Confirmed attributions rank a tunable first.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..attribution.engine import attribute, make_method
from ..attribution.model import Attribution, save_attribution, settings_key
from ..attribution.verify.counterfactual import verify
from ..graph import Workspace
from ..progress import Progress
from ..vocabulary import CONFIRMED_VERDICTS, ErrorType
from .routing import route

EXAMPLES = 6


@dataclass(slots=True)
class TunableFeedback:
    """Everything the training failures say about one tunable."""

    tunable: str
    prompt: bool
    attributions: int = 0
    verified: int = 0
    votes: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    ops: Counter[str] = field(default_factory=Counter)
    why: Counter[str] = field(default_factory=Counter)
    examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def direction(self) -> int:
        """The direction most attributions argue for (verified ones count twice): +1, -1 or 0."""
        total = sum(direction * n for direction, n in self.votes.items())
        return (total > 0) - (total < 0)

    @property
    def decisive(self) -> bool:
        """Whether at least two thirds of the (weighted) votes agree on the direction."""
        way = self.votes.get(self.direction, 0)
        return self.direction != 0 and 3 * way >= 2 * sum(self.votes.values())

    def summary(self) -> dict[str, Any]:
        return {
            "tunable": self.tunable,
            "kind": "prompt" if self.prompt else "setting",
            "attributions": self.attributions,
            "verified": self.verified,
            "direction": self.direction,
            "decisive": self.decisive,
            "votes": {str(k): n for k, n in sorted(self.votes.items())},
            "errors": dict(self.errors),
            "ops": dict(self.ops),
            "why": self.why.most_common(1)[0][0] if self.why else "",
        }


@dataclass(slots=True)
class Diagnosis:
    """The training failures of one config: attributions, verification outcomes, routed feedback."""

    failed: int = 0
    error_types: Counter[str] = field(default_factory=Counter)
    verification: Counter[str] = field(default_factory=Counter)
    unrouted: int = 0
    feedback: dict[str, TunableFeedback] = field(default_factory=dict)

    def ranked(self) -> list[TunableFeedback]:
        """Tunables by verified attributions, then by all attributions (the order proposals follow)."""
        return sorted(self.feedback.values(), key=lambda f: (-f.verified, -f.attributions, f.tunable))

    def summary(self) -> dict[str, Any]:
        return {
            "failed": self.failed,
            "error_types": dict(self.error_types),
            "verification": dict(self.verification),
            "unrouted": self.unrouted,
            "feedback": [f.summary() for f in self.ranked()],
        }


def diagnose(
    workspace: str | Path,
    system: str,
    run_ids: list[str],
    config: Any,
    *,
    llm: Any = None,
    verify_limit: int | None = 100,
    progress: Progress | None = None,
) -> Diagnosis:
    """Attribute, verify and route the failed cases of `run_ids` (runs of `system` under `config`)."""
    method = make_method("flow")
    key = settings_key(method.settings())
    fields = set(type(config).model_fields)
    prompts = {name for name in fields if name.endswith("_prompt")}
    result = Diagnosis()
    with Workspace(workspace) as ws:
        attributions: list[Attribution] = []
        for done, run_id in enumerate(run_ids, 1):
            attributions += attribute(ws, method, run=run_id)
            if progress:
                progress("attributing", done, len(run_ids))
        checked = _verify(ws, attributions, key, llm, verify_limit, progress)
        cases = {(c.run_id, c.id): c for run_id in run_ids for c in ws.cases(run_id)}
        views: dict[str, Any] = {}
        for item in checked:
            result.failed += 1
            result.error_types[item.error_type] += 1
            result.verification[item.verified or "not verified"] += 1
            graph = views.get(item.run_id) or views.setdefault(item.run_id, ws.view(item.run_id))
            if not item.determined or item.op_id is None or not graph.has_op(item.op_id):
                result.unrouted += 1
                continue
            op, case = graph.op(item.op_id), cases[(item.run_id, item.case_id)]
            signals = route(system, graph, op, item.error_type, case, fields)
            if not signals:
                result.unrouted += 1
            good = item.verified in CONFIRMED_VERDICTS and not item.verdict_stale  # this verifier's word
            for signal in signals:
                feedback = result.feedback.get(signal.tunable)
                if feedback is None:
                    feedback = result.feedback[signal.tunable] = TunableFeedback(
                        signal.tunable, signal.tunable in prompts
                    )
                feedback.attributions += 1
                feedback.verified += good
                feedback.votes[signal.direction] += 2 if good else 1
                feedback.errors[item.error_type] += 1
                feedback.ops[op.name] += 1
                feedback.why[signal.why] += 1
                if len(feedback.examples) < EXAMPLES and (good or len(feedback.examples) < EXAMPLES // 2):
                    feedback.examples.append(_example(item, case, op.name))
    return result


def _verify(
    ws: Workspace,
    attributions: list[Attribution],
    key: str,
    llm: Any,
    limit: int | None,
    progress: Progress | None,
) -> list[Attribution]:
    """Verify the unverified attributions and those verified by another verifier (replays capped by
    `limit`, spread over error types)."""
    pending = [a for a in attributions if (a.verified is None or a.verdict_stale) and a.determined]
    free = [a for a in pending if a.error_type == ErrorType.RESPONSE]
    by_type: dict[str, list[Attribution]] = {}
    for a in pending:
        if a.error_type != ErrorType.RESPONSE:
            by_type.setdefault(a.error_type, []).append(a)
    replayed: list[Attribution] = []
    queues = list(by_type.values())
    while queues and (limit is None or len(replayed) < limit):
        for queue in list(queues):
            if limit is not None and len(replayed) >= limit:
                break
            replayed.append(queue.pop(0))
            if not queue:
                queues.remove(queue)
    outcomes: dict[tuple[str, str], Attribution] = {}
    todo = [*free, *replayed]
    for done, item in enumerate(todo, 1):
        outcome = verify(ws, item, llm=llm)
        checked = outcome.record()
        save_attribution(ws.store, checked, key)
        outcomes[(item.run_id, item.case_id)] = checked
        if progress:
            progress("verifying", done, len(todo))
    return [outcomes.get((a.run_id, a.case_id), a) for a in attributions]


def _example(item: Attribution, case: Any, op_name: str) -> dict[str, Any]:
    """A failure as a prompt rewrite sees it: question, gold, prediction, the blame and why."""
    return {
        "question": case.question,
        "gold": list(case.gold),
        "prediction": case.prediction,
        "error_type": item.error_type,
        "operation": op_name,
        "verified": item.verified,
        "explanation": " ".join(item.explanation.split())[:400],
    }
