"""The runs table and a run's cases table: verdicts joined with attributions and human labels.

A suspected annotation error (the conversation does not support the gold answer) is no memory fault:
it is marked as such and kept out of a run's failures by error type.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..attribution.model import VERIFIER_VERSION
from ..graph import Annotation, Case, Run, Workspace
from ..graph.attributions import AttributionSummary
from ..vocabulary import CaseVerdict, ErrorType

#: The method whose attribution a page shows first when a case has several.
PREFERRED_METHOD = "flow"


@dataclass(slots=True)
class CaseRow:
    case: Case
    attribution: AttributionSummary | None
    label: Annotation | None

    def to_dict(self) -> dict[str, Any]:
        a, c = self.attribution, self.case
        return {
            "id": c.id,
            "question": c.question,
            "gold": c.gold,
            "prediction": c.prediction,
            "verdict": c.verdict,
            "category": c.category,
            "error_type": a.error_type if a else None,
            "op_id": a.op_id if a else None,
            "method": a.method if a else None,
            "verified": a.verified if a else None,
            # A verdict another verifier made (an older memtrace): `memtrace verify` renews it.
            "verdict_stale": bool(a and a.verified and a.verifier != VERIFIER_VERSION),
            "suspected_annotation": bool(a and a.error_type == ErrorType.ANNOTATION),
            "label": None if self.label is None else self.label.error_type,
            "label_op": None if self.label is None else self.label.op_id,
        }


def primary_attributions(attributions: list[AttributionSummary]) -> dict[tuple[str, str], AttributionSummary]:
    """One attribution per (run, case): the preferred method's, else the latest stored."""
    chosen: dict[tuple[str, str], AttributionSummary] = {}
    for attribution in attributions:
        key = (attribution.run_id, attribution.case_id)
        current = chosen.get(key)
        if current is None or current.method != PREFERRED_METHOD or attribution.method == PREFERRED_METHOD:
            chosen[key] = attribution
    return chosen


def run_rows(ws: Workspace, *, replays: bool = False) -> list[dict[str, Any]]:
    """Every run with its questions, accuracy and failures by attributed error type."""
    runs = ws.runs()
    replay_count = Counter(r.parent_run for r in runs if r.parent_run)
    shown = [r for r in runs if replays or not r.parent_run]
    verdicts = ws.store.verdict_counts()
    failures: dict[str, Counter[str]] = {}
    suspects: Counter[str] = Counter()
    for (run_id, _), attribution in primary_attributions(ws.store.attribution_summaries()).items():
        if attribution.error_type == ErrorType.ANNOTATION:
            suspects[run_id] += 1
        else:
            failures.setdefault(run_id, Counter())[attribution.error_type] += 1
    labels = Counter(label.run_id for label in ws.store.annotations())
    return [
        {
            **_run_row(run, verdicts.get(run.id, {}), failures.get(run.id, Counter()), replay_count, labels),
            "suspected_annotation_errors": suspects[run.id],
        }
        for run in shown
    ]


def _run_row(
    run: Run,
    verdicts: dict[str | None, int],
    failures: Counter[str],
    replays: Counter[str | None],
    labels: Counter[str],
) -> dict[str, Any]:
    correct, wrong = verdicts.get(CaseVerdict.CORRECT, 0), verdicts.get(CaseVerdict.WRONG, 0)
    judged = correct + wrong
    return {
        "id": run.id,
        "name": run.name,
        "system": run.system,
        "dataset": run.dataset,
        "conversation": run.conversation,
        "status": run.status,
        "parent_run": run.parent_run,
        "questions": sum(verdicts.values()),
        "wrong": wrong,
        "accuracy": correct / judged if judged else None,
        "failures": dict(failures.most_common()),
        "replays": replays.get(run.id, 0),
        "annotations": labels.get(run.id, 0),
    }


def case_rows(ws: Workspace, run_id: str) -> list[CaseRow]:
    """A run's cases in the order asked, each with its shown attribution and latest human label."""
    attributions = primary_attributions(ws.store.attribution_summaries(run_id))
    latest: dict[str, Annotation] = {}
    for label in ws.store.annotations(run_id):
        latest[label.case_id] = label
    return [
        CaseRow(case, attributions.get((run_id, case.id)), latest.get(case.id))
        for case in ws.store.cases(run_id)
    ]


def filter_cases(
    rows: list[CaseRow],
    *,
    verdict: str | None = None,
    error_type: str | None = None,
    query: str | None = None,
) -> list[CaseRow]:
    """Rows matching a verdict (`wrong`, `correct`), an attributed error type and words of the question."""
    words = (query or "").lower().split()
    kept = []
    for row in rows:
        if verdict and row.case.verdict != verdict:
            continue
        if error_type and (row.attribution is None or row.attribution.error_type != error_type):
            continue
        if words and not all(w in row.case.question.lower() for w in words):
            continue
        kept.append(row)
    return kept
