"""The holdout delta with a paired bootstrap confidence interval over questions.

Both configs answer the same holdout questions, so questions are resampled in pairs: the interval
reflects which questions happen to be held out, not two independent samples. Seeded numpy, so the
same inputs and seed always give the same interval.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class Interval:
    """Accuracy of both configs, their difference and its percentile bootstrap interval."""

    questions: int
    start_accuracy: float
    final_accuracy: float
    delta: float
    low: float
    high: float
    level: float
    resamples: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        pct = round(self.level * 100)
        return (
            f"{self.delta:+.4f} [{pct}% CI {self.low:+.4f}, {self.high:+.4f}] over {self.questions} questions"
        )


def paired_bootstrap(
    start: list[bool],
    final: list[bool],
    *,
    resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Delta = accuracy(final) - accuracy(start) on paired per-question outcomes, with its CI."""
    if len(start) != len(final):
        raise ValueError(f"paired outcomes differ in length: {len(start)} vs {len(final)}")
    a = np.asarray(start, dtype=np.float64)
    b = np.asarray(final, dtype=np.float64)
    n = len(a)
    if n == 0:
        return Interval(0, 0.0, 0.0, 0.0, 0.0, 0.0, level, resamples, seed)
    diff = b - a
    rng = np.random.default_rng(seed)
    deltas = np.empty(resamples)
    chunk = max(1, 2_000_000 // n)  # bounded memory for large holdouts
    for start_at in range(0, resamples, chunk):
        size = min(chunk, resamples - start_at)
        deltas[start_at : start_at + size] = diff[rng.integers(0, n, size=(size, n))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(deltas, [tail, 100 - tail])
    return Interval(
        n,
        float(a.mean()),
        float(b.mean()),
        float(diff.mean()),
        float(low),
        float(high),
        level,
        resamples,
        seed,
    )
