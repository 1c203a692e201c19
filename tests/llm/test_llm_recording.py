"""Every model call is an `llm` operation nested under the current one, with prompt and response."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from llmhelpers import Reply, ScriptedOpenAIServer, llm_ops, scripted_client
from pydantic import BaseModel

import memtrace as mt
from memtrace.llm import LLMOutputError

MESSAGES = [
    {"role": "system", "content": "Extract facts as JSON."},
    {"role": "user", "content": "Caroline: I moved to Boston last May."},
]


class Facts(BaseModel):
    facts: list[str]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


def test_llm_op_is_nested_with_prompt_and_response_variables(
    server: ScriptedOpenAIServer, workspace: Path
) -> None:
    server.enqueue(
        Reply(json.dumps({"facts": ["Caroline moved to Boston"]}), input_tokens=13, output_tokens=2)
    )
    client = scripted_client(server)
    with mt.run(workspace, name="r"), mt.op("extract_facts", category="extraction") as parent:
        reply = client.chat(MESSAGES, schema=Facts, temperature=0.2, name="extract_facts.llm")
        parent.output("facts", reply.data.facts)
    with mt.open(workspace) as ws:
        graph = ws.graph("r")
        [llm] = graph.ops_by_category("llm")
        assert llm.name == "extract_facts.llm" and llm.parent_op == parent.id and llm.status == "ok"
        assert [c.id for c in graph.children(parent.id)] == [llm.id]
        [prompt] = graph.inputs(llm.id)
        [response] = graph.outputs(llm.id)
        assert prompt.category == "prompt" and graph.value(prompt.id) == MESSAGES
        assert response.category == "llm_response"
        assert graph.value(response.id) == json.dumps({"facts": ["Caroline moved to Boston"]})
        meta = llm.metadata
        assert meta["model"] == "scripted-model" and meta["backend"] == "openai"
        assert (
            meta["temperature"] == 0.2
            and meta["max_tokens"] == client.max_tokens
            and meta["schema"] == "Facts"
        )
        assert meta["cached"] is False and meta["attempts"] == 1
        assert meta["usage"] == {"calls": 1, "input_tokens": 13, "output_tokens": 2, "cached_calls": 0}
        assert llm.seq > parent.seq


def test_rejected_replies_are_kept_in_metadata(server: ScriptedOpenAIServer, workspace: Path) -> None:
    server.enqueue("sorry, no JSON today", json.dumps({"facts": []}))
    with mt.run(workspace, name="r"):
        scripted_client(server).chat(MESSAGES, schema=Facts)
    [llm] = llm_ops(workspace, "r")
    assert llm.metadata["attempts"] == 2
    assert llm.metadata["rejected"][0]["text"] == "sorry, no JSON today"
    assert "not valid JSON" in llm.metadata["rejected"][0]["error"]


def test_output_error_records_the_last_reply_and_fails_the_op(
    server: ScriptedOpenAIServer, workspace: Path
) -> None:
    server.enqueue("a", "b", "c")
    with pytest.raises(LLMOutputError), mt.run(workspace, name="r"):
        scripted_client(server).chat(MESSAGES, schema=Facts)
    with mt.open(workspace) as ws:
        graph = ws.graph("r")
        [llm] = graph.ops_by_category("llm")
        assert llm.status == "error" and "LLMOutputError" in llm.metadata["error"]
        assert graph.value(graph.outputs(llm.id)[0].id) == "c"
        assert ws.run("r").status == "incomplete"


def test_embed_is_recorded_with_counts(server: ScriptedOpenAIServer, workspace: Path) -> None:
    with mt.run(workspace, name="r"), mt.op("index", category="construction") as parent:
        scripted_client(server).embed(["a", "b", "a"], name="index.embed")
    [op] = llm_ops(workspace, "r")
    assert op.name == "index.embed" and op.parent_op == parent.id
    assert op.metadata["texts"] == 3 and op.metadata["cache_hits"] == 0 and op.metadata["usage"]["calls"] == 1


def test_without_a_run_nothing_is_recorded_and_calls_still_work(server: ScriptedOpenAIServer) -> None:
    assert mt.current_run() is None
    assert scripted_client(server).chat(MESSAGES).text.startswith("echo: Caroline")
