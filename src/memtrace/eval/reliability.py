"""Is a judge fit to grade? Probe it on the dataset's known cases before trusting its verdicts.

A small model as LLM judge called every answer correct ("Daisy" for "labrador"), which turns every
accuracy into noise. Each probe pairs a question with the gold answer of an unrelated question: a
judge that accepts such nonsense is reported as unreliable (one cached call per probe).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .judges import Judge
from .scoring import answer_tokens, is_unanswerable

#: Known cases probed by default: enough to catch a judge that says yes to everything, cheap to run.
DEFAULT_PROBES = 3


@dataclass(frozen=True, slots=True)
class KnownCase:
    """A question with its gold answers, as a dataset states them."""

    question: str
    gold: list[str]
    category: str | int | None = None


@dataclass(slots=True)
class JudgeCheck:
    """What the probes found: the nonsense answers the judge accepted, out of how many probes."""

    probes: int = 0
    accepted_nonsense: list[dict[str, str]] = field(default_factory=list)

    @property
    def reliable(self) -> bool:
        return not self.accepted_nonsense

    def summary(self) -> str:
        """One line for the terminal."""
        if not self.probes:
            return "judge not probed: the dataset has no two questions with unrelated gold answers"
        if self.reliable:
            return f"judge rejected the nonsense answer in all {self.probes} probes"
        first = self.accepted_nonsense[0]
        return (
            f"judge is unreliable: it accepted a nonsense answer in {len(self.accepted_nonsense)} of "
            f"{self.probes} probes (called {first['nonsense']!r} correct for gold {first['gold']!r}); "
            "its verdicts say little"
        )

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "reliable": self.reliable}


def nonsense_probes(cases: Sequence[KnownCase], limit: int = DEFAULT_PROBES) -> list[tuple[KnownCase, str]]:
    """Up to `limit` (case, wrong answer) pairs: each wrong answer is another case's gold sharing no word."""
    usable = [c for c in cases if c.gold and not is_unanswerable(c.gold, c.category)]
    probes: list[tuple[KnownCase, str]] = []
    for case in usable:
        words = {t for g in case.gold for t in answer_tokens(g)}
        for other in usable:
            candidate = other.gold[0]
            if other is not case and words and not words & set(answer_tokens(candidate)):
                probes.append((case, candidate))
                break
        if len(probes) >= limit:
            break
    return probes


def check_judge(judge: Judge, cases: Sequence[KnownCase], *, limit: int = DEFAULT_PROBES) -> JudgeCheck:
    """Ask `judge` to grade nonsense answers to known cases; any it accepts makes it unreliable."""
    check = JudgeCheck()
    for case, nonsense in nonsense_probes(cases, limit):
        verdict = judge.judge(case.question, case.gold, nonsense, category=case.category)
        check.probes += 1
        if verdict.correct:
            check.accepted_nonsense.append(
                {"question": case.question, "gold": "; ".join(case.gold), "nonsense": nonsense}
            )
    return check
