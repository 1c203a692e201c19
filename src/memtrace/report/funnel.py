"""The evidence funnel: of the questions whose evidence exists, how far did the needed information get?

Stages, in order (each case is counted at every stage up to the last one it reached):

1. **evidence exists**: the case's gold evidence ids name at least one message of the run
   (`EvidenceLocator.resolve`, the same resolution attribution starts from). Unanswerable questions are
   left out: their "evidence" is only the tempting turn, there is no information to follow.
2. **extracted into memory**: some memory unit version recorded before the question carried it.
3. **survived updates and deletions**: a unit carrying it was still live when the question was asked.
4. **retrieved**: the context the answer operation read carried it.
5. **answered right**: the judge said correct.

A correct case reaches stage 5. A failed case is placed by its flow attribution, whose error types are
decided by exactly these tests in this order (attribution/flow.py): ExtractionError stops at 1,
UpdateError and DeletionError at 2, RetrievalError at 3, ResponseError at 4. An Undetermined flow
attribution is placed at the last stage its evidence path proves (the path's steps with the roles first
carrier, live at question time and in context) and counted apart.
A flow attribution that replay verification revised to the answer step keeps its original claim
(`revised_from`); the original error type places the case, since it says where the information stopped.
A suspected annotation error (no turn supports the gold answer) has no information to follow: it is
left out and counted apart, like an unanswerable question.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..attribution.evidence.locate import EvidenceLocator
from ..attribution.model import Attribution, PathRole
from ..eval import says_unanswerable
from ..graph import Case
from ..vocabulary import CaseVerdict, ErrorType
from .model import FUNNEL_STAGES, FunnelStage, SystemFunnel

STAGE_KEYS = [key for key, _ in FUNNEL_STAGES]

#: Where a determined flow attribution says the information stopped (the last stage it reached).
_STOPPED_AT = {
    ErrorType.EXTRACTION: "evidence",
    ErrorType.UPDATE: "extracted",
    ErrorType.DELETION: "extracted",
    ErrorType.RETRIEVAL: "survived",
    ErrorType.RESPONSE: "retrieved",
}

#: Path roles that prove a stage was reached, latest stage first.
_PATH_PROOF = (
    (PathRole.IN_CONTEXT, "retrieved"),
    (PathRole.LIVE_AT_QUESTION, "survived"),
    (PathRole.FIRST_CARRIER, "extracted"),
)


@dataclass(slots=True)
class FunnelEntry:
    """One judged case's place in its system's funnel."""

    system: str
    stage: str | None = None  # last stage reached; None when left out
    excluded: str | None = None  # "without_evidence" | "unanswerable" | "suspected_annotation_errors"
    undetermined: bool = False


def stage_from_flow(flow: Attribution | None) -> tuple[str, bool]:
    """(last stage reached, undetermined?) of a failed case from its flow attribution."""
    kind = flow_error_type(flow)
    if kind in _STOPPED_AT:
        return _STOPPED_AT[kind], False
    roles = {step.role for step in flow.path} if flow is not None else set()
    for role, stage in _PATH_PROOF:
        if role in roles:
            return stage, True
    return "evidence", True


def flow_error_type(flow: Attribution | None) -> ErrorType | None:
    """The error type the flow method found: a claim that verification revised to the answer step
    (because the answer stayed wrong even with the evidence in its context) still tells where the
    information stopped, so its original type is the one that places the case in the funnel."""
    if flow is None:
        return None
    revised = getattr(flow, "revised_from", None)
    if isinstance(revised, dict) and revised.get("error_type"):
        return ErrorType(revised["error_type"])
    return flow.error_type


def funnel_entry(
    system: str, case: Case, locator: EvidenceLocator, flow: Attribution | None
) -> FunnelEntry | None:
    """The funnel entry of a case; None for a case that was not judged."""
    if case.verdict not in tuple(CaseVerdict):
        return None
    if case.gold and all(says_unanswerable(g) for g in case.gold):
        return FunnelEntry(system, excluded="unanswerable")
    found, _ = locator.resolve(case.evidence)
    if not found:
        return FunnelEntry(system, excluded="without_evidence")
    if case.verdict == CaseVerdict.CORRECT:
        return FunnelEntry(system, stage="answered")
    if flow is not None and flow.error_type == ErrorType.ANNOTATION:
        return FunnelEntry(system, excluded="suspected_annotation_errors")
    stage, undetermined = stage_from_flow(flow)
    return FunnelEntry(system, stage=stage, undetermined=undetermined)


def summarize_funnels(entries: list[FunnelEntry], systems: list[str]) -> list[SystemFunnel]:
    """One funnel per system (in the given order), stage counts cumulative."""
    reached: dict[str, list[int]] = defaultdict(lambda: [0] * len(STAGE_KEYS))
    extra: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for entry in entries:
        if entry.stage is None:
            extra[entry.system][entry.excluded or "without_evidence"] += 1
            continue
        last = STAGE_KEYS.index(entry.stage)
        for i in range(last + 1):
            reached[entry.system][i] += 1
        if entry.undetermined:
            extra[entry.system]["undetermined"] += 1
    funnels = []
    for system in systems:
        counts = reached[system]
        first = counts[0]
        stages = [
            FunnelStage(key=key, label=label, count=n, share=(n / first if first else None))
            for (key, label), n in zip(FUNNEL_STAGES, counts, strict=True)
        ]
        more = extra[system]
        funnels.append(
            SystemFunnel(
                system=system,
                stages=stages,
                undetermined=more["undetermined"],
                without_evidence=more["without_evidence"],
                unanswerable=more["unanswerable"],
                suspected_annotation_errors=more["suspected_annotation_errors"],
            )
        )
    return funnels
