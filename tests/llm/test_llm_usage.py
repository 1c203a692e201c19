"""Token accounting per run and per case: nested scopes, threads and asyncio tasks never mix counts."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from llmhelpers import Reply, ScriptedOpenAIServer, scripted_client

import memtrace as mt
from memtrace.llm import Usage, current_usage_scope, recorded_usage, run_usage, usage_scope


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        s.default = slow_counted_reply
        yield s


def slow_counted_reply(body: dict) -> Reply:
    """Input tokens = words of the prompt (server default), output tokens = 1; slow enough to overlap."""
    return Reply("fine", delay=0.02, output_tokens=1)


def words(n: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": " ".join(["w"] * n)}]


def test_scopes_nest_and_count_in_every_enclosing_scope(server: ScriptedOpenAIServer) -> None:
    client = scripted_client(server)
    with usage_scope("batch") as batch:
        with usage_scope("case q1") as q1:
            client.chat(words(3))
            client.chat(words(4))
            assert current_usage_scope() is q1 and q1.parent is batch
        with usage_scope("case q2") as q2:
            client.chat(words(10))
    assert q1.usage == Usage(calls=2, input_tokens=7, output_tokens=2, cached_calls=0)
    assert q2.usage == Usage(calls=1, input_tokens=10, output_tokens=1)
    assert batch.usage == q1.usage + q2.usage
    assert current_usage_scope() is None
    assert client.usage == batch.usage


def test_cached_calls_are_counted_as_such(server: ScriptedOpenAIServer, workspace: Path) -> None:
    client = scripted_client(server, workspace=workspace)
    with usage_scope("case") as case:
        client.chat(words(5))
        client.chat(words(5))
    assert case.usage == Usage(calls=2, input_tokens=10, output_tokens=2, cached_calls=1)


def test_concurrent_cases_in_threads_keep_their_own_counts(server: ScriptedOpenAIServer) -> None:
    client = scripted_client(server, max_concurrency=8)
    results: dict[int, Usage] = {}
    lock = threading.Lock()

    def answer_case(i: int) -> None:
        with usage_scope(f"case q{i}") as case:
            for _ in range(3):
                client.chat(words(i))
        with lock:
            results[i] = case.usage

    with usage_scope("run") as whole, ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(mt.propagate(answer_case), range(1, 7)))
    for i in range(1, 7):
        assert results[i] == Usage(calls=3, input_tokens=3 * i, output_tokens=3)
    assert whole.usage == Usage(calls=18, input_tokens=3 * sum(range(1, 7)), output_tokens=18)
    assert server.max_in_flight > 1  # the cases really overlapped


def test_concurrent_cases_as_asyncio_tasks_keep_their_own_counts(server: ScriptedOpenAIServer) -> None:
    client = scripted_client(server)

    async def answer_case(i: int) -> Usage:
        with usage_scope(f"case q{i}") as case:
            await client.achat(words(i))
            await asyncio.sleep(0)
            await client.achat(words(i))
            vectors = await client.aembed([f"text {i}"])
            assert vectors.shape == (1, 8)
        return case.usage

    async def main() -> tuple[list[Usage], Usage]:
        with usage_scope("all") as whole:
            per_case = await asyncio.gather(*(answer_case(i) for i in range(1, 6)))
        return list(per_case), whole.usage

    per_case, whole = asyncio.run(main())
    for i, usage in enumerate(per_case, start=1):
        assert usage == Usage(calls=3, input_tokens=2 * i + 2, output_tokens=2)
    assert whole.calls == 15 and whole.input_tokens == sum(2 * i + 2 for i in range(1, 6))


def test_run_totals_and_recorded_op_usage_agree(server: ScriptedOpenAIServer, workspace: Path) -> None:
    client = scripted_client(server)
    with mt.run(workspace, name="r") as run:
        with mt.op("answer", category="response"):
            client.chat(words(2))
            client.chat(words(6))
        client.embed(["one two three"])
        totals = run_usage()
        assert run_usage(run) == totals
    assert totals == Usage(calls=3, input_tokens=11, output_tokens=2)
    with mt.open(workspace) as ws:
        assert recorded_usage(ws.graph("r")) == totals
    assert run_usage() == Usage()  # no run open any more
