"""The attribution agent over real HTTP (scripted server) on a recorded Mem0 run of the sample."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memtrace as mt
from memtrace.attribution.methods.agent import AgentMethod
from memtrace.attribution.methods.agent_tools import MAX_FRONTIER, AgentTools
from memtrace.attribution.model import Attribution, PathRole, PathStep
from memtrace.datasets import sample_conversation
from memtrace.graph import Case, GraphView
from memtrace.systems import run_conversation
from memtrace.systems.mem0 import Mem0System

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from llmhelpers import Reply, ScriptedOpenAIServer, scripted_client


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GraphView, list[Case]]]:
    """Mem0 (offline) over sample conversation 0: 31 questions, 13 of them failed."""
    workspace = tmp_path_factory.mktemp("agent") / "ws"
    result = run_conversation(Mem0System(), sample_conversation(0), workspace)
    ws = mt.open(workspace)
    yield ws.view(result.run_id), [c for c in ws.cases(result.run_id) if c.failed]
    ws.close()


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as s:
        yield s


def dog_case(sample: tuple[GraphView, list[Case]]) -> tuple[GraphView, Case, dict[str, str]]:
    """'What breed is Clara's dog?' (gold labrador): memory held it, the question's search missed it."""
    graph, cases = sample
    case = next(c for c in cases if c.gold == ["labrador"])
    answer = graph.producers(case.prediction_var)[0]
    retrieved = next(v for v in graph.inputs(answer.id) if v.category == "retrieved")
    search = graph.producers(retrieved.id)[0]
    extract = graph.consumers("D1:7@1")[0]
    ids = {"answer": answer.id, "retrieved": retrieved.id, "search": search.id, "extract": extract.id}
    return graph, case, ids


def step(tool: str, thought: str = "...", **args: Any) -> str:
    return json.dumps({"thought": thought, "tool": tool, "args": args})


def finish(error_type: str, op_id: str | None, reason: str = "because", confidence: float = 0.8) -> str:
    args = {"error_type": error_type, "op_id": op_id, "reason": reason, "confidence": confidence}
    return step("finish", "done", **args)


def seed_for(case: Case, ids: dict[str, str]) -> Attribution:
    path = [
        PathStep("var", "D1:7@1", 9, "evidence (gold)", True, role=PathRole.EVIDENCE),
        PathStep("var", "mem-7@1", 62, "in memory at question time", True, role=PathRole.LIVE_AT_QUESTION),
        PathStep("op", ids["search"], 316, "retrieved context misses it", False),
    ]
    return Attribution(
        case.run_id, case.id, ids["search"], "RetrievalError", 0.9, "mem-7 missed", "flow", path
    )


def test_start_expand_view_finish(sample: Any, server: ScriptedOpenAIServer) -> None:
    graph, case, ids = dog_case(sample)
    server.enqueue(
        step("start", "evidence first", node_ids=["D1:7"]),
        step("expand", "who read it?", node_id="D1:7@1"),
        step("view", "is it in the context?", node_id=ids["retrieved"], regex="labrador"),
        finish("RetrievalError", ids["search"], "mem-7 says labrador; the search did not return it", 0.85),
    )
    result = AgentMethod(scripted_client(server)).attribute(graph, case)

    assert (result.op_id, result.error_type, result.confidence) == (ids["search"], "RetrievalError", 0.85)
    assert result.method == "agent" and result.run_id == graph.run.id and result.case_id == case.id
    assert result.cost.llm_calls == 4 and result.cost.input_tokens > 0 and result.cost.output_tokens > 0
    assert result.cost.seconds > 0
    explored = [p for p in result.path if p.role is None]
    assert [p.id for p in explored] == ["D1:7@1", ids["retrieved"], ids["search"]]
    assert explored[-1].kind == "op" and explored[-1].note.startswith("blamed (RetrievalError)")
    # then the steps a repair reads, as flow finds them, so the claim is verified like flow's
    assert [p.role for p in result.path[3:]] == [PathRole.EVIDENCE, PathRole.LIVE_AT_QUESTION]
    assert result.explanation.startswith("mem-7 says labrador")
    assert "Agent transcript (4 steps)" in result.explanation
    assert '2. expand(node_id="D1:7@1") - who read it?' in result.explanation

    sent = server.chat_requests
    assert len(sent) == 4
    assert sent[0].response_format["json_schema"]["name"] == "AgentStep"
    system, intro = sent[0].messages[0]["content"], sent[0].messages[1]["content"]
    assert "expand(node_id, page=1)" in system and "ExtractionError" in system
    assert "What breed is Clara's dog?" in intro and "labrador" in intro and "D1:7@1 s9 message" in intro
    assert "the memory at question time is memory_state(" in intro
    expanded = sent[2].messages[-1]["content"]  # the observation of step 2, read at step 3
    assert f"op {ids['extract']} [extraction]" in expanded and "<- D1:7@1 is its input" in expanded
    assert "[step 3/30;" in expanded
    viewed = sent[3].messages[-1]["content"]
    assert "1 match(es) for /labrador/" not in viewed and "no match for /labrador/" in viewed
    # Older observations are elided: at step 4 the start observation of step 1 is a one-line summary.
    assert sent[3].messages[3]["content"].startswith("[elided: frontier set")


def test_step_budget_without_seed_is_undetermined(sample: Any, server: ScriptedOpenAIServer) -> None:
    graph, case, _ = dog_case(sample)
    server.default = lambda body: step("expand", "keep looking", node_id="D1:7@1")
    result = AgentMethod(scripted_client(server), max_steps=3).attribute(graph, case)
    assert not result.determined and result.op_id is None and result.confidence == 0.0
    assert "step budget (3 steps) exhausted" in result.explanation
    assert "no seed answer" in result.explanation and "Agent transcript (3 steps)" in result.explanation
    assert result.cost.llm_calls == 3 and len(server.chat_requests) == 3
    assert [p.id for p in result.path] == ["D1:7@1"]


def test_step_budget_with_seed_returns_the_seed_marked_as_such(
    sample: Any, server: ScriptedOpenAIServer
) -> None:
    graph, case, ids = dog_case(sample)
    seed = seed_for(case, ids)
    server.default = lambda body: step("lifecycle", "history", unit="mem-7")
    result = AgentMethod(scripted_client(server), max_steps=2).attribute(graph, case, seed=seed)
    assert (result.op_id, result.error_type, result.confidence) == (ids["search"], "RetrievalError", 0.9)
    assert result.method == "agent" and result.path == seed.path
    assert result.explanation.startswith("Agent stopped without an answer (step budget (2 steps) exhausted)")
    assert "returning the seed (flow) answer unchanged" in result.explanation
    assert result.cost.llm_calls == 2
    intro = server.chat_requests[0].messages[1]["content"]
    assert "A rule-based tracer (flow) says: RetrievalError at" in intro
    frontier = intro.split("frontier (3 nodes")[1]
    assert "D1:7@1" in frontier and "mem-7@1" in frontier and ids["search"] in frontier


def test_token_budget_stops_before_the_call_that_would_exceed_it(
    sample: Any, server: ScriptedOpenAIServer
) -> None:
    graph, case, ids = dog_case(sample)
    server.enqueue(Reply(step("expand", node_id="D1:7@1"), input_tokens=2500, output_tokens=20))
    result = AgentMethod(scripted_client(server), max_tokens=3000).attribute(
        graph, case, seed=seed_for(case, ids)
    )
    assert (
        result.op_id == ids["search"] and "token budget (3,000) exhausted after 1 steps" in result.explanation
    )
    assert (result.cost.llm_calls, result.cost.input_tokens, result.cost.output_tokens) == (1, 2500, 20)

    tiny = AgentMethod(scripted_client(server), max_tokens=100).attribute(graph, case)
    assert not tiny.determined and "token budget (100) exhausted after 0 steps" in tiny.explanation
    assert tiny.cost.llm_calls == 0 and len(server.chat_requests) == 1


def test_invalid_finish_goes_back_to_the_model(sample: Any, server: ScriptedOpenAIServer) -> None:
    graph, case, ids = dog_case(sample)
    server.enqueue(
        finish("RetrievalError", "search#999999"),
        finish("RetrievalError", ids["retrieved"]),
        finish("MemoryError", ids["search"]),
        finish("RetrievalError", ids["search"]),
    )
    result = AgentMethod(scripted_client(server)).attribute(graph, case)
    assert result.op_id == ids["search"] and result.error_type == "RetrievalError"
    assert result.cost.llm_calls == 4
    replies = [r.messages[-1]["content"] for r in server.chat_requests[1:]]
    assert "error: op_id 'search#999999' is not an operation of this run" in replies[0]
    assert f"{ids['retrieved']} is a variable, written by: {ids['search']}" in replies[1]
    assert "error_type must be one of ExtractionError" in replies[2]


def test_a_finish_that_contradicts_the_op_category_is_questioned_once(
    sample: Any, server: ScriptedOpenAIServer
) -> None:
    graph, case, ids = dog_case(sample)
    server.enqueue(finish("ExtractionError", ids["search"]), finish("ExtractionError", ids["search"]))
    result = AgentMethod(scripted_client(server)).attribute(graph, case)
    assert result.error_type == "ExtractionError" and result.op_id == ids["search"]
    assert (
        "is a retrieval operation, while ExtractionError usually blames"
        in (server.chat_requests[1].messages[-1]["content"])
    )


def test_undetermined_finish_needs_no_op(sample: Any, server: ScriptedOpenAIServer) -> None:
    graph, case, _ = dog_case(sample)
    server.enqueue(finish("undetermined", None, "the graph does not say"))
    result = AgentMethod(scripted_client(server)).attribute(graph, case)
    assert not result.determined and result.explanation.startswith("the graph does not say")


def test_malformed_json_and_unknown_tools_are_retried_by_the_client(
    sample: Any, server: ScriptedOpenAIServer
) -> None:
    graph, case, ids = dog_case(sample)
    server.enqueue('{"thought": "oops", "tool": "expand"', finish("RetrievalError", ids["search"]))
    result = AgentMethod(scripted_client(server)).attribute(graph, case)
    assert result.op_id == ids["search"] and result.cost.llm_calls == 2
    assert "not valid JSON" in server.chat_requests[1].messages[-1]["content"]

    server.enqueue(step("teleport", node_id="x"), finish("RetrievalError", ids["search"]))
    again = AgentMethod(scripted_client(server)).attribute(graph, case)
    assert again.determined and "'teleport' is not one of" in server.chat_requests[3].messages[-1]["content"]


def test_a_model_that_never_answers_in_json_ends_honestly(sample: Any, server: ScriptedOpenAIServer) -> None:
    graph, case, ids = dog_case(sample)
    server.default = lambda body: "I think it is the retrieval."
    result = AgentMethod(scripted_client(server)).attribute(graph, case)
    assert not result.determined and "the model gave no usable step after 3 attempts" in result.explanation
    assert result.cost.llm_calls == 3
    seeded = AgentMethod(scripted_client(server)).attribute(graph, case, seed=seed_for(case, ids))
    assert seeded.op_id == ids["search"] and "returning the seed (flow) answer" in seeded.explanation


class StubSeed:
    """A seed method standing in for the flow method."""

    name = "stub"

    def __init__(self, answer: Attribution) -> None:
        self.answer = answer
        self.calls = 0

    def settings(self) -> dict[str, Any]:
        return {"k": 8}

    def attribute(self, graph: Any, case: Case) -> Attribution:
        self.calls += 1
        return self.answer


def test_seed_method_and_settings(sample: Any, server: ScriptedOpenAIServer) -> None:
    graph, case, ids = dog_case(sample)
    stub = StubSeed(seed_for(case, ids))
    method = AgentMethod(scripted_client(server), max_steps=1, seed_method=stub)
    assert method.name == "agent"
    settings = method.settings()
    assert settings["seed_method"] == {"name": "stub", "k": 8} and settings["model"] == "scripted-model"
    assert settings["max_steps"] == 1 and settings["max_tokens"] == 30_000 and len(settings["prompt"]) == 12
    server.default = lambda body: step("grep", pattern="labrador")
    result = method.attribute(graph, case)
    assert stub.calls == 1 and result.op_id == ids["search"]
    untouched = method.attribute(graph, dataclasses.replace(case, verdict="correct"))
    assert not untouched.determined and "answered correctly" in untouched.explanation and stub.calls == 1


# -- the tools on their own ---------------------------------------------------------------------


def test_expand_pages_under_the_character_budget(sample: Any) -> None:
    graph, case, ids = dog_case(sample)
    tools = AgentTools(graph, case, page_chars=1500)
    first = tools.call("expand", {"node_id": "mem-6"})
    assert first.nodes == ["mem-6@1"] and "page 1/" in first.text
    assert "(more: expand('mem-6@1', page=2))" in first.text
    pages = int(first.text.split("page 1/")[1].split("\n")[0])
    assert pages > 3
    blocks = first.text.split("\nop ")
    assert "[update] " in blocks[1] and "<- mem-6@1 is its output" in blocks[1]  # the producer first
    second = tools.call("expand", {"node_id": "mem-6@1", "page": 2}).text
    assert second.split("\nop ")[1].startswith(ids["search"])  # then the reader on the case's lineage
    last = tools.call("expand", {"node_id": "mem-6@1", "page": 99})
    assert f"page {pages}/{pages}" in last.text and "(more:" not in last.text
    for page in range(1, pages + 1):
        body = tools.call("expand", {"node_id": "mem-6@1", "page": page}).text
        assert len(body.split("\n", 3)[3]) <= 1500 + 60


def test_view_regex_offset_grep_lifecycle_memory_state(sample: Any) -> None:
    graph, case, ids = dog_case(sample)
    tools = AgentTools(graph, case, page_chars=60)
    assert "1 match(es) for /labrador/" in tools.call("view", {"node_id": "D1:7", "regex": "labrador"}).text
    part = tools.call("view", {"node_id": "D1:7@1", "offset": 10}).text
    assert "(chars 10-70 of 90; view('D1:7@1', offset=70) for more)" in part
    assert "error: bad regex" in tools.call("view", {"node_id": "D1:7@1", "regex": "("}).text
    tools.page_chars = 4000
    found = tools.call("grep", {"pattern": "labrador", "category": "memory_entry"}).text
    assert found.startswith("1 match(es)") and "mem-7@1" in found
    life = tools.call("lifecycle", {"unit": "mem-7@1"}).text
    assert life.startswith("mem-7: 1 version(s)") and "create by update_memory_decision#" in life
    state = tools.call("memory_state", {"seq": graph.op(ids["answer"]).seq}).text
    assert "live memory unit(s)" in state and "mem-7: " in state
    up = tools.call("ancestors", {"node_id": case.prediction_var, "depth": 99}).text
    assert "to depth 6" in up and f"op {ids['answer']}" in up
    bad = tools.call("view", {"ident": "D1:7@1"}).text
    assert bad.startswith("error: bad arguments for view") and "expected view(node_id, regex=null" in bad
    assert "unknown tool" in tools.call("rm", {}).text


def test_frontier_holds_at_most_sixteen_nodes(sample: Any) -> None:
    graph, case, _ = dog_case(sample)
    tools = AgentTools(graph, case)
    names = [f"D{s}:{t}" for s in range(1, 4) for t in range(1, 8)]
    text = tools.call("start", {"node_ids": [*names, "nowhere"]}).text
    assert (
        len(tools.frontier) == MAX_FRONTIER
        and "frontier full (16)" in text
        and "unknown node 'nowhere'" in text
    )
    tools.call("remove_frontier", {"node_ids": tools.frontier[:10]})
    assert len(tools.frontier) == 6
    tools.call("add_frontier", {"node_ids": "D5:1"})
    assert tools.frontier[-1] == "D5:1@1"


# -- cost of a typical exploration ----------------------------------------------------------------


def six_steps(graph: GraphView, case: Case) -> list[str]:
    """start -> expand evidence -> expand its extraction -> memory state -> view context -> finish."""
    answer = graph.producers(case.prediction_var)[0]
    retrieved = next(v for v in graph.inputs(answer.id) if v.category == "retrieved")
    search = graph.producers(retrieved.id)[0]
    evidence = [f"{e}@1" for e in case.evidence]
    readers = [op.id for op in graph.consumers(evidence[0]) if op.category == "extraction"]
    word = case.gold[0].split()[0]
    return [
        step("start", node_ids=[*evidence, case.prediction_var]),
        step("expand", node_id=evidence[0]),
        step("expand", node_id=readers[0] if readers else answer.id),
        step("memory_state", seq=answer.seq),
        step("view", node_id=retrieved.id, regex=word),
        finish("RetrievalError", search.id),
    ]


def test_a_six_step_exploration_costs_well_under_the_token_budget(
    sample: Any, server: ScriptedOpenAIServer
) -> None:
    graph, cases = sample
    method = AgentMethod(scripted_client(server))
    estimated, largest = [], 0
    for case in cases:
        before = len(server.chat_requests)
        server.enqueue(*six_steps(graph, case))
        result = method.attribute(graph, case)
        assert result.determined and result.cost.llm_calls == 6
        sent = server.chat_requests[before:]
        chars = sum(len(m["content"]) for r in sent for m in r.messages)
        estimated.append(chars // 4 + result.cost.output_tokens)
        largest = max(largest, *(len(r.messages[-1]["content"]) for r in sent))
    average = sum(estimated) / len(estimated)
    print(
        f"\nagent, 6 scripted steps x {len(cases)} failed cases: ~{average:,.0f} tokens/case (chars/4),"
        f" max {max(estimated):,}; largest observation {largest:,} chars"
    )
    assert average < 30_000 and max(estimated) < 30_000


def test_obvious_argument_aliases_are_accepted(sample: Any) -> None:
    graph, case, _ = dog_case(sample)
    tools = AgentTools(graph, case)
    by_alias = tools.call("descendants", {"id": "D1:7@1"})
    assert not by_alias.failed
    assert by_alias.text == tools.call("descendants", {"node_id": "D1:7@1"}).text
    assert not tools.call("grep", {"regex": "labrador"}).failed
    assert tools.call("start", {"nodes": ["D1:7"]}).nodes == ["D1:7@1"]


def test_a_repeated_identical_failing_call_ends_the_exploration(
    sample: Any, server: ScriptedOpenAIServer
) -> None:
    graph, case, _ = dog_case(sample)
    server.default = lambda body: step("descendants", "look down", ident="D1:7@1")
    result = AgentMethod(scripted_client(server), max_steps=15).attribute(graph, case)
    assert len(server.chat_requests) == 2  # the first failure is shown, the identical retry ends it
    assert "repeated a failing call" in result.explanation and not result.determined
    shown = server.chat_requests[1].messages[-1]["content"]
    assert "expected descendants(node_id, depth=2)" in shown and "descendants(node_id=...)" in shown


def test_a_failing_call_the_model_corrects_goes_on(sample: Any, server: ScriptedOpenAIServer) -> None:
    graph, case, ids = dog_case(sample)
    server.enqueue(
        step("descendants", "look down", ident="D1:7@1"),
        step("descendants", "with the right name", node_id="D1:7@1"),
        finish("RetrievalError", ids["search"]),
    )
    result = AgentMethod(scripted_client(server)).attribute(graph, case)
    assert result.op_id == ids["search"] and len(server.chat_requests) == 3
