"""The optimisation loop: diagnose on training, propose, keep what validation confirms, report on holdout.

Each round runs the current config on the training conversations, attributes and verifies their
failures, routes them to tunables and proposes up to `candidates` changes (proposals.py). Every
proposal is evaluated on the validation conversations; the best is kept only when it strictly beats
the current config's validation accuracy, otherwise the round rolls back (the config stays) and the
rejected values are not proposed again for that config. At the end the starting and the final config
answer the holdout conversations, and the delta gets a paired bootstrap interval.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import OptimizeError
from ..executors import ExecutorSpec
from ..llm import usage_scope
from ..progress import Progress
from ..systems.base import SystemConfig
from ..systems.registry import system_class
from .bootstrap import paired_bootstrap
from .diagnose import diagnose
from .evaluate import Evaluator, Score
from .history import OptimizeResult, RoundRecord, save_history
from .proposals import Proposal, propose, value_key
from .splits import Split, make_split
from .tunables import changed, config_hash

#: The decision of a round whose training run had nothing wrong: no attribution, nothing to tune.
NO_FAILURES = "no failures to learn from: every training question was answered correctly"

RoundHook = Callable[[RoundRecord], None]


@dataclass(slots=True)
class _State:
    """The config the loop stands on, its validation accuracy, and what was rejected for it."""

    config: SystemConfig
    validation: float
    tried: dict[str, set[str]] = field(default_factory=dict)
    prompt_history: dict[str, list[str]] = field(default_factory=dict)

    def tried_here(self) -> set[str]:
        return self.tried.setdefault(config_hash(self.config), set())


def start_config(system: str, overrides: dict[str, Any] | None = None) -> SystemConfig:
    """The system's defaults (its best hand-chosen config), with `overrides` applied and validated."""
    cls = system_class(system)
    try:
        return cls.Config(**(overrides or {}))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise OptimizeError(f"start config of {system}: {where}: {first['msg']}") from None


def optimize(
    system: str,
    dataset: str,
    workspace: str | Path,
    *,
    train: int = 4,
    validation: int = 2,
    holdout: int = 2,
    rounds: int = 3,
    llm: Any = None,
    judge: Any = None,
    seed: int | None = None,
    candidates: int = 4,
    per_tunable: int = 2,
    verify_limit: int | None = 100,
    start: dict[str, Any] | None = None,
    questions: int | None = None,
    bootstrap_seed: int = 0,
    resamples: int = 2000,
    progress: Progress | None = None,
    on_round: RoundHook | None = None,
    executor: ExecutorSpec | None = None,
) -> OptimizeResult:
    """Optimise `system`'s tunables on `dataset`; the history is saved into `workspace`.

    `executor` runs the evaluations (a round's proposals on validation, training and holdout runs) in
    workers; default, and always with a model client: this process."""
    started = time.perf_counter()
    config = start_config(system, start)
    if rounds < 0 or candidates < 1:
        raise OptimizeError(
            f"--rounds must be 0 or more and --candidates 1 or more (got {rounds}, {candidates})"
        )
    split = make_split(dataset, train, validation, holdout, seed=seed, questions=questions)
    phase = ["start"]

    def report(stage: str, done: int, total: int) -> None:
        if progress:
            progress(f"{phase[0]} · {stage}", done, total)

    evaluator = Evaluator(
        system_class(system),
        workspace,
        dataset=dataset,
        llm=llm,
        judge=judge,
        progress=report,
        executor=executor,
    )
    result = OptimizeResult(
        system,
        dataset,
        evaluator.model,
        split.describe(),
        {
            "rounds": rounds,
            "candidates": candidates,
            "per_tunable": per_tunable,
            "verify_limit": verify_limit,
            "questions": questions,
        },
        config.model_dump(mode="json"),
        dict(start or {}),
    )
    with usage_scope(f"optimize {system}") as total:
        try:
            state = _State(config, evaluator.score(config, split.validation, label="validation").accuracy)
            result.start_validation = state.validation
            for number in range(1, rounds + 1):
                phase[0] = f"round {number}/{rounds}"
                record = _round(
                    number, state, evaluator, split, system, workspace, llm, result.settings, report
                )
                result.rounds.append(record)
                if on_round:
                    on_round(record)
                if not record.proposals:
                    break
            phase[0] = "holdout"
            before, after = evaluator.score_all(
                [config, state.config], split.holdout, label="holdout", keep=True
            )
        finally:
            evaluator.close()
    result.final_config = state.config.model_dump(mode="json")
    result.final_validation = state.validation
    result.changes = {name: [old, new] for name, (old, new) in changed(config, state.config).items()}
    result.holdout = paired_bootstrap(
        before.outcomes, after.outcomes, resamples=resamples, seed=bootstrap_seed
    )
    result.tokens = total.usage.copy()
    result.evaluations = evaluator.runs
    result.seconds = time.perf_counter() - started
    save_history(result, workspace)
    return result


