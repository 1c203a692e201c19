"""`memtrace run`, `attribute` and `verify` against model servers: limits, the judge flags, failed calls.

Run in-process through the console entry point (the same code as the installed command, without the
interpreter start-up); the scripted server answers over real HTTP.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memtrace as mt
from conftest import run_cli_in_process

sys.path.insert(0, str(Path(__file__).resolve().parent / "llm"))
from llmhelpers import Reply, ScriptedOpenAIServer


def grades(body: dict[str, Any]) -> Reply:
    """A judge that compares the gold and predicted answers, and an answerer that says 'Boston'."""
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    if "You grade answers" in text:
        gold = text.split("Gold answer: ")[1].split("\n")[0].casefold()
        return Reply(json.dumps({"correct": gold in text.rpartition("Predicted answer:")[2].casefold()}))
    return Reply("Boston")


def says_yes(body: dict[str, Any]) -> Reply:
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    return Reply(json.dumps({"correct": True, "reason": "ok"}) if "You grade answers" in text else "Boston")


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(default=grades) as s:
        yield s


def run_args(ws: Path, server: ScriptedOpenAIServer, system: str = "rag") -> list[str]:
    return [
        "run", "-w", str(ws), "--system", system, "--questions", "3", "--llm", "openai",
        "--model", "m", "--base-url", server.url,
    ]  # fmt: skip


def test_limits_reach_every_call_and_f1_judge_asks_no_model(
    server: ScriptedOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*run_args(tmp_path / "ws", server), "--judge", "f1", "--max-tokens", "64", "--timeout", "9"]
    code, out, err = run_cli_in_process(capsys, *args, "--retries", "0", "--json", tmp_path / "acc.json")
    assert code == 0, err
    requests = server.chat_requests
    assert requests and {r.body["max_tokens"] for r in requests} == {64}
    assert not any("You grade answers" in r.messages[0]["content"] for r in requests)
    payload = json.loads((tmp_path / "acc.json").read_text())
    assert payload["rag"]["failed_operations"] == 0 and payload["rag"]["questions"] == 3
    assert "judge_check" not in payload["rag"] and "unusable replies" not in out


def test_a_separate_judge_endpoint_is_probed_and_an_agreeable_one_reported(
    server: ScriptedOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedOpenAIServer(default=says_yes) as judge_server:
        args = [*run_args(tmp_path / "ws", server), "--judge-model", "judge-m"]
        args += ["--judge-base-url", judge_server.url, "--json", str(tmp_path / "acc.json")]
        code, out, err = run_cli_in_process(capsys, *args)
        judged = judge_server.chat_requests
    assert code == 0, err
    assert judged and all(r.body["model"] == "judge-m" for r in judged)
    assert not any("You grade answers" in r.messages[0]["content"] for r in server.chat_requests)
    assert "judge is unreliable: it accepted a nonsense answer" in " ".join(out.split())
    row = json.loads((tmp_path / "acc.json").read_text())["rag"]
    check = row["judge_check"]
    assert check["reliable"] is False and check["probes"] > 0
    assert row["accuracy_judge"] == "strict" and row["judges"]["llm"]["headline"] is False  # not its figure
    with mt.open(tmp_path / "ws") as ws:
        [run] = ws.runs()
        calls = ws.graph(run.id).ops_by_category("llm")
    assert "judge.llm" in {c.name for c in calls}


def test_a_sane_judge_passes_the_probe(
    server: ScriptedOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli_in_process(capsys, *run_args(tmp_path / "ws", server), "--judge", "llm")
    assert code == 0, err
    assert "judge rejected the nonsense answer in all" in out


def test_unusable_replies_are_counted_and_the_run_completes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedOpenAIServer(default=lambda body: Reply.cut('{"facts": ["Caroline said')) as server:
        args = [*run_args(tmp_path / "ws", server, "mem0"), "--judge", "f1", "--json", tmp_path / "acc.json"]
        code, out, err = run_cli_in_process(capsys, *args)
    assert code == 0, err
    failed = json.loads((tmp_path / "acc.json").read_text())["mem0"]
    assert failed["failed_operations"] > 0 and len(failed["failures"]) == failed["failed_operations"]
    assert all("cut at the length limit" in line for line in failed["failures"])
    flat = " ".join(out.split())
    assert f"{failed['failed_operations']} model call(s) gave unusable replies" in flat
    with mt.open(tmp_path / "ws") as ws:
        [run] = ws.runs()
        assert run.status == "complete" and len(ws.cases(run.id)) == 3


def test_bad_judge_flags_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli_in_process(
        capsys, "run", "-w", tmp_path / "ws", "--system", "rag", "--judge", "vibes"
    )
    assert code == 1 and err.strip() == "error: unknown --judge 'vibes' (choose strict, f1, llm)"
    code, _, err = run_cli_in_process(
        capsys, "run", "-w", tmp_path / "ws", "--system", "rag", "--judge", "llm"
    )
    assert code == 1 and "--judge llm needs a model" in err and len(err.strip().splitlines()) == 1
    bad_url = ["--llm", "openai", "--base-url", "localhost:8080/v1"]
    code, _, err = run_cli_in_process(capsys, "run", "-w", tmp_path / "ws", "--system", "rag", *bad_url)
    assert code == 1 and "is not an http:// or https:// URL" in err and len(err.strip().splitlines()) == 1


# -- attribute and verify take the same limits ------------------------------------------------------


def blames_nothing(body: dict[str, Any]) -> Reply:
    """An all-at-once attributor's answer that names no operation."""
    return Reply(json.dumps({"error_type": "Undetermined", "op_id": None, "reason": "no", "confidence": 0}))


