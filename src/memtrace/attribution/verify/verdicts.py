"""What verifying one attribution by replay concludes: the verdict names, and the record of one check.

Two levels are kept apart (DESIGN.md): *flow-confirmed*, the repair replay delivers the evidence into
the answer step's context (an ideal answer step would answer), and *answer-confirmed*, the real
answer flips. A ResponseError cannot be repaired upstream of itself, so it is at best *by
elimination*: the carrying part of its context is named and nothing earlier lost the information.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ...vocabulary import CONFIRMED_VERDICTS, NOT_VERIFIED, VERDICTS, ErrorType, Verdict
from ..model import VERIFIER_VERSION, Attribution


@dataclass(slots=True)
class Verification:
    """The verdict on an attribution, why, what was checked, and the replay that decided it.

    `second_faults` are later faults seen beside the claim (a retrieval missing the restored memory,
    the answer step failing with the evidence in its context): they never replace the claim, since
    the decisive criterion assumes the operations after it behave ideally.
    """

    attribution: Attribution
    verdict: Verdict
    reason: str
    replay_run: str | None = None
    answer: str | None = None  # what the replayed run answered
    flow_confirmed: bool | None = None
    answer_confirmed: bool | None = None
    checked: list[str] = field(default_factory=list)
    second_faults: list[dict[str, Any]] = field(default_factory=list)
    why: str = ""  # a short stable key of the reason, for counting ("loss-recurs", "no-repair", ...)
    replayed_ops: int | None = None  # operations the repair replay re-ran (None: no replay)

    def record(self) -> Attribution:
        """The attribution with this outcome written onto it (ready to store)."""
        item = self.attribution
        item.verified, item.replay_run = self.verdict, self.replay_run
        item.flow_confirmed, item.answer_confirmed = self.flow_confirmed, self.answer_confirmed
        item.verification = {
            "reason": self.reason,
            "why": self.why,
            "checked": list(self.checked),
            "replayed_answer": self.answer,
            "second_faults": list(self.second_faults),
            "replayed_ops": self.replayed_ops,
            "verifier": VERIFIER_VERSION,
        }
        return item


def placed_turns_only(outcome: Verification) -> Verification:
    """An inferred answer's evidence turns put in the context by the repair itself, and no flip: the
    turns arriving is flow's own premise restated, so nothing independent confirms the claim."""
    outcome.verdict, outcome.why, outcome.flow_confirmed = Verdict.NOT_VERIFIABLE, "inferred-answer", False
    outcome.reason = (
        "the answer is inferred (no turn states an item of it), and the repair placed its evidence turns"
        " in the answer's context itself: their arrival restates flow's premise, and the answer did not"
        " flip, so no independent check confirms the claim (an answer step that can infer, such as a"
        " model given with --llm, can show a flip)"
    )
    return outcome


def verification_summary(attributions: list[Attribution]) -> dict[str, Any]:
    """Confirmed shares of the claims a repair can test, elimination beside them, and why the rest fell short.

    Claims are the determined attributions other than ResponseErrors; their shares are what a replay
    confirmed. ResponseErrors are counted apart (by elimination at best), never added to them.
    """
    by_type: dict[str, Counter[str]] = {}
    reasons: Counter[str] = Counter()
    for a in attributions:
        counts = by_type.setdefault(a.error_type, Counter())
        counts[a.verified or NOT_VERIFIED] += 1
        counts["flow_confirmed"] += bool(a.flow_confirmed)
        counts["answer_confirmed"] += bool(a.answer_confirmed)
        counts["total"] += 1
        if a.verified not in CONFIRMED_VERDICTS:
            why = (a.verification or {}).get("why") or a.verified or NOT_VERIFIED
            reasons[f"{a.error_type}: {why}"] += 1
    claims = [a for a in attributions if a.determined and a.error_type != ErrorType.RESPONSE]
    responses = [a for a in attributions if a.error_type == ErrorType.RESPONSE]
    return {
        "claims": len(claims),
        "flow_confirmed": sum(bool(a.flow_confirmed) for a in claims),
        "answer_confirmed": sum(bool(a.answer_confirmed) for a in claims),
        "responses": len(responses),
        "by_elimination": sum(a.verified == Verdict.BY_ELIMINATION for a in responses),
        "verdicts": {
            v: sum((a.verified or NOT_VERIFIED) == v for a in attributions) for v in (*VERDICTS, NOT_VERIFIED)
        },
        "by_type": {kind: dict(counts) for kind, counts in sorted(by_type.items())},
        "reasons": dict(reasons.most_common()),
        "replayed_ops": _replayed_ops(attributions),
    }


def _replayed_ops(attributions: list[Attribution]) -> dict[str, Any]:
    """How many operations each claim's repair replay re-ran: a replay resumes at the nearest snapshot
    before the repair, so this stays far below the run's size for a late operation."""
    per_claim = [
        {"run": a.run_id, "case": a.case_id, "ops": (a.verification or {}).get("replayed_ops")}
        for a in attributions
        if (a.verification or {}).get("replayed_ops") is not None
    ]
    counts = [item["ops"] for item in per_claim]
    return {
        "replays": len(counts),
        "total": sum(counts),
        "max": max(counts, default=0),
        "per_claim": per_claim,
    }
