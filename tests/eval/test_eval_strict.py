"""The strict verdict: every gold part present, dates resolved and matched; F1 stays the score."""

from __future__ import annotations

import pytest

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.eval import F1Judge, make_judge
from memtrace.eval.strict import StrictJudge, date_spans


@pytest.mark.parametrize(
    ("gold", "prediction", "category", "correct"),
    [
        ("the week before 4 May 2023", "24 May 2023", 2, False),  # F1 0.5 calls this right
        ("the week before 4 May 2023", "1 May 2023", 2, True),
        ("the week before 4 May 2023", "The week before 4 May 2023", 2, True),
        ("7 May 2023", "May 7, 2023", 2, True),
        ("7 May 2023", "May 2023", 2, False),  # less precise than the gold date
        ("June 2023", "14 June 2023", 2, True),
        ("The sunday before 25 May 2023", "21 May 2023", 2, True),
        ("two days before 9 June 2023", "8 June 2023", 2, False),
        ("Pottery, camping, painting, swimming", "pottery and camping", 1, False),  # half a list
        ("Pottery, camping, painting, swimming", "pottery, camping, painting, swimming", 1, True),
        ("Boston", "Boston, last year", 4, True),
        ("copywriter at Harbor Works", "Harbor Works", 4, False),  # the job itself is missing
        ("copywriter at Harbor Works", "a copywriter at Harbor Works", 4, True),
        ("Boston", "She moved to Boston in the spring", 4, False),  # never more lenient than F1
        ("Not mentioned", "Not mentioned in the conversation", 5, True),
        ("Not mentioned", "Boston", 5, False),
    ],
)
def test_strict_verdicts(gold: str, prediction: str, category: int, correct: bool) -> None:
    verdict = StrictJudge().verdict("q?", [gold], prediction, category)
    assert verdict.correct is correct, verdict.explanation
    assert verdict.method == "strict"


def test_the_score_stays_token_f1_and_the_explanation_names_what_is_missing() -> None:
    gold, prediction = ["the week before 4 May 2023"], "24 May 2023"
    f1 = F1Judge().verdict("When?", gold, prediction, 2)
    strict = StrictJudge().verdict("When?", gold, prediction, 2)
    assert f1.correct and not strict.correct  # the case the stricter verdict exists for
    assert strict.score == pytest.approx(f1.score)
    assert "4 may 2023" in (strict.explanation or "")


def test_relative_dates_resolve_to_the_days_they_name() -> None:
    (span,) = date_spans("the week before 4 May 2023")
    assert (span.first.isoformat(), span.last.isoformat()) == ("2023-04-27", "2023-05-03")
    (sunday,) = date_spans("the Sunday before 25 May 2023")
    assert sunday.first.isoformat() == "2023-05-21" and sunday.first.weekday() == 6


def test_auto_without_a_model_is_strict_and_records_its_verdict(
    tmp_path: object, open_ws: OpenWorkspace
) -> None:
    judge = make_judge()
    assert isinstance(judge, StrictJudge) and isinstance(make_judge("strict"), StrictJudge)
    with pytest.raises(ValueError, match="strict"):
        make_judge("nope")
    with mt.run(tmp_path, name="judged") as run:
        verdict = judge.judge("When?", ["7 May 2023"], "May 2023", category=2)
    graph = open_ws(tmp_path).graph(run.id)
    (op,) = graph.ops_by_category("evaluation")
    assert op.metadata["judge"] == "strict" and op.metadata["correct"] is verdict.correct is False


def test_strict_is_never_more_lenient_than_f1() -> None:
    golds = ["the week before 4 May 2023", "Boston", "pottery, camping", "7 May 2023", "adoption agencies"]
    predictions = ["Boston", "1 May 2023", "pottery", "camping and pottery", "May 7, 2023", "agencies", "x"]
    for gold in golds:
        for prediction in predictions:
            strict = StrictJudge().verdict("q?", [gold], prediction, 4)
            if strict.correct:
                assert F1Judge().verdict("q?", [gold], prediction, 4).correct, (gold, prediction)
