"""Chat over real HTTP: plain text, JSON schema output, the parse-and-retry loop, format fallback."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from llmhelpers import Reply, ScriptedOpenAIServer, scripted_client
from pydantic import BaseModel

from memtrace.llm import LLMError, LLMOutputError

USER = [{"role": "user", "content": "Where does Caroline live?"}]
FACTS_SCHEMA = {
    "title": "Facts",
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
    "additionalProperties": False,
}


class Facts(BaseModel):
    facts: list[str]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


def test_plain_chat_returns_text_usage_and_model(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply("Boston", input_tokens=12, output_tokens=1))
    reply = scripted_client(server).chat(USER, temperature=0.3, max_tokens=20)
    assert reply.text == "Boston" and reply.data is None and not reply.cached
    assert reply.model == "scripted-model"
    assert (reply.usage.calls, reply.usage.input_tokens, reply.usage.output_tokens) == (1, 12, 1)
    body = server.chat_requests[0].body
    assert body["messages"] == USER and body["temperature"] == 0.3 and body["max_tokens"] == 20
    assert "response_format" not in body


def test_pydantic_schema_goes_out_as_json_schema_and_comes_back_validated(
    server: ScriptedOpenAIServer,
) -> None:
    server.enqueue(json.dumps({"facts": ["Caroline lives in Boston"]}))
    reply = scripted_client(server).chat(USER, schema=Facts)
    assert reply.data == Facts(facts=["Caroline lives in Boston"])
    sent = server.chat_requests[0].response_format
    assert sent is not None and sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "Facts"
    assert sent["json_schema"]["schema"]["required"] == ["facts"]


def test_dict_schema_is_validated_and_returned_as_data(server: ScriptedOpenAIServer) -> None:
    server.enqueue('```json\n{"facts": ["a", "b"]}\n```')
    reply = scripted_client(server).chat(USER, schema=FACTS_SCHEMA)
    assert reply.data == {"facts": ["a", "b"]}


def test_malformed_json_then_valid_on_retry_feeds_the_error_back(server: ScriptedOpenAIServer) -> None:
    server.enqueue('{"facts": ["unterminated"', json.dumps({"facts": ["ok"]}))
    reply = scripted_client(server).chat(USER, schema=Facts)
    assert reply.data == Facts(facts=["ok"])
    assert reply.usage.calls == 2
    retry = server.chat_requests[1].messages
    assert retry[: len(USER)] == USER
    assert retry[-2] == {"role": "assistant", "content": '{"facts": ["unterminated"'}
    assert retry[-1]["role"] == "user" and "not valid JSON" in retry[-1]["content"]


def test_schema_mismatch_then_valid_on_retry(server: ScriptedOpenAIServer) -> None:
    server.enqueue(json.dumps({"facts": "not a list"}), json.dumps({"facts": ["x"]}))
    reply = scripted_client(server).chat(USER, schema=FACTS_SCHEMA)
    assert reply.data == {"facts": ["x"]}
    assert "$.facts: expected array" in server.chat_requests[1].messages[-1]["content"]


def test_output_error_after_the_retries_are_used_up(server: ScriptedOpenAIServer) -> None:
    server.enqueue("nope", "still nope", "never JSON")
    with pytest.raises(LLMOutputError) as info:
        scripted_client(server, json_retries=2).chat(USER, schema=Facts, name="extract_facts.llm")
    message = str(info.value)
    assert "\n" not in message
    assert "schema 'Facts'" in message and "3 attempts" in message and "extract_facts.llm" in message
    assert info.value.reply == "never JSON" and info.value.attempts == 3
    assert len(server.chat_requests) == 3


def test_json_schema_rejected_falls_back_to_json_object_and_remembers(server: ScriptedOpenAIServer) -> None:
    server.reject_json_schema = True
    server.enqueue(json.dumps({"facts": ["a"]}), json.dumps({"facts": ["b"]}))
    client = scripted_client(server)
    first = client.chat(USER, schema=Facts)
    second = client.chat([{"role": "user", "content": "again"}], schema=Facts)
    assert (first.data.facts, second.data.facts) == (["a"], ["b"])
    kinds = [r.response_format["type"] for r in server.chat_requests if r.response_format]
    assert kinds == ["json_schema", "json_object", "json_object"]
    system = server.chat_requests[1].messages[0]
    assert (
        system["role"] == "system" and '"facts"' in system["content"] and "JSON schema" in system["content"]
    )
    assert first.usage.calls == 1  # a rejected format is not a model call


def test_no_response_format_support_falls_back_to_prompt_only(server: ScriptedOpenAIServer) -> None:
    server.reject_json_schema = server.reject_json_object = True
    server.enqueue(json.dumps({"facts": []}))
    messages = [{"role": "system", "content": "You extract facts."}, *USER]
    reply = scripted_client(server).chat(messages, schema=Facts)
    assert reply.data == Facts(facts=[])
    last = server.chat_requests[-1]
    assert last.response_format is None
    assert last.messages[0]["content"].startswith("You extract facts.\n\nReply with a single JSON object")
    assert len(last.messages) == 2


def test_json_mode_without_schema_parses_any_json(server: ScriptedOpenAIServer) -> None:
    server.enqueue('[1, 2, {"a": null}]')
    reply = scripted_client(server).chat(USER, json_mode=True)
    assert reply.data == [1, 2, {"a": None}]
    assert server.chat_requests[0].response_format == {"type": "json_object"}


def test_bad_messages_fail_before_any_request(server: ScriptedOpenAIServer) -> None:
    client = scripted_client(server)
    with pytest.raises(LLMError, match="at least one message"):
        client.chat([])
    with pytest.raises(LLMError, match="'role' and 'content'"):
        client.chat([{"text": "hi"}])
    assert server.request_count == 0


def test_embed_returns_one_float32_row_per_text(server: ScriptedOpenAIServer) -> None:
    client = scripted_client(server, embed_model="scripted-embed")
    vectors = client.embed(["a b", "c", "a b"])
    assert vectors.shape == (3, 8) and str(vectors.dtype) == "float32"
    assert (vectors[0] == vectors[2]).all() and not (vectors[0] == vectors[1]).all()
    assert server.embed_requests[0].body["input"] == ["a b", "c"]  # duplicates sent once
    assert client.embed([]).shape == (0, 0)
