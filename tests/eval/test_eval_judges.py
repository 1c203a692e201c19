"""Judges: F1 thresholds, the LLM judge against a scripted client, recording, malformed output."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.eval import (
    JUDGE_SCHEMA,
    F1Judge,
    Judge,
    JudgeOutputError,
    LLMJudge,
    Verdict,
    make_judge,
    parse_judge_reply,
)

QUESTION = "Where did Caroline move?"


@dataclass
class ReplyDouble:
    """Test double for memtrace.llm's reply: text, and parsed data when a schema was asked for."""

    text: str
    data: Any = None


class FakeChatClientDouble:
    """Test double for memtrace.llm's client: replies from a script, remembers every request.

    Like the real client it records its call as an `llm.chat` operation, so nesting can be checked.
    """

    def __init__(self, *replies: ReplyDouble) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def chat(
        self, messages: list[dict[str, str]], *, schema: dict | None = None, name: str = "llm.chat"
    ) -> ReplyDouble:
        self.calls.append({"messages": messages, "schema": schema, "name": name})
        reply = self.replies.pop(0)
        with mt.op(name, category="llm") as op:
            op.input("messages", messages, category="prompt")
            op.output("response", reply.text, category="llm_response")
        return reply


def json_reply(correct: bool, reason: str = "same city") -> ReplyDouble:
    data = {"correct": correct, "reason": reason}
    return ReplyDouble(json.dumps(data), data)


# -- F1 judge --------------------------------------------------------------------------------------


def test_f1_judge_threshold_is_inclusive() -> None:
    prediction = "She moved to Boston in May"  # F1 = 2/7 against "Boston"
    assert not F1Judge(0.5).judge(QUESTION, "Boston", prediction).correct
    assert F1Judge(0.25).judge(QUESTION, "Boston", prediction).score == pytest.approx(2 / 7)
    verdict = F1Judge(0.5).judge("What did they do?", "the cat ran", "cats running")  # F1 exactly 0.5
    assert verdict.correct and verdict.score == 0.5 and verdict.method == "f1"
    assert verdict.explanation == "token F1 0.50 >= 0.5 against gold 'the cat ran'"
    assert F1Judge(0.0).judge(QUESTION, "Boston", "Paris").correct  # threshold 0 accepts anything
    assert F1Judge(1.0).judge(QUESTION, ["Paris", "Boston"], "boston").correct


def test_f1_judge_uses_locomo_category_rules() -> None:
    judge = F1Judge()
    assert judge.judge("Who is unmarried?", "Jon", "Not mentioned in the conversation", category=5).correct
    assert not judge.judge("Who is unmarried?", "Jon", "Jon", category=5).correct
    assert judge.judge("Which countries?", "Sweden, Norway", "Norway, Sweden", category=1).score == 1.0


def test_f1_judge_rejects_bad_thresholds() -> None:
    for threshold in (-0.1, 1.5):
        with pytest.raises(ValueError, match="threshold"):
            F1Judge(threshold)


# -- make_judge ------------------------------------------------------------------------------------


def test_make_judge_uses_the_llm_only_when_a_client_is_configured() -> None:
    from memtrace.eval.strict import StrictJudge

    offline = make_judge(threshold=0.3)
    assert isinstance(offline, StrictJudge) and offline.threshold == 0.3  # eval/strict.py
    client = FakeChatClientDouble()
    online = make_judge(client=client)
    assert isinstance(online, LLMJudge) and online.client is client
    assert isinstance(make_judge("f1", client=client), F1Judge)
    assert isinstance(offline, Judge) and isinstance(online, Judge)
    with pytest.raises(ValueError, match="needs an LLM client"):
        make_judge("llm")
    with pytest.raises(ValueError, match="unknown judge kind"):
        make_judge("bert")


# -- LLM judge -------------------------------------------------------------------------------------


def test_llm_judge_asks_with_schema_and_returns_the_models_verdict() -> None:
    client = FakeChatClientDouble(json_reply(True, "Boston in both"))
    verdict = LLMJudge(client).judge(QUESTION, ["Boston", "Boston, MA"], "She relocated to Boston")
    assert verdict == Verdict(correct=True, score=1.0, method="llm", explanation="Boston in both")
    (call,) = client.calls
    assert call["schema"] == JUDGE_SCHEMA
    user = call["messages"][-1]["content"]
    assert QUESTION in user and "Boston; Boston, MA" in user and "She relocated to Boston" in user


def test_llm_judge_tells_the_model_when_a_question_is_unanswerable() -> None:
    client = FakeChatClientDouble(json_reply(False, "it names a person"))
    verdict = LLMJudge(client).judge("Who is unmarried?", "Jon", "Jon", category=5)
    assert not verdict.correct
    user = client.calls[0]["messages"][-1]["content"]
    assert "unanswerable" in user and "Jon\n" not in user.split("Predicted")[0]


