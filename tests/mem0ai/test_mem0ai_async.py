"""The mem0ai adapter on the real `mem0.AsyncMemory` (1.0.x classic or 2.x additive, whichever is
installed) against the scripted OpenAI-compatible server: the same operations and graph shape as
the sync Memory, one subtree per `await add()` even when adds run concurrently, swallowed errors,
and a one-line refusal of what the adapter cannot trace."""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mem0helpers import Mem0Script, Mem0Server, caroline_script, close_memory, mem0_settings

from conftest import OpenWorkspace

mem0 = pytest.importorskip("mem0", reason="mem0ai is not installed (pip install 'memtrace[mem0ai]')")

from llmhelpers import Reply  # noqa: E402

import memtrace as mt  # noqa: E402
from memtrace.adapters.mem0ai import mem0_version, pipeline_for, trace, untrace  # noqa: E402
from memtrace.adapters.mem0ai.parts import embedder_in_process, store_is_remote  # noqa: E402
from memtrace.adapters.mem0ai.state import AddStep  # noqa: E402
from memtrace.errors import MemtraceError  # noqa: E402
from memtrace.graph import GraphView  # noqa: E402
from memtrace.interop.otlp.export import plan_run  # noqa: E402

PIPELINE = pipeline_for(mem0_version())
CLASSIC = PIPELINE == "classic"
USER = "caroline"


@pytest.fixture
def script() -> Mem0Script:
    return caroline_script(
        {
            "adopted a cat": ["Melanie has a cat named Luna"],
            "violin": ["Melanie is learning the violin"],
            "Denver": ["Caroline visits her parents in Denver"],
            "landscapes": ["Caroline paints landscapes"],
        }
    )


@pytest.fixture
def server(script: Mem0Script) -> Iterator[Mem0Server]:
    with Mem0Server(script) as running:
        yield running


@pytest.fixture
def memory(server: Mem0Server, tmp_path: Path) -> Iterator[Any]:
    made = mem0.AsyncMemory.from_config(mem0_settings(server, tmp_path / "mem0"))
    serialize_store(made)
    yield made
    close_memory(made)


@pytest.fixture
def view(workspace: Path, open_ws: OpenWorkspace) -> Callable[[], GraphView]:
    """Loads the run `mem0` (the workspace stays open until the test ends: `open_ws` closes it)."""
    return lambda: open_ws(workspace).view("mem0")


def serialize_store(memory: Any) -> None:
    """One vector-store call at a time: qdrant's local mode is not thread-safe, and AsyncMemory writes
    from concurrent threads (even within one add), so mem0 loses writes now and then without this,
    traced or not (1.0.11: 10 of 30 untraced runs of the concurrent test's adds)."""
    lock = threading.Lock()
    store = memory.vector_store
    for name in ("insert", "search", "update", "delete", "get", "list"):
        method = getattr(store, name)

        @functools.wraps(method)
        def locked(*args: Any, _method: Callable[..., Any] = method, **kwargs: Any) -> Any:
            with lock:
                return _method(*args, **kwargs)

        setattr(store, name, locked)


