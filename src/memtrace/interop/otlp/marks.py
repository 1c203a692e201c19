"""ERROR statuses that show in any OpenTelemetry UI where a run broke: the blamed operation's span
and the judge span of a wrong answer.

Receivers fold span events away (Phoenix shows an attribution only inside the answer span's
collapsed events), but every UI colours a span whose status is ERROR. A mark is memtrace's verdict,
not a failure of the operation, so the span says so (`memtrace.mark`) and an import of it keeps the
operation's own status. An operation that really failed keeps its own error as the status, unmarked;
the blame is still named in its attributes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ...graph.model import Case
from .spans import ERROR_TYPE, SpanSpec

#: Why a span is ERROR when memtrace set it: "blamed" (an attribution) or "judged-wrong" (a judge).
MARK = "memtrace.mark"
BLAMED, JUDGED_WRONG = "blamed", "judged-wrong"
#: The failed cases whose attribution blames the operation.
BLAMED_CASES = "memtrace.blamed.cases"
#: OpenTelemetry keeps a status description short; receivers cut longer ones anyway.
DESCRIPTION_LIMIT = 500


@dataclass(slots=True)
class Blame:
    """An attribution as a mark: the operation it blames, for which case, the error type and why."""

    op_id: str
    case_id: str
    error_type: str
    why: str


def mark_blamed(spans: Mapping[str, SpanSpec], blames: Iterable[Blame]) -> None:
    """Mark each blamed operation's span ERROR: "<ErrorType> for case <id>: <why>" (then the others)."""
    by_op: dict[str, list[Blame]] = defaultdict(list)
    for blame in blames:
        if blame.op_id in spans:
            by_op[blame.op_id].append(blame)
    for op_id, found in by_op.items():
        first, others = found[0], found[1:]
        head = f"{first.error_type} for case {first.case_id}: "
        tail = ""
        if others:  # the other cases stay in view: the first case's explanation gives way
            also = ", ".join(f"{b.error_type} for case {b.case_id}" for b in others)
            tail = f"; also {_cut(also, DESCRIPTION_LIMIT // 2)}"
        description = head + _cut(first.why, DESCRIPTION_LIMIT - len(head) - len(tail)) + tail
        spec = spans[op_id]
        spec.attributes[BLAMED_CASES] = list(dict.fromkeys(b.case_id for b in found))
        spec.attributes.setdefault(ERROR_TYPE, first.error_type)
        _mark(spec, BLAMED, description)


def mark_wrong_judges(
    spans: Mapping[str, SpanSpec], judges: Mapping[str, list[str]], cases: Iterable[Case]
) -> None:
    """Mark ERROR the span of each judge (`judges`: prediction variable -> evaluation operations
    that read it) that judged a case wrong; the description names the case and its score."""
    for case in cases:
        if not case.failed:
            continue
        score = f" (score {case.score:.2f})" if case.score is not None else ""
        for op_id in judges.get(case.prediction_var or "", []):
            if op_id in spans:
                _mark(spans[op_id], JUDGED_WRONG, f"wrong answer for case {case.id}{score}")


def _mark(spec: SpanSpec, mark: str, description: str) -> None:
    if spec.error is None:  # an operation's own failure stays its status, unmarked
        spec.attributes[MARK] = mark
        spec.error = description[:DESCRIPTION_LIMIT]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"
