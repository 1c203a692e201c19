"""Cases: the questions of a run with gold answers, the prediction and the verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..graph.model import Case
from ..vocabulary import CaseVerdict

if TYPE_CHECKING:
    from .ports import RunRecorder


class CaseHandle:
    """Fill in a case as the run answers and judges it; changes are written with the next flush."""

    __slots__ = ("case", "recorder")

    def __init__(self, recorder: RunRecorder, case: Case) -> None:
        self.recorder = recorder
        self.case = case

    @property
    def id(self) -> str:
        return self.case.id

    def predict(self, prediction: str, var: str | None = None) -> None:
        """The system's answer, and the variable version that holds it when there is one."""
        self.case.prediction = prediction
        self.case.prediction_var = var
        self.recorder.mark_case_dirty(self.case.id)

    def judge(self, correct: bool, score: float | None = None, **metadata: Any) -> None:
        """The verdict on the prediction (and the score it came from, e.g. token F1)."""
        self.case.verdict = CaseVerdict.CORRECT if correct else CaseVerdict.WRONG
        self.case.score = score
        self.case.metadata.update(metadata)
        self.recorder.mark_case_dirty(self.case.id)

    def __repr__(self) -> str:
        return f"<case {self.case.id} {self.case.question[:40]!r} verdict={self.case.verdict}>"
