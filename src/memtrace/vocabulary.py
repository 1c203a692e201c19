"""The words memtrace stores and compares: error types, case verdicts, verification verdicts.

This module is the ground of the layers (docs/architecture.md): it imports nothing of memtrace but
errors.py, so every layer, graph/ included, may use it. The members are `StrEnum`s: each is the very
string that was stored before they existed, so workspaces and JSON written earlier read unchanged,
and a member compares equal to its string. A stored word outside the vocabulary reads as a
WorkspaceError naming it.
"""

from __future__ import annotations

from enum import StrEnum

from .errors import WorkspaceError


class ErrorType(StrEnum):
    """The paper's taxonomy of why a memory system answered wrong, plus the non-memory labels."""

    #: The information never entered any memory unit.
    EXTRACTION = "ExtractionError"
    #: A unit held it; a later update lost or degraded it.
    UPDATE = "UpdateError"
    #: A unit holding it was deleted.
    DELETION = "DeletionError"
    #: The store held it at question time; the retrieved context did not.
    RETRIEVAL = "RetrievalError"
    #: The context held it; the answer is still wrong.
    RESPONSE = "ResponseError"
    #: Non-memory label (MemTraceBench): the gold annotation itself is wrong.
    ANNOTATION = "AnnotationError"
    #: Non-memory label (MemTraceBench): the judge marked a right answer wrong.
    JUDGE = "JudgeError"
    #: An attributor that cannot decide says so, never guesses silently.
    UNDETERMINED = "Undetermined"

    @property
    def is_memory(self) -> bool:
        """One of the five memory error types (what attributors name and benchmarks score)."""
        return self in MEMORY_ERROR_TYPES


#: The five memory error types, in taxonomy order (the order reports and prompts list them in).
MEMORY_ERROR_TYPES: tuple[ErrorType, ...] = (
    ErrorType.EXTRACTION,
    ErrorType.UPDATE,
    ErrorType.DELETION,
    ErrorType.RETRIEVAL,
    ErrorType.RESPONSE,
)
#: Labels that blame no memory operation; MemTraceBench counts them apart, as the paper drops them.
NON_MEMORY_ERROR_TYPES: tuple[ErrorType, ...] = (ErrorType.ANNOTATION, ErrorType.JUDGE)


class CaseVerdict(StrEnum):
    """What the judge said about one case's prediction (a case not judged has no verdict: None)."""

    CORRECT = "correct"
    WRONG = "wrong"


class Verdict(StrEnum):
    """What replay verification concluded about one attribution (attribution/verdicts.py).

    Two levels are kept apart: flow-confirmed (the repair delivers the evidence into the answer
    step's context) and answer-confirmed (the real answer flips); a ResponseError is at best by
    elimination. An attribution not verified yet has no verdict: None, shown as `NOT_VERIFIED`.
    """

    ANSWER_CONFIRMED = "answer-confirmed"
    FLOW_CONFIRMED = "flow-confirmed"
    BY_ELIMINATION = "by-elimination"
    REFUTED = "refuted"
    NOT_VERIFIABLE = "not-verifiable"


#: Verdicts in display order.
VERDICTS: tuple[Verdict, ...] = tuple(Verdict)
#: The verdicts that count as verified: the two confirmed levels and elimination.
CONFIRMED_VERDICTS: tuple[Verdict, ...] = (
    Verdict.ANSWER_CONFIRMED,
    Verdict.FLOW_CONFIRMED,
    Verdict.BY_ELIMINATION,
)
#: How an attribution without a verdict is shown and counted (a label, never stored).
NOT_VERIFIED = "not verified"


def error_type_or_none(text: str | None) -> ErrorType | None:
    """A stored error type read back (None stays None)."""
    return None if text is None else _stored(ErrorType, text, "error type")


def verdict_or_none(text: str | None) -> Verdict | None:
    """A stored verification verdict read back (None: not verified yet)."""
    return None if text is None else _stored(Verdict, text, "verification verdict")


def case_verdict_or_none(text: str | None) -> CaseVerdict | None:
    """A stored case verdict read back (None: not judged)."""
    return None if text is None else _stored(CaseVerdict, text, "case verdict")


def _stored[T: StrEnum](kind: type[T], text: str, what: str) -> T:
    """A stored word as its member; a word outside the vocabulary is named, not a bare ValueError."""
    try:
        return kind(text)
    except ValueError:
        known = ", ".join(kind)
        raise WorkspaceError(f"a stored {what} {text!r} is not one of {known}") from None