def run_async(workspace: Path, body: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run `body()` on a fresh event loop inside one recorded run `mem0`."""

    async def recorded() -> Any:
        with mt.run(workspace, name="mem0", system="mem0ai"):
            return await body()

    return asyncio.run(recorded())


async def add(memory: Any, *texts: str, user: str = USER) -> dict[str, Any]:
    return await memory.add([{"role": "user", "content": t} for t in texts], user_id=user)


async def search(memory: Any, query: str) -> dict[str, Any]:
    if CLASSIC:
        return await memory.search(query, user_id=USER, limit=5)
    return await memory.search(query, filters={"user_id": USER}, top_k=5, threshold=0.0)


def events(result: dict[str, Any]) -> list[str]:
    return [r["event"] for r in result["results"]]


def under(graph: GraphView, op_id: str) -> set[str]:
    """The operations nested (at any depth) inside `op_id`, itself included."""
    found = {op_id}
    changed = True
    while changed:
        changed = False
        for op in graph.ops.values():
            if op.parent_op in found and op.id not in found:
                found.add(op.id)
                changed = True
    return found


def test_async_adds_record_the_sync_graph_shape(
    memory: Any, workspace: Path, view: Callable[[], GraphView]
) -> None:
    tracer = trace(memory)
    assert tracer.is_async and "AsyncMemory" in tracer.describe() and tracer.pipeline == PIPELINE
    assert inspect.iscoroutinefunction(memory.add) and inspect.iscoroutinefunction(memory.search)

    async def body() -> tuple[dict[str, Any], ...]:
        first = await add(
            memory, "Caroline: I moved to Boston last year.", "Caroline: I have a guitar named Blue."
        )
        second = await add(memory, "Caroline: We found a flat in Back Bay.")
        third = await add(memory, "Caroline: I gave away my old guitar.")
        if not CLASSIC:  # 2.x changes a memory only through explicit calls
            boston = next(r["id"] for r in first["results"] if "Boston" in r["memory"])
            guitar = next(r["id"] for r in first["results"] if "guitar" in r["memory"])
            await memory.update(boston, "Caroline lives in Back Bay, Boston")
            await memory.delete(guitar)
        return first, second, third

    first, second, third = run_async(workspace, body)
    assert events(first) == ["ADD", "ADD"]
    graph = view()
    assert graph.run.metadata["mem0ai"] == {"version": mem0_version(), "pipeline": PIPELINE}
    names = {op.name: op.category for op in graph.ops.values()}
    writes = {"create_memory", "update_memory"} if CLASSIC else {"insert_memories", "update_memory"}
    expected = {"mem0.add": "construction", "extract_facts": "extraction", "search_memories": "retrieval"}
    expected |= {name: "update" for name in writes} | {"delete_memory": "deletion", "embed": "llm"}
    if CLASSIC:
        expected["update_memory_decision"] = "update"
    assert {name: names.get(name) for name in expected} == expected
    lifecycles = {unit: [e.change for e in graph.lifecycle(unit)] for unit in graph.memory_units()}
    assert sorted(c for c in lifecycles.values() if len(c) > 1) == [
        ["create", "delete"],
        ["create", "update"],
    ]
    assert len(lifecycles) == (2 if CLASSIC else 4)
    moved = next(u for u, c in lifecycles.items() if c == ["create", "update"])
    assert graph.lifecycle(moved)[-1].value["memory"] == "Caroline lives in Back Bay, Boston"
    if not CLASSIC:
        return
    assert events(second) == ["UPDATE"] and events(third) == ["DELETE"]
    assert second["results"][0]["id"] == moved  # the decision's "0" named the memory mem0 updated
    for entry in (e for unit in graph.memory_units() for e in graph.lifecycle(unit)):
        assert graph.op(entry.op.parent_op).name == "update_memory_decision"  # made inside its decision
    decisions = sorted(
        (op for op in graph.ops.values() if op.name == "update_memory_decision"), key=lambda o: o.seq
    )
    assert [d.metadata["events"][0] for d in decisions[1:]] == [
        ["UPDATE", moved],
        ["DELETE", third["results"][0]["id"]],
    ]
    assert all(
        d.status == "ok" and d.ended_at >= max(graph.op(c).ended_at for c in under(graph, d.id))
        for d in decisions
    )
    rows = [row for op in graph.ops.values() for row in op.metadata.get("history", [])]
    assert sorted(event for _, event in rows) == ["ADD", "ADD", "DELETE", "UPDATE"]


def test_concurrent_adds_each_keep_their_own_subtree(
    memory: Any, workspace: Path, view: Callable[[], GraphView]
) -> None:
    """Adds gathered on one event loop interleave in time, never in the graph."""
    trace(memory)
    conversations = {
        "caroline": ("Caroline: I moved to Boston last year.", "Caroline: I paint landscapes on weekends."),
        "melanie": ("Melanie: I adopted a cat named Luna.", "Melanie: I am learning the violin."),
        "dad": ("Caroline: My parents live in Denver.",),
        "band": ("Caroline: I have a guitar named Blue.",),
    }

    async def body() -> list[dict[str, Any]]:
        return await asyncio.gather(
            *(add(memory, *texts, user=user) for user, texts in conversations.items())
        )

    results = run_async(workspace, body)
    assert [len(r["results"]) for r in results] == [2, 2, 1, 1]
    graph = view()
    adds = sorted((op for op in graph.ops.values() if op.name == "mem0.add"), key=lambda o: o.seq)
    assert len(adds) == 4 and all(op.parent_op is None for op in adds)
    subtrees = {op.metadata["user_id"]: under(graph, op.id) for op in adds}
    assert sum(len(s) for s in subtrees.values()) == len(graph.ops)  # disjoint, nothing outside an add
    starts = sorted(op.started_at for op in adds)
    assert starts[-1] < min(op.ended_at for op in adds)  # the adds did run at the same time
    for user, texts in conversations.items():
        subtree = subtrees[user]
        assert {graph.op(i).name for i in subtree} >= {"extract_facts", "extract_facts.llm", "embed"}
        messages = {
            v.id for v in graph.vars.values() if v.category == "message" and graph.value(v.id) in texts
        }
        assert len(messages) == len(texts)
        result = next(r for r, u in zip(results, conversations, strict=True) if u == user)
        for memory_id in (r["id"] for r in result["results"]):
            created = graph.lifecycle(memory_id)[0]
            assert created.op is not None and created.op.id in subtree  # written inside this add
            lineage = {n.id for n in graph.ancestors(created.version.id)}
            assert messages <= lineage  # from this add's messages
            assert {i for i in lineage if i in graph.ops} <= subtree  # through this add's steps only


def test_async_search_reads_the_units_and_records_usage(
    memory: Any, workspace: Path, view: Callable[[], GraphView]
) -> None:
    tracer = trace(memory)

    async def body() -> tuple[dict[str, Any], Any]:
        await add(memory, "Caroline: I moved to Boston last year.", "Caroline: I have a guitar named Blue.")
        found = await search(memory, "Where does Caroline live?")
        record = tracer.last_search()
        await memory.get_all(**({"user_id": USER} if CLASSIC else {"filters": {"user_id": USER}}))
        return found, record

    found, record = run_async(workspace, body)
    assert record is not None and any("Boston" in m["memory"] for m in found["results"]), found
    graph = view()
    op = next(op for op in graph.ops.values() if op.name == "search")
    read = [v for v in graph.inputs(op.id) if v.category == "memory_entry"]
    assert {v.name for v in read} == {m["id"] for m in found["results"]}
    assert graph.value(record.retrieved_var) == [m["memory"] for m in found["results"]]
    assert any(child.name == "embed" for child in graph.children(op.id))
    assert op.metadata["remote"] is False  # qdrant in a local folder (a CLIENT span when a server)
    assert all(o.metadata["remote"] is True for o in graph.ops.values() if o.name == "embed")  # an endpoint
    listed = next(op for op in graph.ops.values() if op.name == "get_all")
    assert len([v for v in graph.inputs(listed.id) if v.category == "memory_entry"]) == 2
    chats = [op for op in graph.ops.values() if op.name.endswith(".llm")]
    assert chats and all(op.metadata["usage"]["output_tokens"] > 0 for op in chats)


def test_async_delete_all_nests_every_deletion_it_gathers(
    memory: Any, workspace: Path, view: Callable[[], GraphView]
) -> None:
    trace(memory)

    async def body() -> None:
        await add(memory, "Caroline: I moved to Boston last year.", "Caroline: I have a guitar named Blue.")
        await memory.delete_all(user_id=USER)

    run_async(workspace, body)
    graph = view()
    (delete_all,) = [op for op in graph.ops.values() if op.name == "mem0.delete_all"]
    deletions = [op for op in graph.ops.values() if op.name == "delete_memory"]
    assert len(deletions) == 2 and all(op.parent_op == delete_all.id for op in deletions)
    assert sorted(op.metadata["memory_id"] for op in deletions) == sorted(graph.memory_units())
    assert all(graph.lifecycle(unit)[-1].change == "delete" for unit in graph.memory_units())


@pytest.mark.skipif(not CLASSIC, reason="mem0 2.x makes no update-decision call")
def test_a_failed_async_update_decision_is_recorded(
    memory: Any, server: Mem0Server, workspace: Path, view: Callable[[], GraphView]
) -> None:
    trace(memory)
    server.enqueue('{"facts": ["Caroline lives in Boston"]}', Reply.error(400, "model overloaded"))
    result = run_async(workspace, lambda: add(memory, "Caroline: I moved to Boston last year."))
    assert result["results"] == []  # mem0 logged the error and went on
    graph = view()
    decision = next(op for op in graph.ops.values() if op.name == "update_memory_decision")
    assert decision.status == "error" and "model overloaded" in decision.metadata["error"]
    assert next(op for op in graph.ops.values() if op.name == "mem0.add").status == "ok"


def test_an_unreadable_async_extraction_reply_is_recorded(
    memory: Any, server: Mem0Server, workspace: Path, view: Callable[[], GraphView]
) -> None:
    trace(memory)
    server.enqueue("I cannot do that.")
    result = run_async(workspace, lambda: add(memory, "Caroline: I moved to Boston last year."))
    assert result["results"] == []
    extraction = next(op for op in view().ops.values() if op.name == "extract_facts")
    assert extraction.status == "error"
    assert "could not read the extraction reply" in extraction.metadata["error"]


def test_async_without_a_run_nothing_is_recorded_and_untrace_restores(
    memory: Any, workspace: Path, view: Callable[[], GraphView]
) -> None:
    original = type(memory).add
    tracer = trace(memory)
    assert trace(memory) is tracer
    added = asyncio.run(add(memory, "Caroline: I moved to Boston last year."))
    assert events(added) == ["ADD"]
    assert not (workspace / "memtrace.db").exists()
    untrace(memory)
    assert "add" not in vars(memory) and type(memory).add is original
    run_async(workspace, lambda: add(memory, "Caroline: I have a guitar named Blue."))
    assert not view().ops


def test_what_cannot_be_traced_is_refused_in_one_line(memory: Any) -> None:
    with pytest.raises(
        MemtraceError, match=r"^memtrace traces a mem0\.Memory or mem0\.AsyncMemory, not "
    ) as err:
        trace(object())
    assert "\n" not in str(err.value)
    with_graph = object.__new__(type(memory))  # a real AsyncMemory with a graph store switched on
    with_graph.enable_graph = True
    with pytest.raises(MemtraceError, match="does not trace mem0's graph store") as err:
        trace(with_graph)
    assert "\n" not in str(err.value)


def test_the_decision_sees_ids_in_fact_order_whatever_order_the_searches_finished() -> None:
    """mem0 numbers the old memories fact by fact; its async searches may finish in any order."""
    step = AddStep(add_op=None, message_vars=[])  # type: ignore[arg-type]
    step.facts = ["likes tea", "lives in Boston"]
    step.candidate_ids = ["m-boston", "m-tea", "m-both"]  # the Boston search finished first
    step.hits = {"lives in Boston": ["m-boston", "m-both"], "likes tea": ["m-tea", "m-both"]}
    assert step.shown_ids() == ["m-tea", "m-both", "m-boston"]


def test_span_kinds_say_which_steps_call_another_process(memory: Any, workspace: Path) -> None:
    """Model calls are CLIENT spans; the store's reads and writes are CLIENT when it is a server.

    Checked on the exported spans (pure, no OpenTelemetry needed) and, with the otel extra, on the
    live ones too."""
    assert not trace(memory).store_remote  # qdrant in a local folder: in this process
    untrace(memory)
    tracer = trace(memory, remote_store=True)  # as if qdrant ran as a server
    assert tracer.store_remote
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError:  # the mem0ai 2.x environment has no otel extra: the export is checked alone
        collected, live = None, {}
    else:
        collected = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(collected))
        live = {"otel": provider}

    async def body() -> None:
        with mt.run(workspace, name="mem0", system="mem0ai", **live):
            await add(memory, "Caroline: I moved to Boston last year.")
            await search(memory, "Where does Caroline live?")

    asyncio.run(body())
    write = "create_memory" if CLASSIC else "insert_memories"
    expected = {
        ("mem0.add", "internal"),
        ("extract_facts", "internal"),
        ("extract_facts.llm", "client"),
        ("embed", "client"),
        ("search_memories", "client"),
        (write, "client"),
        ("search", "client"),
    }
    with mt.open(workspace) as ws:
        specs = plan_run(ws.store, ws.run("mem0").id)
    exported = {(str(s.attributes.get("memtrace.op.name", "root")), s.kind) for s in specs}
    assert expected <= exported
    assert len({name for name, _ in exported}) == len(exported)  # one kind per operation name
    if collected is not None:
        spans = collected.get_finished_spans()
        assert {
            (str(s.attributes.get("memtrace.op.name", "root")), s.kind.name.lower()) for s in spans
        } == exported


@pytest.mark.parametrize(
    ("vector_store", "remote"),
    [
        ({"provider": "qdrant", "config": {"path": "mem0-qdrant"}}, False),
        ({"provider": "qdrant", "config": {"host": "qdrant.internal", "port": 6333}}, True),
        ({"provider": "qdrant", "config": {"url": "https://qdrant.example", "api_key": "k"}}, True),
        ({"provider": "faiss", "config": {"path": "mem0-faiss"}}, False),
        (
            {
                "provider": "pgvector",
                "config": {"dbname": "m", "user": "u", "password": "p", "host": "db", "port": 5432},
            },
            True,
        ),
    ],
    ids=["qdrant-folder", "qdrant-host", "qdrant-url", "faiss", "pgvector"],
)
def test_the_store_is_remote_when_its_configuration_names_a_server(
    vector_store: dict[str, Any], remote: bool
) -> None:
    from mem0.configs.base import MemoryConfig

    configured = SimpleNamespace(config=MemoryConfig(vector_store=vector_store))  # what the check reads
    assert store_is_remote(configured) is remote
    local = SimpleNamespace(
        config=MemoryConfig(embedder={"provider": "huggingface", "config": {"model": "m"}})
    )
    assert embedder_in_process(local) and not embedder_in_process(configured)  # openai by default
