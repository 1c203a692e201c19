"""Human labels of a run as MemTraceBench annotations, so a team can build its own benchmark.

MemTraceBench keeps one annotation per failed question at `data.annotations` of a smartcomment
graph: the question's query node, gold answers, prediction, evidence ids and the decisive
operation with its error type (`final_op_id`, `final_error_type`). A case with several labels is
exported with its latest one; the note and author travel in `memtrace` beside the standard keys.
"""

from __future__ import annotations

from typing import Any

from ..graph.model import QUERY_VAR, Annotation, Case
from ..graph.store import Store


def _query_node(store: Store, case: Case) -> str | None:
    """The query node the case asked: as imported, else the query the answer step read."""
    known = case.metadata.get(QUERY_VAR)
    if isinstance(known, str):
        return known
    if not case.prediction_var:
        return None
    row = store.conn.execute(
        "SELECT q.id FROM edges p JOIN edges i ON i.run = p.run AND i.op = p.op AND i.role = 'in'"
        " JOIN vars q ON q.run = i.run AND q.id = i.var"
        " WHERE p.run=? AND p.var=? AND p.role='out' AND q.category LIKE '%query%' ORDER BY q.seq DESC",
        (case.run_id, case.prediction_var),
    ).fetchone()
    return None if row is None else row[0]


def annotation_record(store: Store, case: Case, label: Annotation) -> dict[str, Any]:
    """One MemTraceBench annotation for a labelled case."""
    imported = case.metadata.get("annotation")
    base = dict(imported) if isinstance(imported, dict) else {}
    record = {
        **base,
        "query_id": base.get("query_id") or _query_node(store, case) or case.id,
        "query": case.question,
        "golden_answers": case.gold,
        "prediction": case.prediction,
        "prediction_id": base.get("prediction_id") or case.prediction_var,
        "source_evidence_ids": case.evidence,
        "final_error_type": label.error_type,
        "final_op_id": label.op_id,
        "memtrace": {"case_id": case.id, "note": label.note, "author": label.author},
    }
    return {key: value for key, value in record.items() if value is not None}


def annotation_records(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The run's labelled cases as MemTraceBench annotations, in case order (latest label each)."""
    latest: dict[str, Annotation] = {}
    for label in store.annotations(run_id):
        latest[label.case_id] = label
    return [
        annotation_record(store, case, latest[case.id]) for case in store.cases(run_id) if case.id in latest
    ]
