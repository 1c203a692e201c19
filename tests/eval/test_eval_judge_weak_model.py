"""An LLM judge served by a weak model: invalid JSON, nonsense agreement, and how each is reported."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memtrace as mt
from memtrace.eval import F1Judge, KnownCase, LLMJudge, check_judge, make_judge, nonsense_probes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llmhelpers import ScriptedOpenAIServer, scripted_client

CASES = [
    KnownCase("What breed is Clara's dog?", ["labrador"]),
    KnownCase("What is the dog called?", ["Daisy"]),
    KnownCase("Where does Clara live?", ["Boston"]),
    KnownCase("Is there anything about Mars?", ["Not mentioned in the conversation"], "adversarial"),
]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


def says_yes(body: dict[str, Any]) -> str:
    """What a 135M judge did: every answer is correct."""
    return json.dumps({"correct": True, "reason": "looks right"})


def compares(body: dict[str, Any]) -> str:
    """A sane judge: correct when the predicted answer contains the gold one."""
    user = body["messages"][1]["content"]
    gold = user.split("Gold answer: ")[1].split("\n")[0].casefold()
    predicted = user.split("Predicted answer: ")[1].casefold()
    return json.dumps({"correct": gold in predicted, "reason": "compared"})


def test_invalid_json_from_the_client_applies_on_malformed(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.default = lambda body: "Yes! It is correct."
    judge = make_judge("llm", client=scripted_client(server))
    with mt.run(tmp_path, name="r") as run:
        verdict = judge.judge("What breed is Clara's dog?", ["labrador"], "a labrador")
    assert verdict.method == "llm-malformed-f1" and verdict.correct
    assert "unusable" in (verdict.explanation or "")
    with mt.open(tmp_path) as ws:
        graph = ws.graph(run.id)
        [judge_op] = graph.ops_by_category("evaluation")
        calls = graph.ops_by_category("llm")
    assert judge_op.status == "ok" and calls and {c.name for c in calls} == {"judge.llm"}
    assert all(c.parent_op == judge_op.id for c in calls)


def test_invalid_json_still_raises_when_asked_to(server: ScriptedOpenAIServer) -> None:
    server.default = lambda body: "no idea"
    judge = LLMJudge(scripted_client(server), retries=0)
    with pytest.raises(ValueError, match="did not reply with"):
        judge.judge("Q?", ["x"], "x")


def test_probes_pair_each_question_with_an_unrelated_gold_answer() -> None:
    probes = nonsense_probes(CASES)
    assert [(case.gold[0], nonsense) for case, nonsense in probes] == [
        ("labrador", "Daisy"),
        ("Daisy", "labrador"),
        ("Boston", "labrador"),
    ]  # the unanswerable question is never probed


def test_a_judge_that_agrees_with_nonsense_is_unreliable(server: ScriptedOpenAIServer) -> None:
    server.default = says_yes
    check = check_judge(make_judge("llm", client=scripted_client(server)), CASES)
    assert not check.reliable and check.probes == 3 and len(check.accepted_nonsense) == 3
    assert "unreliable" in check.summary() and "'Daisy' correct for gold 'labrador'" in check.summary()
    assert check.to_dict()["reliable"] is False


def test_a_judge_that_rejects_nonsense_is_reliable(server: ScriptedOpenAIServer) -> None:
    server.default = compares
    check = check_judge(make_judge("llm", client=scripted_client(server)), CASES)
    assert check.reliable and check.probes == 3 and "rejected the nonsense answer in all 3" in check.summary()
    assert check_judge(F1Judge(), CASES).reliable
    assert check_judge(F1Judge(), CASES[:1]).probes == 0
