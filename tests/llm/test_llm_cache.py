"""Record/replay: keyed by the full request, stored in <workspace>/llm-cache.db, three modes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from llmhelpers import ScriptedOpenAIServer, llm_ops, scripted_client
from pydantic import BaseModel

import memtrace as mt
from memtrace.llm import CacheMissError, request_key

USER = [{"role": "user", "content": "Where does Caroline live?"}]


class Answer(BaseModel):
    answer: str


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


def pipeline(workspace: Path, server: ScriptedOpenAIServer, name: str) -> list[str]:
    """A tiny recorded run making three different calls."""
    client = scripted_client(server, workspace=workspace)
    with mt.run(workspace, name=name), mt.op("answer", category="response"):
        texts = [client.chat(USER).text, client.chat(USER, temperature=0.7).text]
        texts.append(client.chat(USER, schema=Answer).text)
    return texts


def test_second_identical_run_makes_no_http_call(server: ScriptedOpenAIServer, workspace: Path) -> None:
    server.default = lambda body: '{"answer": "Boston"}'
    first = pipeline(workspace, server, "first")
    calls = server.request_count
    assert calls == 3
    second = pipeline(workspace, server, "second")
    assert second == first and server.request_count == calls
    assert [op.metadata["cached"] for op in llm_ops(workspace, "first")] == [False] * 3
    assert [op.metadata["cached"] for op in llm_ops(workspace, "second")] == [True] * 3


def test_cache_file_has_one_row_per_request_with_its_json(
    server: ScriptedOpenAIServer, workspace: Path
) -> None:
    client = scripted_client(server, workspace=workspace)
    client.chat(USER, max_tokens=5)
    conn = sqlite3.connect(workspace / "llm-cache.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    key, model, request, response, usage, created = conn.execute(
        "SELECT key, model, request, response, usage, created_at FROM llm_cache"
    ).fetchone()
    assert model == "scripted-model" and created > 0
    assert json.loads(request)["messages"] == USER and json.loads(request)["max_tokens"] == 5
    assert json.loads(response)["text"] == "echo: Where does Caroline live?"
    assert json.loads(usage) == {"input_tokens": 4, "output_tokens": 5}
    assert key == request_key(json.loads(request))
    conn.close()


def test_key_covers_prompt_text_and_every_parameter(server: ScriptedOpenAIServer, workspace: Path) -> None:
    client = scripted_client(server, workspace=workspace)
    variants = [
        dict(messages=USER),
        dict(messages=[{"role": "user", "content": "Where does Caroline live now?"}]),
        dict(messages=[{"role": "system", "content": "Be brief."}, *USER]),
        dict(messages=USER, temperature=0.5),
        dict(messages=USER, max_tokens=10),
        dict(messages=USER, json_mode=True),
        dict(messages=USER, schema=Answer),
        dict(messages=USER, schema={"type": "object", "properties": {"answer": {"type": "string"}}}),
    ]
    server.default = lambda body: '{"answer": "x"}'
    for options in variants:
        client.chat(**options)
    assert server.request_count == len(variants)
    for options in variants:
        assert client.chat(**options).cached
    assert client.chat(USER, temperature=0).cached  # 0 and 0.0 are one request
    assert server.request_count == len(variants)
    other_model = scripted_client(server, workspace=workspace, model="other-model")
    assert not other_model.chat(USER).cached


def test_read_only_replays_hits_and_names_the_missing_request(
    server: ScriptedOpenAIServer, workspace: Path
) -> None:
    scripted_client(server, workspace=workspace).chat(USER)
    replay = scripted_client(server, workspace=workspace, cache="read-only")
    assert replay.chat(USER).cached
    with pytest.raises(CacheMissError) as info:
        replay.chat([{"role": "user", "content": "A question never asked"}], name="answer.llm")
    message = str(info.value)
    assert "read-only" in message and "answer.llm" in message and "'A question never asked'" in message
    assert "scripted-model" in message and "\n" not in message
    assert server.request_count == 1


def test_read_only_without_a_recording_is_an_error(server: ScriptedOpenAIServer, tmp_path: Path) -> None:
    with pytest.raises(CacheMissError, match="does not exist"):
        scripted_client(server, workspace=tmp_path / "empty", cache="read-only")


def test_cache_off_always_calls(server: ScriptedOpenAIServer, workspace: Path) -> None:
    client = scripted_client(server, workspace=workspace, cache="off")
    client.chat(USER)
    client.chat(USER)
    assert server.request_count == 2 and not (workspace / "llm-cache.db").exists()


def test_retry_attempts_are_cached_so_replay_reproduces_them(
    server: ScriptedOpenAIServer, workspace: Path
) -> None:
    server.enqueue("not json", '{"answer": "Boston"}')
    first = scripted_client(server, workspace=workspace).chat(USER, schema=Answer)
    replay = scripted_client(server, workspace=workspace, cache="read-only").chat(USER, schema=Answer)
    assert replay.data == first.data == Answer(answer="Boston")
    assert replay.cached and replay.usage.calls == 2 and replay.usage.cached_calls == 2
    assert server.request_count == 2


def test_embeddings_are_cached_per_text(server: ScriptedOpenAIServer, workspace: Path) -> None:
    client = scripted_client(server, workspace=workspace)
    first = client.embed(["alpha", "beta"])
    both = client.embed(["beta", "gamma", "alpha"])
    assert (both[0] == first[1]).all() and (both[2] == first[0]).all()
    assert [r.body["input"] for r in server.embed_requests] == [["alpha", "beta"], ["gamma"]]
    client.embed(["gamma"])
    assert len(server.embed_requests) == 2


def test_a_cache_up_to_a_mark_serves_the_entries_before_it_and_its_own(tmp_path: Path) -> None:
    from memtrace.llm.cache import LLMCache, high_water

    def save(cache: LLMCache, key: str) -> None:
        cache.save(key, "chat", {"model": "m"}, {"text": key}, {})

    assert high_water(tmp_path) == 0
    earlier = LLMCache(tmp_path)
    save(earlier, "before")
    earlier.close()
    mark = high_water(tmp_path)
    first, second = LLMCache(tmp_path, upto=mark), LLMCache(tmp_path, upto=mark)
    try:
        save(first, "shared-request")
        assert first.lookup("shared-request", {}, "x") is not None  # its own call
        assert second.lookup("shared-request", {}, "x") is None  # another run's: asked again
        assert second.lookup("before", {}, "x") is not None  # recorded before the command
        save(second, "shared-request")
        assert second.lookup("shared-request", {}, "x") is not None
    finally:
        first.close()
        second.close()
    assert high_water(tmp_path) > mark
