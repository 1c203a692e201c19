"""The optimisation loop end to end on sample conversations: offline, with the scripted LLM server, by CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import is_closed, run_cli_in_process
from memtrace.cli import app as cli_app
from memtrace.cli import common as cli_common
from memtrace.datasets import sample_conversation
from memtrace.llm import LLMError, make_client
from memtrace.llm.cache import LLMCache
from memtrace.optimize import OptimizeResult, history_paths, optimize
from memtrace.optimize.evaluate import Evaluator
from memtrace.systems.long_context import LongContext

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llmhelpers import Reply, ScriptedOpenAIServer, scripted_client

MEMTRACE = Path(sys.executable).with_name("memtrace")
SPLIT = {"train": 1, "validation": 1, "holdout": 1}


def _never_keeps_a_lowering_change(result: OptimizeResult) -> None:
    for record in result.rounds:
        scores = [p.validation for p in record.proposals if p.validation is not None]
        if record.kept:
            assert record.chosen is not None and record.validation_after is not None
            assert record.validation_after > record.validation_before
            assert record.chosen.validation == max(scores)
        else:
            assert all(score <= record.validation_before for score in scores)


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, OptimizeResult]:
    """long_context started from a too-low answer threshold: the loop raises it, and keeps that."""
    ws = tmp_path_factory.mktemp("kept")
    result = optimize(
        "long_context",
        "sample",
        ws,
        train=2,
        validation=1,
        holdout=1,
        rounds=2,
        start={"min_answer_support": 0.3},
    )
    return ws, result


def test_a_kept_change_strictly_improves_validation(kept: tuple[Path, OptimizeResult]) -> None:
    _, result = kept
    first = result.rounds[0]
    assert first.kept and first.chosen is not None and first.chosen.tunable == "min_answer_support"
    assert first.validation_after is not None and first.validation_after > first.validation_before
    assert result.final_config["min_answer_support"] == first.chosen.new
    assert result.changes == {"min_answer_support": [0.3, first.chosen.new]}
    assert result.holdout is not None and result.holdout.final_accuracy > result.holdout.start_accuracy
    assert result.holdout.low <= result.holdout.delta <= result.holdout.high
    _never_keeps_a_lowering_change(result)


def test_history_json_and_markdown_have_the_fields(kept: tuple[Path, OptimizeResult]) -> None:
    ws, _ = kept
    json_path, md_path = history_paths(ws, "long_context")
    history = json.loads(json_path.read_text())
    for key in ("system", "dataset", "split", "start_config", "final_config", "changes", "rounds", "holdout"):
        assert key in history
    assert history["split"]["train"] == ["sample-0", "sample-1"] and history["split"]["holdout"] == [
        "sample-3"
    ]
    record = history["rounds"][0]
    for key in (
        "train_accuracy",
        "diagnosis",
        "proposals",
        "validation_before",
        "kept",
        "decision",
        "tokens",
    ):
        assert key in record
    assert {"failed", "error_types", "verification", "feedback"} <= set(record["diagnosis"])
    assert {"tunable", "old", "new", "validation", "status", "reason"} <= set(record["proposals"][0])
    assert set(record["tokens"]) == {"train", "proposals", "validation", "total"}
    assert {"delta", "low", "high", "questions", "seed"} <= set(history["holdout"])
    assert "| holdout |" in md_path.read_text()


def test_rollback_when_no_proposal_beats_validation(tmp_path: Path) -> None:
    """From the defaults (0.5 is the sample's best threshold) every proposal ties or loses: rolled back."""
    result = optimize("rag", "sample", tmp_path, **SPLIT, rounds=2, candidates=2)
    assert result.rounds and not any(r.kept for r in result.rounds)
    worse = [p for r in result.rounds for p in r.proposals if (p.validation or 1) < r.validation_before]
    assert worse, "the sample should have a proposal that lowers validation"
    assert all(r.decision.startswith(("rolled back", "no proposal")) for r in result.rounds)
    assert result.final_config == result.start_config and result.changes == {}
    assert result.holdout is not None and result.holdout.delta == 0.0
    # A rolled-back value is not proposed again for the same config.
    proposed = [(p.tunable, p.new) for r in result.rounds for p in r.proposals]
    assert len(proposed) == len(set(proposed))
    _never_keeps_a_lowering_change(result)


def test_identical_evaluations_run_once(tmp_path: Path) -> None:
    evaluator = Evaluator(LongContext, tmp_path, dataset="sample")
    conversation = sample_conversation(0)
    config = LongContext.Config()
    first = evaluator.score(config, [conversation], label="validation")
    again = evaluator.score(LongContext.Config(), [conversation], label="validation")
    assert evaluator.runs == 1 and first.outcomes == again.outcomes
    kept_run = evaluator.score(config, [conversation], label="holdout", keep=True)
    assert evaluator.runs == 2 and kept_run.run_ids  # a scratch result never stands in for a kept run
    evaluator.close()
    assert not (tmp_path / "optimize-scratch").exists()


# -- with an LLM: the scripted OpenAI-compatible server ------------------------------------------

MARKER = "Answer with the exact words of the memory."


def _scripted(body: dict[str, Any]) -> Reply:
    """Judge: correct iff the prediction says GOOD. Answer: GOOD iff the prompt has the marker.
    Rewrite: the first drops {context} (rejected), later ones add the marker (kept)."""
    messages = body.get("messages", [])
    text = "\n".join(str(m.get("content", "")) for m in messages)
    if "You grade answers" in text:
        prediction = text.rpartition("Predicted answer:")[2]
        return Reply(json.dumps({"correct": "GOOD" in prediction, "reason": "scripted"}))
    if "You improve one prompt" in text:
        current = text.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
        if "round 1:" not in text:
            return Reply(json.dumps({"prompt": current.replace("{context}", ""), "rationale": "bad"}))
        return Reply(json.dumps({"prompt": f"{current}\n{MARKER}", "rationale": "be literal"}))
    return Reply("GOOD" if MARKER in text else "bad guess")


def test_llm_rewrites_the_blamed_prompt_with_feedback_and_history(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(default=_scripted) as server:
        client = scripted_client(server, tmp_path)
        result = optimize("long_context", "sample", tmp_path, **SPLIT, rounds=2, questions=4, llm=client)
        rewrites = [r for r in server.chat_requests if "You improve one prompt" in r.messages[0]["content"]]
    first, second = result.rounds
    (rejected,) = first.proposals
    assert rejected.kind == "prompt" and rejected.status == "rejected" and "placeholders" in rejected.reason
    assert not first.kept
    assert second.kept and second.chosen is not None and second.chosen.tunable == "answer_prompt"
    assert MARKER in result.final_config["answer_prompt"]
    assert result.holdout is not None and (result.holdout.start_accuracy, result.holdout.final_accuracy) == (
        0,
        1,
    )
    # The request carried the grouped feedback, an example, and (second time) the earlier round.
    request = rewrites[-1].messages[0]["content"]
    assert "ResponseError" in request and "Q: " in request and "round 1:" in request
    assert "round 1:" not in rewrites[0].messages[0]["content"]
    assert first.tokens["total"]["input_tokens"] > 0 and result.tokens.calls > 0
    assert result.llm == "scripted-model"
    _never_keeps_a_lowering_change(result)


def test_an_unreachable_llm_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    with ScriptedOpenAIServer() as server:
        url = server.url  # nothing listens there once the server stops
    client = make_client("openai", model="m", base_url=url, api_key="k", max_retries=0, timeout=2.0)
    with pytest.raises(LLMError) as caught:
        optimize("rag", "sample", tmp_path / "api", **SPLIT, rounds=1, questions=2, llm=client)
    assert "\n" not in str(caught.value) and "unreachable" in str(caught.value)
    # The command prints it as one line too (a fast client stands in for --llm openai's).
    monkeypatch.setattr(cli_common, "llm_client", lambda *args: client)
    args = ["memtrace", "optimize", "-w", str(tmp_path / "cli"), "--system", "rag", "--llm", "openai"]
    monkeypatch.setattr(sys, "argv", [*args, "--train", "1", "--validation", "1", "--holdout", "1"])
    with pytest.raises(SystemExit) as exit_code:
        cli_app.main()
    assert exit_code.value.code == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "unreachable" in line


# -- the command line ------------------------------------------------------------------------------


def _memtrace(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [str(MEMTRACE), *map(str, args)], capture_output=True, text=True, env=env, timeout=120
    )


def test_cli_runs_end_to_end_on_sample_and_writes_the_history(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    result = _memtrace(
        "optimize", "-w", ws, "--system", "rag", "--dataset", "sample", "--train", "1", "--validation", "1",
        "--holdout", "1", "--rounds", "1", "--questions", "12", "--set", "min_answer_support=0.3",
        "--json", tmp_path / "out.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "round 1:" in result.stdout and "Holdout: starting vs final config" in result.stdout
    history = json.loads((ws / "optimize-history-rag.json").read_text())
    assert history["start"] == {"defaults with": {"min_answer_support": 0.3}}
    assert history == json.loads((tmp_path / "out.json").read_text())
    assert (ws / "optimize-history-rag.md").exists()


def test_cli_too_few_conversations_is_one_line(tmp_path: Path) -> None:
    result = _memtrace("optimize", "-w", tmp_path / "ws", "--system", "rag", "--dataset", "sample:0")
    assert result.returncode == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.endswith("sample:0: 1 conversation(s), but --train 4 --validation 2 --holdout 2 need 8")


# -- a weak model ----------------------------------------------------------------------------------


def _rewrites_in_prose(body: dict[str, Any]) -> Reply:
    """Like `_scripted`, but the rewrite comes back as prose a small model writes, never JSON."""
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    if "You improve one prompt" in text:
        return Reply("Sure! Here is a better prompt that will help the assistant answer.")
    return _scripted(body)


def test_an_unusable_rewrite_is_rejected_and_the_run_goes_on(tmp_path: Path) -> None:
    with ScriptedOpenAIServer(default=_rewrites_in_prose) as server:
        client = scripted_client(server, tmp_path)
        result = optimize("long_context", "sample", tmp_path, **SPLIT, rounds=1, questions=4, llm=client)
    [record] = result.rounds
    rewrite = next(p for p in record.proposals if p.kind == "prompt")
    assert rewrite.status == "rejected" and "the model's rewrite was unusable" in rewrite.reason
    assert result.holdout is not None and result.final_config == result.start_config


def _judge_says_correct(body: dict[str, Any]) -> Reply:
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    if "You grade answers" in text:
        return Reply(json.dumps({"correct": True, "reason": "scripted"}))
    return Reply("an answer")


def test_no_failures_to_learn_from_is_said_and_ends_the_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any, opened_llm_caches: list[LLMCache]
) -> None:
    with ScriptedOpenAIServer(default=_judge_says_correct) as server:
        args = ["memtrace", "optimize", "-w", str(tmp_path), "--system", "rag", "--llm", "openai"]
        args += ["--model", "m", "--base-url", server.url, "--max-tokens", "40", "--judge", "llm"]
        args += ["--train", "1", "--validation", "1", "--holdout", "1", "--rounds", "3", "--questions", "2"]
        monkeypatch.setattr(sys, "argv", args)
        with pytest.raises(SystemExit) as exit_code:
            cli_app.main()
        sent = {r.body.get("max_tokens") for r in server.chat_requests}
    out = capsys.readouterr().out
    assert exit_code.value.code == 0
    assert "round 1: train 1.0000, no failures to learn from" in out and "round 2" not in out
    assert "judge is unreliable" in " ".join(out.split())  # it called every answer correct
    assert sent == {40}
    history = json.loads((tmp_path / "optimize-history-rag.json").read_text())
    [round_one] = history["rounds"]
    assert round_one["decision"].startswith("no failures to learn from") and not round_one["proposals"]
    assert len(opened_llm_caches) == 1 and is_closed(opened_llm_caches[0])  # the model client was closed


def test_a_bad_judge_flag_still_closes_the_model_client(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], opened_llm_caches: list[LLMCache]
) -> None:
    # the model client is made before the judge flags are read: refusing them must not leak it
    with ScriptedOpenAIServer(default=_judge_says_correct) as server:
        code, _, err = run_cli_in_process(
            capsys, "optimize", "-w", tmp_path, "--system", "rag", "--llm", "openai", "--model", "m",
            "--base-url", server.url, "--judge", "nope",
        )  # fmt: skip
    assert code == 1 and "unknown --judge 'nope'" in err
    assert len(opened_llm_caches) == 1 and is_closed(opened_llm_caches[0])
