"""Fetching the question stage's model replies ahead (systems/ahead.py): the same graph, the calls
made several at a time, none wasted, and no reply recorded twice or served to another run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import memtrace as mt
from memtrace.datasets import load_dataset
from memtrace.eval import make_judge
from memtrace.systems import run_conversation
from memtrace.systems.registry import system_class

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "executors"))
from llmhelpers import Reply, ScriptedOpenAIServer, scripted_client
from scripted_replies import scripted_reply
from store_dump import store_rows


def slow_reply(body: dict[str, Any]) -> Reply:
    return Reply(scripted_reply(body), delay=0.01)


def record(workspace: Path, system: str, ahead: int) -> tuple[Any, ScriptedOpenAIServer]:
    (conversation,) = load_dataset("sample", questions=6)
    with ScriptedOpenAIServer(default=slow_reply) as server:
        client = scripted_client(server, workspace)
        built = system_class(system)(llm=client)
        result = run_conversation(
            built, conversation, workspace, judge=make_judge("llm", client), run_id="r1", ahead=ahead
        )
    return result, server


@pytest.mark.parametrize("system", ["rag", "evermemos"])
def test_fetching_ahead_records_the_graph_of_one_call_at_a_time(system: str, tmp_path: Path) -> None:
    _, one_server = record(tmp_path / "one", system, ahead=1)
    many, many_server = record(tmp_path / "many", system, ahead=4)
    assert store_rows(tmp_path / "many") == store_rows(tmp_path / "one")
    assert many.fetched_ahead > 0 and many.unused_ahead == 0  # every reply fetched was asked for
    assert len(many_server.chat_requests) == len(one_server.chat_requests)  # none asked twice
    assert one_server.max_in_flight == 1 and many_server.max_in_flight > 1
    with mt.open(tmp_path / "many") as ws:
        calls = ws.graph("r1").ops_by_category("llm")
    assert calls and not any(call.metadata.get("cached") for call in calls)  # served as made, not cached
