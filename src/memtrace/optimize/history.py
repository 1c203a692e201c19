"""What an optimisation did, round by round, saved as JSON and Markdown in the workspace.

Per round: the training accuracy and diagnosis, every proposal with its validation accuracy, the
decision (kept, or rolled back and why) and the tokens spent; at the end the starting and final
configs and the holdout delta with its bootstrap interval.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..llm import Usage
from ..text import safe_filename
from .bootstrap import Interval
from .proposals import Proposal


@dataclass(slots=True)
class RoundRecord:
    """One round: diagnose the current config, propose, validate, keep or roll back."""

    round: int
    config_hash: str
    train_accuracy: float
    diagnosis: dict[str, Any]
    validation_before: float
    proposals: list[Proposal] = field(default_factory=list)
    kept: bool = False
    chosen: Proposal | None = None
    validation_after: float | None = None
    decision: str = ""
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "config_hash": self.config_hash,
            "train_accuracy": self.train_accuracy,
            "diagnosis": self.diagnosis,
            "validation_before": self.validation_before,
            "proposals": [p.to_dict() for p in self.proposals],
            "kept": self.kept,
            "chosen": self.chosen.to_dict() if self.chosen else None,
            "validation_after": self.validation_after,
            "decision": self.decision,
            "tokens": self.tokens,
            "seconds": round(self.seconds, 2),
        }


@dataclass(slots=True)
class OptimizeResult:
    """The whole optimisation of one system: split, configs, rounds, holdout delta."""

    system: str
    dataset: str
    llm: str
    split: dict[str, Any]
    settings: dict[str, Any]
    start_config: dict[str, Any]
    start_overrides: dict[str, Any]
    final_config: dict[str, Any] = field(default_factory=dict)
    changes: dict[str, list[Any]] = field(default_factory=dict)
    start_validation: float = 0.0
    final_validation: float = 0.0
    rounds: list[RoundRecord] = field(default_factory=list)
    holdout: Interval | None = None
    tokens: Usage = field(default_factory=Usage)
    evaluations: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "dataset": self.dataset,
            "llm": self.llm,
            "split": self.split,
            "settings": self.settings,
            "start": "defaults" if not self.start_overrides else {"defaults with": self.start_overrides},
            "start_config": self.start_config,
            "final_config": self.final_config,
            "changes": self.changes,
            "start_validation": self.start_validation,
            "final_validation": self.final_validation,
            "rounds": [r.to_dict() for r in self.rounds],
            "holdout": self.holdout.to_dict() if self.holdout else None,
            "tokens": self.tokens.as_dict(),
            "evaluations": self.evaluations,
            "seconds": round(self.seconds, 2),
        }


def history_paths(workspace: str | Path, system: str) -> tuple[Path, Path]:
    base = Path(workspace) / f"optimize-history-{safe_filename(system)}"
    return base.with_suffix(".json"), base.with_suffix(".md")


def save_history(result: OptimizeResult, workspace: str | Path) -> tuple[Path, Path]:
    """Write `optimize-history-<system>.json` and `.md` into the workspace; returns both paths."""
    json_path, md_path = history_paths(workspace, result.system)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str))
    md_path.write_text(markdown(result))
    return json_path, md_path


def markdown(result: OptimizeResult) -> str:
    """The history as Markdown tables (what the CLI prints, for reports and issues)."""
    split = result.split
    lines = [
        f"# Optimisation of {result.system} on {result.dataset} ({result.llm})",
        "",
        f"Train {', '.join(split['train'])}; validation {', '.join(split['validation'])}; "
        f"holdout {', '.join(split['holdout'])}.",
        f"Start: {'defaults' if not result.start_overrides else f'defaults with {result.start_overrides}'}; "
        f"validation accuracy {result.start_validation:.4f}.",
        "",
        "| round | train acc | top tunables (verified/routed) | proposal | validation | decision | tokens |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result.rounds:
        top = ", ".join(
            f"{f['tunable']} ({f['verified']}/{f['attributions']})" for f in r.diagnosis["feedback"][:3]
        )
        tokens = r.tokens.get("total", {})
        spent = tokens.get("input_tokens", 0) + tokens.get("output_tokens", 0)
        for i, p in enumerate(r.proposals or [None]):
            proposal = "-" if p is None else p.label()
            score = "-" if p is None or p.validation is None else f"{p.validation:.4f}"
            if p is not None and p.status == "rejected":
                score = "rejected"
            first = i == 0
            lines.append(
                f"| {r.round if first else ''} | {f'{r.train_accuracy:.4f}' if first else ''} | "
                f"{top if first else ''} | {proposal} | {score} | "
                f"{r.decision if first else ''} | {spent if first else ''} |"
            )
    lines += ["", "Changes kept: " + (_changes(result.changes) or "none"), ""]
    if result.holdout is not None:
        h = result.holdout
        lines += [
            "| holdout | questions | start | final | delta | 95% CI |",
            "|---|---|---|---|---|---|",
            f"| {result.system} | {h.questions} | {h.start_accuracy:.4f} | {h.final_accuracy:.4f} | "
            f"{h.delta:+.4f} | [{h.low:+.4f}, {h.high:+.4f}] |",
            "",
            f"Paired bootstrap over holdout questions, {h.resamples} resamples, seed {h.seed}. "
            f"Tokens: {result.tokens.total_tokens}. Evaluations run: {result.evaluations}.",
            "",
        ]
    return "\n".join(lines)


def _changes(changes: dict[str, list[Any]]) -> str:
    out = []
    for name, (old, new) in changes.items():
        if isinstance(new, str) and len(new) > 40:
            out.append(f"{name} (prompt rewritten)")
        else:
            out.append(f"{name} {old} -> {new}")
    return ", ".join(out)
