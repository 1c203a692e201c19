"""A verdict belongs to the claim, not to the settings it was stored under.

Verification replays the repair a claim implies (its error type, operation and evidence path); the
settings of the method that made it (a refitted confidence table, a new rules version that decides
this case the same way) change nothing of that. So a claim computed again under other settings takes
the verdict of the identical claim stored before, instead of showing as unverified until `verify`
replays every claim again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict

from ..graph import Case, Store
from .model import Attribution, load_attributions

ClaimKey = tuple[str, str, str | None, str]


def _claim_key(attribution: Attribution) -> ClaimKey:
    """What a verdict depends on: the case, the error type, the operation and the path."""
    path = json.dumps([asdict(step) for step in attribution.path], sort_keys=True, default=str)
    return (attribution.run_id, attribution.case_id, attribution.op_id, f"{attribution.error_type}|{path}")


class VerdictsOnRecord:
    """The verified claims a method stored for some cases, under any settings, ready to carry over."""

    def __init__(self, store: Store, method: str, cases: Iterable[Case]) -> None:
        wanted = {(case.run_id, case.id) for case in cases}
        self._verified: dict[ClaimKey, Attribution] = {}
        for run_id in {run for run, _ in wanted}:
            for stored in load_attributions(store, run_id, method):
                if stored.verified is None or (stored.run_id, stored.case_id) not in wanted:
                    continue
                key = _claim_key(stored)
                known = self._verified.get(key)
                if known is None or (known.verdict_stale and not stored.verdict_stale):  # ours first
                    self._verified[key] = stored

    def carry_over(self, made: Attribution) -> bool:
        """Give `made` the verdict of an identical stored claim, if there is one (True when it did)."""
        if made.verified is not None:
            return False
        earlier = self._verified.get(_claim_key(made))
        if earlier is None:
            return False
        made.verified, made.replay_run = earlier.verified, earlier.replay_run
        made.flow_confirmed, made.answer_confirmed = earlier.flow_confirmed, earlier.answer_confirmed
        made.verification = earlier.verification
        return True
