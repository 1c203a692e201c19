"""The aggregate numbers of the report: per system, the headline, failures per operation name."""

from __future__ import annotations

from collections import Counter, defaultdict

from ..graph import Case, Run
from ..vocabulary import CaseVerdict, ErrorType
from .model import FailureRecord, Headline, OperationFailures, SuspectedAnnotation, SystemSummary
from .patterns import verification_counts
from .verification import outcomes_by_type, verification_figures


def system_name(run: Run) -> str:
    """The system a run belongs to ("unknown" for imported runs that do not say)."""
    return run.system or "unknown"


def system_summaries(
    runs: list[Run],
    cases: dict[str, list[Case]],
    records: list[FailureRecord],
    systems: list[str],
    suspects: list[SuspectedAnnotation] | None = None,
) -> list[SystemSummary]:
    """Per system: accuracy, failures by error type, verification; suspected annotation errors apart."""
    suspects = suspects or []
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
                verification_by_type=outcomes_by_type(failures),
                suspected_annotation_errors=sum(s.system == system for s in suspects),
            )
        )
    return out


def headline_numbers(
    runs: list[Run],
    cases: dict[str, list[Case]],
    records: list[FailureRecord],
    systems: list[SystemSummary],
    suspects: list[SuspectedAnnotation] | None = None,
) -> Headline:
    """The headline: accuracy, failures by type, and verification counted per population (never summed)."""
    judged = sum(s.judged for s in systems)
    correct = sum(s.correct for s in systems)
    figures = verification_figures(records).model_dump()
    figures["suspected_annotation_errors"] = len(suspects or [])
    return Headline(
        runs=len(runs),
        questions=sum(len(cases[r.id]) for r in runs),
        judged=judged,
        correct=correct,
        accuracy=correct / judged if judged else None,
        failures=judged - correct,
        attributed=len(records) + len(suspects or []),
        undetermined=sum(r.error_type == ErrorType.UNDETERMINED for r in records),
        by_error_type=dict(Counter(r.error_type for r in records).most_common()),
        by_system={s.system: s.failures for s in systems},
        verification=verification_counts([r.verified for r in records]),
        verification_by_type=outcomes_by_type(records),
        **figures,
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