def _round(
    number: int,
    state: _State,
    evaluator: Evaluator,
    split: Split,
    system: str,
    workspace: str | Path,
    llm: Any,
    settings: dict[str, Any],
    report: Progress,
) -> RoundRecord:
    """One round on the current config; updates `state` when a proposal is kept."""
    started = time.perf_counter()
    tokens: dict[str, dict[str, int]] = {}
    with usage_scope(f"round {number} train") as spent:
        trained: Score = evaluator.score(state.config, split.train, label="train", keep=True, snapshots=True)
        diagnosis = diagnose(
            workspace,
            system,
            trained.run_ids,
            state.config,
            llm=llm,
            verify_limit=settings["verify_limit"],
            progress=report,
        )
    tokens["train"] = spent.usage.as_dict()
    with usage_scope(f"round {number} proposals") as spent:
        proposals = (
            []
            if not diagnosis.failed
            else propose(
                state.config,
                diagnosis,
                system=system,
                tried=state.tried_here(),
                limit=settings["candidates"],
                per_tunable=settings["per_tunable"],
                llm=llm,
                prompt_history=state.prompt_history,
            )
        )
    tokens["proposals"] = spent.usage.as_dict()
    record = RoundRecord(
        number, config_hash(state.config), trained.accuracy, diagnosis.summary(), state.validation
    )
    record.proposals = proposals
    with usage_scope(f"round {number} validation") as spent:
        candidates = [p for p in proposals if p.status != "rejected"]
        scores = evaluator.score_all(
            [p.apply(state.config) for p in candidates],  # type: ignore[misc,arg-type]
            split.validation,
            label="validation",
        )
        for proposal, score in zip(candidates, scores, strict=True):
            proposal.validation, proposal.status = score.accuracy, "evaluated"
    tokens["validation"] = spent.usage.as_dict()
    _decide(record, state, proposals)
    if not diagnosis.failed:
        record.decision = NO_FAILURES
    _remember_prompts(number, record, state, diagnosis.summary())
    tokens["total"] = {
        key: sum(part.get(key, 0) for part in tokens.values())
        for key in ("calls", "input_tokens", "output_tokens", "cached_calls")
    }
    record.tokens = tokens
    record.seconds = time.perf_counter() - started
    return record


def _decide(record: RoundRecord, state: _State, proposals: list[Proposal]) -> None:
    """Keep the best proposal only if it strictly improves validation accuracy; else roll back."""
    evaluated = [p for p in proposals if p.status == "evaluated"]
    before = state.validation
    if not evaluated:
        rejected = len(proposals)
        record.decision = (
            "no proposal left: every routed setting was tried for this config"
            if not rejected
            else f"rolled back: {rejected} proposal(s) rejected before validation"
        )
        state.tried_here().update(value_key(p.tunable, p.new) for p in proposals)
        return
    best = max(evaluated, key=lambda p: p.validation or 0.0)  # the first of equals: the best ranked
    assert best.validation is not None
    if best.validation > before:
        record.kept, record.chosen, record.validation_after = True, best, best.validation
        record.decision = f"kept {best.label()}: validation {before:.4f} -> {best.validation:.4f}"
        state.config = best.apply(state.config)  # type: ignore[assignment]
        state.validation = best.validation
        return
    record.validation_after = before
    record.decision = (
        f"rolled back: best proposal {best.label()} scored {best.validation:.4f} on validation, "
        f"not above the current {before:.4f}"
    )
    state.tried_here().update(value_key(p.tunable, p.new) for p in proposals)


def _remember_prompts(number: int, record: RoundRecord, state: _State, summary: dict[str, Any]) -> None:
    """The textual-gradient history: what each rewrite answered and how validation took it."""
    errors = ", ".join(f"{kind} {n}" for kind, n in summary["error_types"].items())
    for p in record.proposals:
        if p.kind != "prompt":
            continue
        if p.status == "rejected":
            outcome = f"rejected before validation ({p.reason.rpartition('; ')[2]})"
        else:
            kept = record.kept and record.chosen is p
            outcome = (
                f"validation {record.validation_before:.4f} -> {p.validation:.4f}, "
                f"{'kept' if kept else 'rolled back'}"
            )
        state.prompt_history.setdefault(p.tunable, []).append(
            f"round {number}: failures {errors}; rewrite {outcome}"
        )
