"""What real local servers (llama.cpp, llama-cpp-python) do to a client, reproduced over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from llmhelpers import LLAMA_CPP_PYTHON_REFUSAL, Reply, ScriptedOpenAIServer, scripted_client
from pydantic import BaseModel

import memtrace as mt
from memtrace.llm import (
    ContextOverflowError,
    LLMError,
    LLMOutputError,
    LLMReplyCutError,
    MalformedReplyError,
    make_client,
)
from memtrace.llm.client import forget_response_formats

USER = [{"role": "user", "content": "hi"}]


class Facts(BaseModel):
    facts: list[str]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


def notices_of(server: ScriptedOpenAIServer, **options: object) -> tuple[list[str], object]:
    """A client whose retry notices are collected in the returned list."""
    seen: list[str] = []
    return seen, scripted_client(server, notify=seen.append, **options)


# -- response formats ---------------------------------------------------------------------------


def test_llama_cpp_python_500_refusal_of_json_schema_steps_down_without_retrying() -> None:
    with ScriptedOpenAIServer(
        reject_json_schema=True, reject_status=500, reject_message=LLAMA_CPP_PYTHON_REFUSAL
    ) as server:
        server.enqueue('{"facts": ["a"]}', '{"facts": ["b"]}')
        notices, client = notices_of(server, max_retries=4)
        assert client.chat(USER, schema=Facts).data.facts == ["a"]
        kinds = [(r.response_format or {}).get("type") for r in server.chat_requests]
        assert kinds == ["json_schema", "json_object"] and notices == []
        # the level is remembered per endpoint: a second client of the same server starts lower
        other = scripted_client(server)
        assert other.chat(USER, schema=Facts).data.facts == ["b"]
        assert (server.chat_requests[-1].response_format or {}).get("type") == "json_object"


def test_a_forgotten_endpoint_starts_again_at_json_schema() -> None:
    """A new server on a reused address may accept json_schema; the scripted server forgets on start."""
    with ScriptedOpenAIServer(reject_json_schema=True) as server:
        server.enqueue('{"facts": ["a"]}', '{"facts": ["b"]}')
        scripted_client(server).chat(USER, schema=Facts)
        forget_response_formats(server.url)
        server.reject_json_schema = False
        assert scripted_client(server).chat(USER, schema=Facts).data.facts == ["b"]
        kinds = [(r.response_format or {}).get("type") for r in server.chat_requests]
        assert kinds == ["json_schema", "json_object", "json_schema"]


def test_a_500_that_does_not_name_the_format_is_still_retried(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply.error(500, "out of memory"), '{"facts": []}')
    notices, client = notices_of(server)
    assert client.chat(USER, schema=Facts).data.facts == []
    kinds = [(r.response_format or {}).get("type") for r in server.chat_requests]
    assert kinds == ["json_schema", "json_schema"]
    assert len(notices) == 1 and "failed with 500: out of memory; retry 1 of 2" in notices[0]


# -- max_tokens and cut replies -----------------------------------------------------------------


def test_every_call_sends_a_bounded_configurable_max_tokens(server: ScriptedOpenAIServer) -> None:
    server.enqueue('{"facts": []}', "plain", '{"facts": []}')
    scripted_client(server).chat(USER, schema=Facts)
    scripted_client(server, max_tokens=77).chat(USER)
    scripted_client(server).chat(USER, schema=Facts, max_tokens=12)
    sent = [r.body.get("max_tokens") for r in server.chat_requests]
    assert sent[0] is not None and sent[0] > 0
    assert sent[1:] == [77, 12]


def test_max_tokens_from_the_environment(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTRACE_LLM_MAX_TOKENS", "33")
    scripted_client(server).chat(USER)
    assert server.chat_requests[-1].body["max_tokens"] == 33


def test_a_reply_cut_by_the_length_limit_is_reported_as_cut(server: ScriptedOpenAIServer) -> None:
    server.enqueue(*[Reply.cut('{"facts": ["Caroline said that she would')] * 3)
    client = scripted_client(server, max_tokens=16)
    with pytest.raises(LLMReplyCutError) as info:
        client.chat(USER, schema=Facts, name="extract_facts.llm")
    message = str(info.value)
    assert "cut at the length limit (max_tokens=16)" in message and server.url in message
    assert "not valid JSON" not in message and "\n" not in message
    feedback = server.chat_requests[1].messages[-1]["content"]
    assert "cut at the length limit" in feedback and "shorter" in feedback


def test_a_cut_reply_that_still_parses_is_used(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply.cut('{"facts": ["x"]}'))
    assert scripted_client(server).chat(USER, schema=Facts).data.facts == ["x"]


# -- timeouts, retries and configuration errors --------------------------------------------------


def test_timeout_and_retries_from_the_environment(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMTRACE_LLM_TIMEOUT", "7.5")
    monkeypatch.setenv("MEMTRACE_LLM_RETRIES", "1")
    client = make_client("openai", model="m", base_url=server.url)
    server.clients.append(client)
    assert client.backend.timeout == 7.5 and client.backend.max_retries == 1


def test_an_unreadable_environment_number_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTRACE_LLM_TIMEOUT", "soon")
    with pytest.raises(
        LLMError, match=r"^environment variable MEMTRACE_LLM_TIMEOUT='soon' is not a valid float$"
    ):
        make_client("openai", base_url="http://127.0.0.1:9/v1")


def test_a_timeout_is_retried_once_however_many_retries_are_allowed(server: ScriptedOpenAIServer) -> None:
    server.enqueue(*[Reply.slow(5.0)] * 4)
    notices, client = notices_of(server, timeout=0.2, max_retries=4)
    with pytest.raises(LLMError) as info:
        client.chat(USER)
    assert str(info.value) == f"LLM endpoint {server.url} timed out after 0.2s (2 attempts)"
    assert len(server.chat_requests) == 2
    assert len(notices) == 1 and "timed out after 0.2s; retry 1 of 4" in notices[0]


def test_a_hung_endpoint_gives_its_first_notice_before_any_retry(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply.slow(5.0), "finally")
    requests_at_notice: list[int] = []
    client = scripted_client(
        server, timeout=0.2, notify=lambda line: requests_at_notice.append(len(server.chat_requests))
    )
    assert client.chat(USER).text == "finally"
    # the notice came when the first attempt timed out, while only that one request had been sent
    assert requests_at_notice == [1]


def test_a_base_url_without_a_scheme_fails_at_once() -> None:
    with pytest.raises(LLMError) as info:
        make_client("openai", base_url="localhost:8080/v1")
    assert str(info.value) == (
        "LLM endpoint 'localhost:8080/v1' is not an http:// or https:// URL (e.g. http://localhost:8080/v1)"
    )


def test_an_unknown_model_is_not_retried_even_as_a_500(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply.error(500, "The model `smollm` does not exist"), "never")
    notices, client = notices_of(server, max_retries=4)
    with pytest.raises(LLMError, match=r"does not serve model 'scripted-model' \(500\)"):
        client.chat(USER)
    assert len(server.chat_requests) == 1 and notices == []


# -- unreadable 200 replies ----------------------------------------------------------------------


def test_a_truncated_200_body_is_retried_then_one_line(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply.truncated_body(), "whole")
    notices, client = notices_of(server)
    assert client.chat(USER).text == "whole"
    assert len(notices) == 1 and "not complete JSON" in notices[0]
    server.enqueue(*[Reply.truncated_body()] * 3)
    with pytest.raises(MalformedReplyError) as info:
        client.chat([{"role": "user", "content": "again"}])
    message = str(info.value)
    assert message.startswith(f"LLM endpoint {server.url} sent a reply body that is not complete JSON")
    assert message.endswith("(3 attempts)") and "\n" not in message


def test_a_200_without_choices_blames_the_endpoint_not_the_model(server: ScriptedOpenAIServer) -> None:
    server.enqueue(*[Reply.without_choices()] * 3)
    with pytest.raises(MalformedReplyError) as info:
        scripted_client(server).chat(USER, schema=Facts)
    assert str(info.value) == f"LLM endpoint {server.url} sent a reply without `choices` (3 attempts)"
    assert not isinstance(info.value, LLMOutputError)


# -- cache -----------------------------------------------------------------------------------------


def test_two_endpoints_serving_one_model_name_do_not_share_cached_replies(tmp_path: Path) -> None:
    with ScriptedOpenAIServer() as first, ScriptedOpenAIServer() as second:
        first.enqueue("from the first")
        second.enqueue("from the second")
        assert scripted_client(first, tmp_path).chat(USER).text == "from the first"
        assert scripted_client(second, tmp_path).chat(USER).text == "from the second"
        again = scripted_client(first, tmp_path).chat(USER)
        assert again.text == "from the first" and again.cached
        assert len(first.chat_requests) == 1 and len(second.chat_requests) == 1


# -- start-up --------------------------------------------------------------------------------------


@pytest.mark.parametrize("module", ["memtrace", "memtrace.cli.app", "memtrace.llm"])
def test_importing_memtrace_does_not_load_the_openai_sdk(module: str) -> None:
    loaded = "sorted(m for m in sys.modules if m.split('.')[0] == 'openai')"
    code = f"import json, sys, {module}; print(json.dumps({loaded}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_the_sdk_still_loads_when_a_client_is_made() -> None:
    code = (
        "import sys; from memtrace.llm import make_client, OpenAIBackend; "
        "make_client('openai', base_url='http://127.0.0.1:9/v1').close(); print('openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_a_cut_plain_answer_is_kept_and_marked_in_the_graph(
    server: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    server.enqueue(Reply.cut("Caroline moved to Boston in"))
    client = scripted_client(server)
    with mt.run(tmp_path, name="r"):
        reply = client.chat(USER, name="answer.llm")
    assert reply.text == "Caroline moved to Boston in" and reply.finish_reason == "length"
    with mt.open(tmp_path) as ws:
        [call] = ws.graph("r").ops_by_category("llm")
    assert call.metadata["finish_reason"] == "length" and call.status == "ok"


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (500, "Context size has been exceeded."),  # llama.cpp, when generation reaches n_ctx
        (400, "the request exceeds the available context size, try increasing it"),  # llama.cpp, prompt
    ],
)
def test_a_context_overflow_is_not_retried_and_names_the_fix(
    server: ScriptedOpenAIServer, status: int, message: str
) -> None:
    server.enqueue(Reply.error(status, message), '{"facts": []}')
    notices, client = notices_of(server, max_retries=4)
    with pytest.raises(ContextOverflowError) as info:
        client.chat(USER, schema=Facts)
    assert len(server.chat_requests) == 1 and notices == []
    assert str(info.value).startswith(
        f"LLM endpoint {server.url} cannot fit the request in its context window"
    )
    assert "lower --max-tokens" in str(info.value)