def test_the_llm_judge_is_recorded_as_an_evaluation_op(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    client = FakeChatClientDouble(json_reply(False, "Paris is not Boston"))
    with mt.run(tmp_path, name="judged") as run:
        verdict = LLMJudge(client).judge(QUESTION, "Boston", "Paris")
    graph = open_ws(tmp_path).graph(run.id)
    (judge_op,) = graph.ops_by_category("evaluation")
    assert judge_op.name == "judge" and judge_op.status == "ok"
    assert judge_op.metadata["method"] == "llm" and judge_op.metadata["correct"] is False
    inputs = {v.name: graph.value(v.id) for v in graph.inputs(judge_op.id)}
    assert inputs == {"question": QUESTION, "gold_answers": ["Boston"], "prediction": "Paris"}
    (output,) = graph.outputs(judge_op.id)
    assert output.name == "verdict" and output.category == "verdict"
    expected = {"correct": False, "score": 0.0, "method": "llm", "explanation": "Paris is not Boston"}
    assert graph.value(output.id) == verdict.to_dict() == expected
    (llm_op,) = graph.ops_by_category("llm")
    assert llm_op.parent_op == judge_op.id  # the model call nests inside the judge


def test_a_recorded_prediction_is_linked_instead_of_copied(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    with mt.run(tmp_path, name="linked") as run:
        with mt.op("answer", category="response") as op:
            prediction_var = op.output("prediction", "Boston", category="prediction")
        F1Judge().judge(QUESTION, "Boston", "Boston", prediction_var=prediction_var)
    graph = open_ws(tmp_path).graph(run.id)
    (judge_op,) = graph.ops_by_category("evaluation")
    assert prediction_var in [v.id for v in graph.inputs(judge_op.id)]
    assert [o.name for o in graph.producers(prediction_var)] == ["answer"]
    assert judge_op.metadata["judge"] == "f1" and judge_op.metadata["score"] == 1.0


def test_judging_without_a_recording_run_is_a_plain_call() -> None:
    assert mt.current_run() is None
    assert F1Judge().judge(QUESTION, "Boston", "Boston").correct


# -- malformed LLM output --------------------------------------------------------------------------


def test_a_malformed_reply_is_retried_with_a_format_reminder() -> None:
    client = FakeChatClientDouble(ReplyDouble("Yes, I think so."), json_reply(True))
    assert LLMJudge(client).judge(QUESTION, "Boston", "Boston").correct
    assert len(client.calls) == 2
    retry = client.calls[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "Yes, I think so."}
    assert "required format" in retry[-1]["content"]


def test_persistently_malformed_output_raises_and_the_op_records_the_error(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    client = FakeChatClientDouble(ReplyDouble("maybe"), ReplyDouble('{"verdict": "dunno"}'))
    with mt.run(tmp_path, name="broken") as run, pytest.raises(JudgeOutputError, match="dunno"):
        LLMJudge(client).judge(QUESTION, "Boston", "Boston")
    (judge_op,) = open_ws(tmp_path).graph(run.id).ops_by_category("evaluation")
    assert judge_op.status == "error" and "JudgeOutputError" in judge_op.metadata["error"]


def test_malformed_output_can_fall_back_to_f1_visibly() -> None:
    client = FakeChatClientDouble(ReplyDouble("???"))
    judge = LLMJudge(client, retries=0, on_malformed="f1")
    verdict = judge.judge(QUESTION, "Boston", "Boston")
    assert verdict.correct and verdict.score == 1.0 and verdict.method == "llm-malformed-f1"
    assert "unusable" in (verdict.explanation or "") and len(client.calls) == 1
    with pytest.raises(ValueError, match="on_malformed"):
        LLMJudge(client, on_malformed="guess")  # type: ignore[arg-type]


def test_llm_judge_needs_a_gold_answer_unless_unanswerable() -> None:
    with pytest.raises(ValueError, match="without a gold answer"):
        LLMJudge(FakeChatClientDouble()).judge(QUESTION, None, "Boston")


@pytest.mark.parametrize(
    ("reply", "parsed"),
    [
        (ReplyDouble("", {"correct": True, "reason": "ok"}), (True, "ok")),
        (ReplyDouble('```json\n{"correct": false, "reason": "no"}\n```'), (False, "no")),
        (ReplyDouble('Sure! {"correct": "yes", "reason": "same"} Hope this helps.'), (True, "same")),
        (ReplyDouble('{"label": "CORRECT"}'), (True, "")),
        (ReplyDouble('{"label": "WRONG", "explanation": "off"}'), (False, "off")),
        (ReplyDouble('{"correct": 1}'), (True, "")),
        (ReplyDouble('{"correct": "perhaps"}'), None),
        (ReplyDouble('["correct"]'), None),
        (ReplyDouble("not json at all"), None),
        (ReplyDouble(""), None),
    ],
)
def test_parse_judge_reply(reply: ReplyDouble, parsed: tuple[bool, str] | None) -> None:
    assert parse_judge_reply(reply) == parsed