def test_attribute_passes_the_limits_to_its_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = tmp_path / "ws"
    assert run_cli_in_process(capsys, "example", ws)[0] == 0
    with ScriptedOpenAIServer(default=blames_nothing) as server:
        args = ["attribute", ws, "--method", "all-at-once", "--llm", "openai", "--model", "m"]
        args += ["--base-url", server.url, "--max-tokens", "77", "--timeout", "9"]
        code, _, err = run_cli_in_process(capsys, *args, "--json", tmp_path / "a.json")
        asked = server.chat_requests
    assert code == 0, err
    attributed = json.loads((tmp_path / "a.json").read_text())
    assert attributed and len(asked) == len(attributed)  # one call per failed case
    assert {r.body["max_tokens"] for r in asked} == {77}
    with ScriptedOpenAIServer(default=lambda body: Reply.error(500)) as failing:
        args = ["attribute", ws, "--method", "all-at-once", "--llm", "openai", "--model", "m", "--refresh"]
        code, _, err = run_cli_in_process(capsys, *args, "--base-url", failing.url, "--retries", "0")
        assert len(failing.chat_requests) == 1  # no retry: the first failure ends the command
    assert code == 1 and "failed with 500" in err and "(1 attempt)" in err


def test_verify_passes_the_limits_to_the_replays_model(
    server: ScriptedOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    for command in (("run", ws, "--system", "rag,mem0", "--questions", "6"), ("attribute", ws)):
        code, _, err = run_cli_in_process(capsys, *command)
        assert code == 0, err
    args = ["verify", ws, "--llm", "openai", "--model", "m", "--base-url", server.url]
    limits = ["--max-tokens", "55", "--retries", "0", "--timeout", "9"]
    code, _, err = run_cli_in_process(capsys, *args, *limits)
    assert code == 0, err
    replayed = server.chat_requests
    assert replayed and {r.body["max_tokens"] for r in replayed} == {55}


def test_every_command_that_calls_a_model_takes_concurrency() -> None:
    import typer.main

    from memtrace.cli.app import app
    from memtrace.cli.llm_options import DEFAULT_CONCURRENCY
    from memtrace.llm import limiter

    def commands(group: Any, path: str = "") -> Iterator[tuple[str, Any]]:
        if hasattr(group, "commands"):
            for name, sub in group.commands.items():
                yield from commands(sub, f"{path} {name}".strip())
        else:
            yield path, group

    with_model = {
        path: {p.name for p in command.params}
        for path, command in commands(typer.main.get_command(app))
        if any(p.name == "llm" for p in command.params)
    }
    assert {"run", "attribute", "verify", "optimize", "report", "bench memtracebench"} <= set(with_model)
    assert all("concurrency" in names for names in with_model.values()), with_model
    assert DEFAULT_CONCURRENCY == limiter.DEFAULT_CONCURRENCY  # the CLI's copy, kept to start fast


def test_concurrency_below_one_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli_in_process(capsys, "run", "-w", str(tmp_path / "ws"), "--concurrency", "0")
    assert code != 0 and "--concurrency 0: give 1 or more" in err
