"""Benchmark conversations for memory systems: LoCoMo, LongMemEval and a bundled sample, in one model.

    from memtrace.datasets import load_dataset
    convs = load_dataset("locomo:../shared/data/locomo-dev.json", conversations=2, questions=20)
    convs = load_dataset("sample:3")          # offline, deterministic, for demos and fast tests

Malformed files raise `memtrace.errors.FormatError` naming the file and the first bad record;
a spec that names no known dataset raises `DatasetSpecError`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..errors import DatasetSpecError
from ..text import parse_when  # re-exported: the date format datasets are read with
from .locomo import load_locomo
from .longmemeval import load_longmemeval
from .model import (
    ADVERSARIAL,
    KNOWLEDGE_UPDATE,
    MULTI_HOP,
    NOT_MENTIONED,
    OPEN_DOMAIN,
    SINGLE_HOP,
    TEMPORAL,
    UNANSWERABLE,
    Conversation,
    Question,
    Session,
    Turn,
)
from .sample import sample_conversation

SPEC_HELP = "expected 'sample', 'sample:SEED', 'locomo:PATH' or 'longmemeval:PATH'"


def load_dataset(
    spec: str, *, conversations: int | None = None, questions: int | None = None
) -> list[Conversation]:
    """The conversations a spec names, cut to the first `conversations` and first `questions` of each."""
    kind, _, arg = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "sample":
        try:
            seed = int(arg) if arg.strip() else 0
        except ValueError:
            raise DatasetSpecError(f"dataset {spec!r}: the seed must be an integer; {SPEC_HELP}") from None
        # As many seeded variants as asked for (seed, seed + 1, ...), like the optimiser's splits.
        count = conversations if conversations is not None else 1
        loaded = [sample_conversation(seed + offset) for offset in range(max(count, 0))]
    elif kind in ("locomo", "longmemeval"):
        if not arg.strip():
            raise DatasetSpecError(f"dataset {spec!r} has no path; {SPEC_HELP}")
        path = Path(arg.strip()).expanduser()
        loaded = load_locomo(path) if kind == "locomo" else load_longmemeval(path)
    else:
        raise DatasetSpecError(f"unknown dataset {spec!r}; {SPEC_HELP}")
    for name, limit in (("conversations", conversations), ("questions", questions)):
        if limit is not None and limit < 0:
            raise DatasetSpecError(f"{name} limit must be 0 or more, got {limit}")
    if conversations is not None:
        loaded = loaded[:conversations]
    if questions is not None:
        loaded = [dataclasses.replace(c, questions=c.questions[:questions]) for c in loaded]
    return loaded


__all__ = [
    "ADVERSARIAL",
    "KNOWLEDGE_UPDATE",
    "MULTI_HOP",
    "NOT_MENTIONED",
    "OPEN_DOMAIN",
    "SINGLE_HOP",
    "SPEC_HELP",
    "TEMPORAL",
    "UNANSWERABLE",
    "Conversation",
    "DatasetSpecError",
    "Question",
    "Session",
    "Turn",
    "load_dataset",
    "load_locomo",
    "load_longmemeval",
    "parse_when",
    "sample_conversation",
]
