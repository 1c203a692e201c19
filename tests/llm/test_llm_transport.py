"""Failure handling over real HTTP: timeouts, 429 with Retry-After, 5xx, bad keys, dead endpoints."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from llmhelpers import Reply, ScriptedOpenAIServer, llm_ops, scripted_client

import memtrace as mt
from memtrace.llm import LLMError, make_client
from memtrace.llm.openai_backend import retry_after

USER = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


def closed_port_url() -> str:
    """A local URL where nothing listens (the port was just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_timeout_is_retried_then_reported_in_one_line(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply.slow(2.0), Reply.slow(2.0))
    client = scripted_client(server, timeout=0.15, max_retries=1)
    started = time.monotonic()
    with pytest.raises(LLMError) as info:
        client.chat(USER)
    assert time.monotonic() - started < 1.5
    assert str(info.value) == f"LLM endpoint {server.url} timed out after 0.15s (2 attempts)"
    assert len(server.chat_requests) == 2


def test_timeout_then_success_on_retry(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply.slow(2.0), "made it")
    assert scripted_client(server, timeout=0.15).chat(USER).text == "made it"


def test_429_waits_for_retry_after_then_succeeds(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply.error(429, "slow down", headers={"Retry-After": "0.3"}), "ok")
    client = scripted_client(server, backoff=0.001)
    started = time.monotonic()
    reply = client.chat(USER)
    assert reply.text == "ok" and reply.usage.calls == 1
    assert time.monotonic() - started >= 0.3  # the header, not the tiny backoff, set the wait
    assert len(server.chat_requests) == 2


def test_5xx_is_retried_and_gives_up_with_the_server_message(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply.error(503, "overloaded"), "ok")
    assert scripted_client(server).chat(USER).text == "ok"
    server.enqueue(*[Reply.error(500, "boom\nline two")] * 3)
    with pytest.raises(LLMError) as info:
        scripted_client(server, max_retries=2).chat(USER)
    assert str(info.value) == f"LLM endpoint {server.url} failed with 500: boom line two (3 attempts)"


def test_rate_limit_that_never_ends_is_one_line(server: ScriptedOpenAIServer) -> None:
    server.enqueue(*[Reply.error(429, "quota")] * 2)
    with pytest.raises(LLMError, match=r"is rate limiting \(429\): quota \(2 attempts\)$"):
        scripted_client(server, max_retries=1).chat(USER)


def test_bad_key_is_not_retried_and_says_so() -> None:
    with ScriptedOpenAIServer(api_key="right") as server:
        assert scripted_client(server).chat(USER).text == "echo: hi"
        client = scripted_client(server, api_key="wrong")
        with pytest.raises(LLMError) as info:
            client.chat(USER)
        assert str(info.value).startswith(f"LLM endpoint {server.url} rejected the API key (401)")
        assert len(server.chat_requests) == 2
        assert server.chat_requests[0].headers["authorization"] == "Bearer right"


def test_other_client_errors_fail_at_once(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply.error(404, "model 'nope' not found"))
    with pytest.raises(
        LLMError, match=r"does not serve model 'scripted-model' \(404\): model 'nope' not found"
    ):
        scripted_client(server).chat(USER)
    assert len(server.chat_requests) == 1


def test_connection_refused_is_one_line() -> None:
    url = closed_port_url()
    client = make_client(model="m", base_url=url, max_retries=1, backoff=0.001, max_backoff=0.002)
    with pytest.raises(LLMError) as info:
        client.chat(USER)
    assert str(info.value) == f"LLM endpoint {url} unreachable: connection refused (2 attempts)"
    assert info.value.__cause__ is None and info.value.__suppress_context__
    client.close()


def test_failure_inside_a_run_keeps_the_run_as_incomplete(workspace: Path) -> None:
    client = make_client(model="m", base_url=closed_port_url(), max_retries=0)
    with pytest.raises(LLMError), mt.run(workspace, name="r"), mt.op("extract_facts", category="extraction"):
        client.chat(USER, name="extract_facts.llm")
    with mt.open(workspace) as ws:
        run = ws.run("r")
    assert run.status == "incomplete" and "unreachable: connection refused" in (run.error or "")
    [llm_op] = llm_ops(workspace, "r")
    assert llm_op.status == "error" and llm_op.parent_op is not None
    assert llm_op.metadata["usage"]["calls"] == 0
    client.close()


def test_concurrency_limit_holds_across_threads(server: ScriptedOpenAIServer) -> None:
    server.default = lambda body: Reply.slow(0.05, "done")
    client = scripted_client(server, max_concurrency=2)
    threads = [threading.Thread(target=client.chat, args=(USER,)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(server.chat_requests) == 6
    assert server.max_in_flight == 2


def test_a_local_server_without_a_key_works(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert scripted_client(server, api_key=None).chat(USER).text == "echo: hi"
    assert server.chat_requests[0].headers["authorization"] == "Bearer no-key"


def test_make_client_reads_the_environment(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    monkeypatch.setenv("MEMTRACE_LLM_MODEL", "env-model")
    monkeypatch.setenv("MEMTRACE_EMBED_MODEL", "env-embed")
    client = make_client()
    assert client.chat(USER).model == "env-model"
    client.embed(["x"])
    assert server.chat_requests[0].headers["authorization"] == "Bearer env-key"
    assert server.embed_requests[0].body["model"] == "env-embed"
    client.close()


def test_configuration_mistakes_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(LLMError, match="unknown LLM backend 'nope'"):
        make_client("nope")
    with pytest.raises(LLMError, match="unknown LLM cache mode 'sometimes'"):
        make_client(cache="sometimes")
    with pytest.raises(LLMError, match="needs a workspace"):
        make_client(cache="read-only")


def test_retry_after_parsing() -> None:
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({}) is None and retry_after({"retry-after": "soon"}) is None
    assert 0 <= (retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) or 0) == 0
