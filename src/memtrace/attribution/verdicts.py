"""What verifying one attribution by replay concludes, shared by the repair step and the context oracle."""

from __future__ import annotations

from dataclasses import dataclass

from .model import Attribution

VERIFIED = "true"
REFUTED = "false"
BY_ELIMINATION = "by-elimination"
NOT_VERIFIABLE = "not-verifiable"


@dataclass(slots=True)
class Verification:
    """The verdict on an attribution (possibly a revised one), why, and the replay that decided it."""

    attribution: Attribution
    verdict: str
    reason: str
    replay_run: str | None = None
    answer: str | None = None  # what the replayed run answered
