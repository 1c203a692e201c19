"""The aggregate numbers of the report: per system, the headline, failures per operation name."""

from __future__ import annotations

from collections import Counter, defaultdict

from ..graph import Case, Run
from ..vocabulary import CaseVerdict, ErrorType, Verdict
from .model import FailureRecord, Headline, OperationFailures, SystemSummary
from .patterns import verification_counts


def system_name(run: Run) -> str:
    """The system a run belongs to ("unknown" for imported runs that do not say)."""
    return run.system or "unknown"


def system_summaries(
    runs: list[Run], cases: dict[str, list[Case]], records: list[FailureRecord], systems: list[str]
) -> list[SystemSummary]:
    out = []
    for system in systems:
        mine = [r for r in runs if system_name(r) == system]
        all_cases = [c for r in mine for c in cases[r.id]]
        judged = [c for c in all_cases if c.verdict in tuple(CaseVerdict)]
        correct = sum(c.verdict == CaseVerdict.CORRECT for c in judged)
        failures = [r for r in records if r.system == system]
        out.append(
            SystemSummary(
                system=system,
                runs=[r.id for r in mine],
                questions=len(all_cases),
                judged=len(judged),
                correct=correct,
                accuracy=correct / len(judged) if judged else None,
                failures=len(judged) - correct,
                by_error_type=dict(Counter(r.error_type for r in failures).most_common()),
                verification=verification_counts([r.verified for r in failures]),
            )
        )
    return out


def headline_numbers(
    runs: list[Run],
    cases: dict[str, list[Case]],
    records: list[FailureRecord],
    systems: list[SystemSummary],
) -> Headline:
    judged = sum(s.judged for s in systems)
    correct = sum(s.correct for s in systems)
    verification = verification_counts([r.verified for r in records])
    attributed = len(records)
    claims = [r for r in records if r.error_type not in (ErrorType.RESPONSE, ErrorType.UNDETERMINED)]
    responses = [r for r in records if r.error_type == ErrorType.RESPONSE]
    flow = sum(bool(r.flow_confirmed) for r in claims)
    answer = sum(bool(r.answer_confirmed) for r in claims)
    eliminated = sum(r.verified == Verdict.BY_ELIMINATION for r in responses)
    return Headline(
        runs=len(runs),
        questions=sum(len(cases[r.id]) for r in runs),
        judged=judged,
        correct=correct,
        accuracy=correct / judged if judged else None,
        failures=judged - correct,
        attributed=attributed,
        undetermined=sum(r.error_type == ErrorType.UNDETERMINED for r in records),
        by_error_type=dict(Counter(r.error_type for r in records).most_common()),
        by_system={s.system: s.failures for s in systems},
        verification=verification,
        claims=len(claims),
        flow_confirmed=flow,
        answer_confirmed=answer,
        flow_confirmed_share=flow / len(claims) if claims else None,
        answer_confirmed_share=answer / len(claims) if claims else None,
        responses=len(responses),
        by_elimination=eliminated,
        by_elimination_share=eliminated / len(responses) if responses else None,
        claims_not_verified=sum(r.verified is None for r in claims),
        responses_not_verified=sum(r.verified is None for r in responses),
    )


def by_operation(records: list[FailureRecord]) -> list[OperationFailures]:
    groups: dict[str, list[FailureRecord]] = defaultdict(list)
    for record in records:
        groups[record.op_name or "(none)"].append(record)
    rows = [
        OperationFailures(
            op_name=name,
            count=len(members),
            by_error_type=dict(Counter(r.error_type for r in members).most_common()),
            systems=list(dict.fromkeys(r.system for r in members)),
        )
        for name, members in groups.items()
    ]
    return sorted(rows, key=lambda row: (-row.count, row.op_name))
