"""Verification counted honestly: claims a repair can test, ResponseErrors under the item check, and
suspected annotation errors, each apart, for the report and both CLI summaries alike.

A flow-confirmed claim (a replay delivered the evidence) and an item-confirmed ResponseError (every
item of the answer is in its context by the judge's rule) answer different questions, so they are
never summed into one "verified" number; refuted ones are counted and listed, never folded away.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Protocol

from ..vocabulary import MEMORY_ERROR_TYPES, NOT_VERIFIED, ErrorType, Verdict
from .model import VERIFICATION_OUTCOMES, VerificationFigures

#: The error types whose claims a repair replay can test (every memory type but ResponseError).
REPAIRABLE: tuple[ErrorType, ...] = tuple(t for t in MEMORY_ERROR_TYPES if t != ErrorType.RESPONSE)
_CONFIRMED = (Verdict.FLOW_CONFIRMED, Verdict.ANSWER_CONFIRMED)


class Verified(Protocol):
    """What the counts read of an attribution or a report's failure record."""

    error_type: str
    verified: str | None
    flow_confirmed: bool | None
    answer_confirmed: bool | None


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def verification_figures(items: Iterable[Verified]) -> VerificationFigures:
    """The figures of a set of attributions (or failure records), each population counted apart."""
    items = list(items)
    claims = [i for i in items if i.error_type in REPAIRABLE]
    responses = [i for i in items if i.error_type == ErrorType.RESPONSE]
    flow = sum(bool(i.flow_confirmed) for i in claims)
    answer = sum(bool(i.answer_confirmed) for i in claims)
    said = Counter(i.verified for i in responses)
    confirmed = sum(said[v] for v in _CONFIRMED)
    return VerificationFigures(
        claims=len(claims),
        flow_confirmed=flow,
        answer_confirmed=answer,
        flow_confirmed_share=_share(flow, len(claims)),
        answer_confirmed_share=_share(answer, len(claims)),
        claims_refuted=sum(i.verified == Verdict.REFUTED for i in claims),
        claims_not_verifiable=sum(i.verified == Verdict.NOT_VERIFIABLE for i in claims),
        claims_not_verified=sum(i.verified is None for i in claims),
        responses=len(responses),
        responses_confirmed=confirmed,
        responses_confirmed_share=_share(confirmed, len(responses)),
        responses_refuted=said[Verdict.REFUTED],
        by_elimination=said[Verdict.BY_ELIMINATION],
        by_elimination_share=_share(said[Verdict.BY_ELIMINATION], len(responses)),
        responses_not_verifiable=said[Verdict.NOT_VERIFIABLE],
        responses_not_verified=said[None],
        suspected_annotation_errors=sum(i.error_type == ErrorType.ANNOTATION for i in items),
        verdicts_of_another_verifier=sum(bool(getattr(i, "verdict_stale", False)) for i in items),
    )


def outcomes_by_type(items: Iterable[Verified]) -> dict[str, dict[str, int]]:
    """Per error type (taxonomy order), the count of each verification outcome it has."""
    counts: dict[str, Counter[str]] = {}
    for item in items:
        counts.setdefault(item.error_type, Counter())[item.verified or NOT_VERIFIED] += 1
    order = [*MEMORY_ERROR_TYPES, *sorted(set(counts) - set(MEMORY_ERROR_TYPES))]
    return {
        str(kind): {o: counts[kind][o] for o in VERIFICATION_OUTCOMES if counts[kind][o]}
        for kind in order
        if kind in counts
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _pending(count: int) -> str:
    return f", {count} not verified yet" if count else ""


def claims_sentence(f: VerificationFigures) -> str:
    """The claims a repair can test, as one sentence: both confirmation levels and the refuted ones."""
    return (
        f"Claims a repair can test: {f.claims}{_pending(f.claims_not_verified)}; flow-confirmed "
        f"{_pct(f.flow_confirmed_share)} ({f.flow_confirmed}), answer-confirmed "
        f"{_pct(f.answer_confirmed_share)} ({f.answer_confirmed}), refuted {f.claims_refuted}, "
        f"not verifiable {f.claims_not_verifiable}."
    )


def responses_sentence(f: VerificationFigures) -> str:
    """The ResponseErrors as one sentence: confirmed and refuted by the item check, by elimination."""
    return (
        f"ResponseErrors (never replayed): {f.responses}{_pending(f.responses_not_verified)}; "
        f"confirmed by the item check (every item in the context) {_pct(f.responses_confirmed_share)} "
        f"({f.responses_confirmed}), refuted (the context lacks an item) {f.responses_refuted}, "
        f"by elimination (an inferred answer no turn states) {f.by_elimination}, "
        f"not verifiable {f.responses_not_verifiable}."
    )


def annotation_sentence(f: VerificationFigures) -> str:
    """The suspected annotation errors, or "" when there are none."""
    if not f.suspected_annotation_errors:
        return ""
    return (
        f"Suspected annotation errors (the conversation does not support the gold answer): "
        f"{f.suspected_annotation_errors}, kept out of the counts above."
    )


def other_verifier_sentence(f: VerificationFigures) -> str:
    """How many of the verdicts counted another verifier made, or "" when none."""
    if not f.verdicts_of_another_verifier:
        return ""
    return (
        f"{f.verdicts_of_another_verifier} of these verdicts were made by another verifier (an older"
        " memtrace): `memtrace verify` verifies them again."
    )


def summary_lines(f: VerificationFigures) -> list[str]:
    """The figures as the lines the consoles print (claims, ResponseErrors, annotation suspects, and
    verdicts of another verifier)."""
    sentences = (claims_sentence, responses_sentence, annotation_sentence, other_verifier_sentence)
    return [line for line in (sentence(f) for sentence in sentences) if line]
