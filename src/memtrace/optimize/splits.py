"""Training, validation and holdout conversations: deterministic, disjoint, by dataset order.

The first `train` conversations train, the next `validation` validate, the next `holdout` are held
out; `seed` shuffles the order first (random.Random(seed)), so the split is reproducible either way.
`sample` names the bundled sample conversation; for the optimiser it means as many seeded variants
of it as the split needs (seeds 0, 1, 2, ...), since one conversation cannot be split three ways.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

from ..datasets import Conversation, load_dataset, sample_conversation
from ..errors import OptimizeError


@dataclass(frozen=True, slots=True)
class Split:
    train: list[Conversation]
    validation: list[Conversation]
    holdout: list[Conversation]
    seed: int | None = None

    def describe(self) -> dict[str, object]:
        return {
            "train": [c.id for c in self.train],
            "validation": [c.id for c in self.validation],
            "holdout": [c.id for c in self.holdout],
            "seed": self.seed,
            "questions": {
                "train": sum(len(c.questions) for c in self.train),
                "validation": sum(len(c.questions) for c in self.validation),
                "holdout": sum(len(c.questions) for c in self.holdout),
            },
        }


def load_conversations(spec: str, needed: int, *, questions: int | None = None) -> list[Conversation]:
    """The dataset's conversations (`sample`: `needed` seeded sample conversations)."""
    if spec.strip().lower() == "sample":
        loaded = [sample_conversation(seed) for seed in range(max(needed, 1))]
        if questions is not None:
            loaded = [dataclasses.replace(c, questions=c.questions[:questions]) for c in loaded]
        return loaded
    return load_dataset(spec, questions=questions)


def split_conversations(
    conversations: list[Conversation],
    train: int,
    validation: int,
    holdout: int,
    *,
    seed: int | None = None,
    source: str = "the dataset",
) -> Split:
    """Disjoint train / validation / holdout lists; one-line error when there are too few."""
    for name, n in (("train", train), ("validation", validation), ("holdout", holdout)):
        if n < 1:
            raise OptimizeError(f"--{name} must be at least 1, got {n}")
    needed = train + validation + holdout
    if len(conversations) < needed:
        raise OptimizeError(
            f"{source}: {len(conversations)} conversation(s), but --train {train} --validation {validation} "
            f"--holdout {holdout} need {needed}"
        )
    order = list(conversations)
    if seed is not None:
        random.Random(seed).shuffle(order)
    return Split(order[:train], order[train : train + validation], order[train + validation : needed], seed)


def make_split(
    spec: str,
    train: int,
    validation: int,
    holdout: int,
    *,
    seed: int | None = None,
    questions: int | None = None,
) -> Split:
    """Load `spec` and split it (the error names the file the conversations came from)."""
    needed = train + validation + holdout
    conversations = load_conversations(spec, needed, questions=questions)
    kind, _, path = spec.partition(":")
    source = path.strip() if kind.strip().lower() in ("locomo", "longmemeval") and path.strip() else spec
    return split_conversations(conversations, train, validation, holdout, seed=seed, source=source)
