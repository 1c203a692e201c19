"""The structured diagnostic report: the one source of truth that report.json, report.md and report.html
are rendered from (and that the optional LLM narrative is written from).

Pydantic models so that a report round-trips through JSON: `Report.model_validate_json(text)` gives back
what `build_report` made, and the renderers work the same on either.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..vocabulary import MEMORY_ERROR_TYPES, NOT_VERIFIED, VERDICTS, ErrorType, Verdict

#: Verification outcomes in display order; None on an attribution ("not verified") becomes the last.
VERIFICATION_OUTCOMES: tuple[str, ...] = (*VERDICTS, NOT_VERIFIED)

#: Evidence funnel stages in order (key, label).
FUNNEL_STAGES = (
    ("evidence", "evidence exists"),
    ("extracted", "extracted into memory"),
    ("survived", "survived updates and deletions"),
    ("retrieved", "retrieved"),
    ("answered", "answered right"),
)


class RunRef(BaseModel):
    """A run the report covers."""

    id: str
    name: str
    system: str
    conversation: str | None = None
    questions: int = 0


class VerificationFigures(BaseModel):
    """What verification concluded, counted per population so that verdicts of different meaning are
    never summed into one "verified" number (the report's headline, `memtrace verify` and `report`)."""

    #: Claims a repair can test: the determined memory error types other than ResponseError.
    claims: int = 0
    #: Of those, the repair replay delivered the evidence into the answer's context / the answer flipped.
    flow_confirmed: int = 0
    answer_confirmed: int = 0
    flow_confirmed_share: float | None = None
    answer_confirmed_share: float | None = None
    #: Of those, the recorded run contradicts the claim / the replay could prove nothing either way.
    claims_refuted: int = 0
    claims_not_verifiable: int = 0
    #: ResponseErrors: never replayed; verification's independent item check (the strict judge's rule)
    #: confirms one whose context holds every item, refutes one whose context lacks an item; an inferred
    #: answer no turn states can only be kept by elimination (its carrying part named).
    responses: int = 0
    responses_confirmed: int = 0
    responses_confirmed_share: float | None = None
    responses_refuted: int = 0
    by_elimination: int = 0
    by_elimination_share: float | None = None
    responses_not_verifiable: int = 0
    #: Claims and ResponseErrors whose verification was never run: counted in the shares' denominators,
    #: so a 0% there is "not checked yet", not "refuted"; the headline says how many.
    claims_not_verified: int = 0
    responses_not_verified: int = 0
    #: Gold answers the conversation does not support: no memory fault, kept out of every count above.
    suspected_annotation_errors: int = 0
    #: Verdicts counted above that another verifier made (an older memtrace): `memtrace verify` renews them.
    verdicts_of_another_verifier: int = 0


class Headline(VerificationFigures):
    """The numbers at the top: how many questions, how many right, what failed and how sure we are."""

    runs: int
    questions: int
    judged: int
    correct: int
    accuracy: float | None
    failures: int
    attributed: int
    undetermined: int
    by_error_type: dict[str, int]
    by_system: dict[str, int]
    #: Every attribution by outcome (all error types together: read `verification_by_type` to compare).
    verification: dict[str, int]
    #: Outcomes per error type: a flow-confirmed claim and an item-confirmed ResponseError are apart.
    verification_by_type: dict[str, dict[str, int]] = Field(default_factory=dict)


class SystemSummary(BaseModel):
    """One memory system over every selected run of it."""

    system: str
    runs: list[str]
    questions: int
    judged: int
    correct: int
    accuracy: float | None
    failures: int
    by_error_type: dict[str, int]
    verification: dict[str, int]
    #: Outcomes per error type (claims and ResponseErrors are verified differently: shown apart).
    verification_by_type: dict[str, dict[str, int]] = Field(default_factory=dict)
    #: Wrong answers whose gold the conversation does not support: in `failures`, not in `by_error_type`.
    suspected_annotation_errors: int = 0


class OperationFailures(BaseModel):
    """Failures blamed on operations of one name (across systems)."""

    op_name: str
    count: int
    by_error_type: dict[str, int]
    systems: list[str]


class FunnelStage(BaseModel):
    key: str
    label: str
    count: int
    #: count / the first stage's count (None when the first stage is empty).
    share: float | None


class SystemFunnel(BaseModel):
    """How far the needed information got, for the questions of one system whose evidence exists."""

    system: str
    stages: list[FunnelStage]
    #: failed cases whose flow attribution is Undetermined (counted at the last stage their path proves).
    undetermined: int = 0
    #: judged questions left out: no gold evidence naming a message of the run.
    without_evidence: int = 0
    #: judged questions left out: unanswerable ones (their "evidence" is only a tempting turn).
    unanswerable: int = 0
    #: failed questions left out: suspected annotation errors (no turn supports the gold answer).
    suspected_annotation_errors: int = 0


class TimingBin(BaseModel):
    label: str
    count: int
    by_error_type: dict[str, int] = Field(default_factory=dict)


class Timing(BaseModel):
    """When the decisive operation ran relative to the question, as a histogram."""

    #: "sessions": bins count sessions between the operation and the question; "fraction": bins are
    #: fifths of the conversation's messages already recorded when the operation ran.
    unit: str
    axis: str
    bins: list[TimingBin]
    #: failures left out of the bins: no decisive operation (Undetermined) or nothing to place it by.
    unknown: int = 0


class FailureRecord(BaseModel):
    """One attributed failure, flat, for scripts (every chart and pattern is an aggregate of these)."""

    run_id: str
    system: str
    case_id: str
    anchor: str
    question: str
    category: str | None
    error_type: ErrorType
    method: str
    op_id: str | None
    op_name: str | None
    op_category: str | None
    op_seq: int | None
    question_seq: int | None
    confidence: float
    verified: Verdict | None
    #: Flow's measured confidence given verify's verdict (None: not verified, or not default flow).
    confidence_after_verify: float | None = None
    sessions_before_question: int | None = None
    #: share of the conversation's messages recorded when the decisive operation ran (1.0 = question time).
    position: float | None = None
    at_question_time: bool = False
    funnel_stage: str | None = None
    #: the claim replay verification replaced ("DeletionError at delete_memory#178"), if it revised one.
    revised_from: str | None = None
    flow_confirmed: bool | None = None
    answer_confirmed: bool | None = None
    #: why verification reached its verdict (or fell short of confirming).
    verification_reason: str | None = None
    #: the verdict came from another verifier (an older memtrace): `memtrace verify` renews it.
    verdict_stale: bool = False
    #: the part of the answer's context the attribution names as carrying the information (what a
    #: ResponseError by elimination rests on), for every failure, not only the pattern examples.
    carrying_part: str | None = None


class SuspectedAnnotation(BaseModel):
    """A wrong answer whose gold answer the conversation does not support: flagged with the reason and
    kept out of the system's error counts, since no memory operation could have delivered it."""

    run_id: str
    system: str
    case_id: str
    anchor: str
    question: str
    gold: list[str]
    prediction: str | None
    method: str
    reason: str


class ValueSnippet(BaseModel):
    """One input or output of the decisive operation, truncated for reading."""

    id: str
    category: str
    text: str
    truncated: bool = False
    #: lines of `text` (0-based) that mention the gold answer or an evidence message: what to look at.
    marked: list[int] = Field(default_factory=list)
    #: lines of `text` that carry the evidence by the attribution's path (a step "in context" names the
    #: part); a context's items are marked only so, never for mentioning the gold or an evidence id.
    carrying: list[int] = Field(default_factory=list)


class Example(BaseModel):
    """A failed case illustrating a pattern, with what the decisive operation read and wrote."""

    run_id: str
    case_id: str
    anchor: str
    question: str
    gold: list[str]
    prediction: str | None
    op_id: str | None
    op_seq: int | None
    explanation: str
    confidence: float
    verified: Verdict | None
    confidence_after_verify: float | None = None
    revised_from: str | None = None
    #: The part of the answer's context that carries the information (ResponseErrors), when named.
    carrying_part: str | None = None
    verification_reason: str | None = None
    #: What verification checked (the replayed context, the replayed answer, the carrying part).
    checked: list[str] = Field(default_factory=list)
    #: Later faults seen beside the claim ("ResponseError at answer#9: answered ... with the evidence").
    second_faults: list[str] = Field(default_factory=list)
    inputs: list[ValueSnippet] = Field(default_factory=list)
    outputs: list[ValueSnippet] = Field(default_factory=list)
    more_inputs: int = 0
    more_outputs: int = 0


class TunableRoute(BaseModel):
    """A prompt or setting of the system that governs a pattern's operation: what to change next."""

    name: str
    #: +1 raise it, -1 lower it, 0 either way (a prompt, a method), 2 per case (systems/tunable_routes.py).
    direction: int
    why: str

    def change(self) -> str:
        """The direction in a word or two, for the rendered report."""
        return {1: "raise", -1: "lower", 0: "change"}.get(self.direction, "raise or lower, per case")


class Pattern(BaseModel):
    """Attributions grouped by system, operation name and error type."""

    system: str
    op_name: str
    error_type: ErrorType
    count: int
    #: count / the system's failures.
    share: float
    description: str
    mean_confidence: float
    verification: dict[str, int]
    categories: dict[str, int]
    examples: list[Example]
    #: the tunables `memtrace optimize` would route this pattern to (empty for systems it does not know).
    tunables: list[TunableRoute] = Field(default_factory=list)


class Narrative(BaseModel):
    """Text an LLM wrote from the structured report; never an input to any number in it."""

    text: str
    model: str
    generated: bool = True
    note: str = "Generated by an LLM from the structured report; check it against the numbers."


class Report(BaseModel):
    """Everything the report shows, in one JSON-able object."""

    schema_version: int = 1
    workspace: str
    generated_at: str
    memtrace_version: str
    method: str
    runs: list[RunRef]
    headline: Headline
    systems: list[SystemSummary]
    failures_by_operation: list[OperationFailures]
    funnel: list[SystemFunnel]
    timing: Timing
    patterns: list[Pattern]
    failures: list[FailureRecord]
    #: Failed cases flagged as suspected annotation errors: not in `failures`, nor in any count of them.
    suspected_annotation_errors: list[SuspectedAnnotation] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    narrative: Narrative | None = None

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    @property
    def refuted(self) -> list[FailureRecord]:
        """The failures whose claim verification refuted (the recorded run contradicts it)."""
        return [f for f in self.failures if f.verified == Verdict.REFUTED]

    @property
    def error_types(self) -> list[str]:
        """Error types present, in taxonomy order (then any others, then Undetermined)."""

        present = set(self.headline.by_error_type)
        known = [t for t in MEMORY_ERROR_TYPES if t in present]
        others = sorted(present - set(MEMORY_ERROR_TYPES) - {ErrorType.UNDETERMINED})
        return known + others + ([ErrorType.UNDETERMINED] if ErrorType.UNDETERMINED in present else [])
