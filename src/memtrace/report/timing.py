"""Failures over conversation time: when the decisive operation ran, relative to the question.

A failure caused early (an extraction in the first session) and one caused at question time (a
retrieval) call for different fixes, so the report bins decisive operations by how much conversation
lay between them and the question: in sessions when the run recorded session boundaries (top-level
operations with a `session` number, as the runner's `load_session`), else in fifths of the messages.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass

from ..attribution.evidence.locate import message_versions
from ..graph import GraphQueries, GraphView
from .model import FailureRecord, Timing, TimingBin

QUESTION_TIME = "question time"
_FIFTHS = ("0-20%", "20-40%", "40-60%", "60-80%", "80-100%")


@dataclass(slots=True)
class Placement:
    at_question_time: bool
    sessions_before_question: int | None
    position: float | None


class RunClock:
    """Where a seq falls in a run's conversation: sessions started and messages recorded around it."""

    def __init__(self, graph: GraphQueries) -> None:
        ops = graph.ops.values() if isinstance(graph, GraphView) else graph.store.ops(graph.run.id)  # type: ignore[attr-defined]
        self.session_seqs = sorted(
            op.seq for op in ops if op.parent_op is None and isinstance(op.metadata.get("session"), int)
        )
        self.message_seqs = sorted(v.seq for v in message_versions(graph))

    def place(self, op_seq: int, question_seq: int) -> Placement:
        """How far before the question (asked from `question_seq` on) an operation at `op_seq` ran."""
        at_question = op_seq >= question_seq
        sessions = None
        if self.session_seqs and not at_question:
            sessions = sum(1 for s in self.session_seqs if op_seq < s < question_seq)
        before_question = bisect_left(self.message_seqs, question_seq)
        position = None
        if before_question:
            position = 1.0 if at_question else bisect_right(self.message_seqs, op_seq) / before_question
        return Placement(at_question, sessions, position)


def timing_histogram(records: list[FailureRecord]) -> Timing:
    """Bins from the earliest point of the conversation (left) to question time (right)."""
    placed = [r for r in records if r.op_seq is not None and (r.at_question_time or r.position is not None)]
    unknown = len(records) - len(placed)
    earlier = [r for r in placed if not r.at_question_time]
    by_sessions = bool(earlier) and all(r.sessions_before_question is not None for r in earlier)
    counts: dict[str, Counter[str]] = {}
    if by_sessions:
        most = max(r.sessions_before_question or 0 for r in earlier)
        labels = [str(k) for k in range(most, -1, -1)]
        unit, axis = "sessions", "sessions recorded after the decisive operation, before the question"
    else:
        labels = list(_FIFTHS) if earlier else []
        unit, axis = "fraction", "share of the conversation recorded when the decisive operation ran"
    for label in [*labels, QUESTION_TIME]:
        counts[label] = Counter()
    for r in placed:
        if r.at_question_time:
            label = QUESTION_TIME
        elif by_sessions:
            label = str(r.sessions_before_question)
        else:
            label = _FIFTHS[min(int((r.position or 0.0) * 5), 4)]
        counts[label][r.error_type] += 1
    bins = [TimingBin(label=k, count=sum(c.values()), by_error_type=dict(c)) for k, c in counts.items()]
    return Timing(unit=unit, axis=axis, bins=bins if placed else [], unknown=unknown)
