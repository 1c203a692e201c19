"""Which judge's accuracy is the headline: not an LLM judge that accepted nonsense in its probe.

A 135M model as judge called every answer correct (accuracy 1.00 beside a mean token F1 of 0.000).
Its figure is then shown beside the strict verdict's, never in its place, and every figure says which
judge produced it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .reliability import JudgeCheck
from .scoring import Gold
from .strict import StrictJudge

#: The judge whose verdicts replace an unreliable LLM judge's in the headline.
FALLBACK = "strict"


@dataclass(frozen=True, slots=True)
class Judged:
    """One answered question as the figures need it: its category and the verdict of one judge."""

    category: str
    correct: bool


@dataclass(slots=True)
class JudgeFigure:
    """One judge's accuracy over a set of answers, by category and overall (`all`)."""

    judge: str
    accuracy: dict[str, float | None] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    headline: bool = False
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"accuracy": self.accuracy, "headline": self.headline, "warning": self.warning}


def headline_judge(kind: str, check: JudgeCheck | None) -> str:
    """`kind`, unless it is an LLM judge whose probe caught it accepting nonsense: then the strict
    verdict (an unprobed judge keeps its place: nothing showed it wrong)."""
    return FALLBACK if kind == "llm" and check is not None and not check.reliable else kind


def strict_correct(question: str, gold: Gold | None, prediction: str, category: str | int | None) -> bool:
    """The strict verdict on a recorded answer, without recording a `judge` operation; an answerable
    question without a gold answer cannot be right."""
    try:
        return StrictJudge().verdict(question, gold, prediction, category).correct
    except ValueError:
        return False


def figure(judge: str, answers: Iterable[Judged]) -> JudgeFigure:
    """`judge`'s accuracy per category and over all answers (None where there are none)."""
    verdicts: dict[str, list[bool]] = defaultdict(list)
    for answer in answers:
        verdicts[answer.category].append(answer.correct)
        verdicts["all"].append(answer.correct)
    verdicts.setdefault("all", [])
    return JudgeFigure(
        judge,
        accuracy={c: (sum(v) / len(v) if v else None) for c, v in verdicts.items()},
        counts={c: len(v) for c, v in verdicts.items()},
    )


def judge_figures(
    kind: str, by_run_judge: Sequence[Judged], by_strict: Sequence[Judged] | None, check: JudgeCheck | None
) -> list[JudgeFigure]:
    """The run judge's figure and, when given, the strict verdict's, the headline first; an unreliable
    LLM judge's figure carries the probe's warning."""
    figures = [figure(kind, by_run_judge)]
    if by_strict is not None and kind != FALLBACK:
        figures.append(figure(FALLBACK, by_strict))
    if check is not None and not check.reliable:
        figures[0].warning = check.summary()
    headline = headline_judge(kind, check)
    for item in figures:
        item.headline = item.judge == headline
    if not any(item.headline for item in figures):  # the fallback was not computed: keep the run's
        figures[0].headline = True
    return sorted(figures, key=lambda item: not item.headline)
