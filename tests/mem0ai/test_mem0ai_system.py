"""`--system mem0ai`: the real mem0 library run over a conversation, answered, judged and attributed.

Two faults are planted in the scripted server's replies: the extraction of the first exchange omits
the fact a question needs (an ExtractionError of that `extract_facts`), and the classic pipeline's
third update decision deletes the memory another question needs (a DeletionError of the
`delete_memory` inside that decision). The flow method must name exactly those operations.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mem0helpers import DIMS, Decision, Mem0Script, Mem0Server

pytest.importorskip("mem0", reason="mem0ai is not installed (pip install 'memtrace[mem0ai]')")

from llmhelpers import scripted_client

import memtrace as mt
from memtrace.adapters.mem0ai import mem0_version, pipeline_for
from memtrace.attribution.methods.flow import FlowMethod
from memtrace.attribution.verify.counterfactual import verify
from memtrace.datasets import Conversation, Question, Session, Turn
from memtrace.eval import make_judge
from memtrace.llm.limiter import LocalLimiters
from memtrace.systems import RunResult, run_conversation
from memtrace.systems.mem0ai_system import Mem0AIConfig, Mem0AISystem
from memtrace.vocabulary import Verdict

CLASSIC = pipeline_for(mem0_version()) == "classic"
PROJECT = Path(__file__).resolve().parents[2]


def conversation() -> Conversation:
    lines = [
        (1, "8 May 2023", "Caroline", "I moved to Boston last year for my new job."),
        (1, "8 May 2023", "Melanie", "That's great! I adopted a cat named Luna last week."),
        (1, "8 May 2023", "Caroline", "I started painting landscapes on weekends."),
        (1, "8 May 2023", "Melanie", "I am learning to play the violin."),
        (2, "9 June 2023", "Caroline", "I visited my parents in Denver."),
        (2, "9 June 2023", "Melanie", "The cat knocked over my paint set, ha."),
    ]
    sessions: dict[int, Session] = {}
    for number, (index, date, speaker, text) in enumerate(lines, 1):
        session = sessions.setdefault(index, Session(index, date, []))
        session.turns.append(Turn(f"D{index}:{len(session.turns) + 1}", speaker, text, index, date))
        del number
    questions = [
        Question("q1", "Where did Caroline move to?", ["Boston"], ["D1:1"], "single-hop"),
        Question("q2", "What is the name of Melanie's cat?", ["Luna"], ["D1:2"], "single-hop"),
        Question("q3", "What does Caroline paint?", ["landscapes"], ["D1:3"], "single-hop"),
    ]
    return Conversation("conv-mem0ai", ["Caroline", "Melanie"], list(sessions.values()), questions, "test")


def planted_faults() -> Mem0Script:
    return Mem0Script(
        facts={
            "moved to Boston": [],  # planted: the extraction omits the evidence of q1
            "cat named Luna": ["Melanie adopted a cat named Luna"],
            "painting landscapes": ["Caroline paints landscapes on weekends"],
            "violin": ["Melanie is learning the violin"],
            "visited my parents": ["Caroline visited her parents in Denver"],
            "knocked over": ["Melanie's paint set was knocked over"],
        },
        decisions={  # planted: the update decision deletes the evidence memory of q2
            "Melanie's paint set was knocked over": Decision("DELETE", old="cat named Luna", also_add=True)
        },
        answers={
            "Where did Caroline move to?": "Boston",
            "What is the name of Melanie's cat?": "Luna",
            "What does Caroline paint?": "landscapes",
        },
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, RunResult]]:
    workspace = tmp_path_factory.mktemp("mem0ai") / "ws"
    limiters = LocalLimiters(1)
    with Mem0Server(planted_faults()) as server:
        client = scripted_client(server, workspace, limiters=limiters)
        system = Mem0AISystem(Mem0AIConfig(embedding_dims=DIMS, search_threshold=0.0), llm=client)
        result = run_conversation(system, conversation(), workspace, judge=make_judge("strict"))
        system.close()
    # mem0 calls the server through OpenAI clients of its own: every call still took a slot
    assert limiters.limiter(server.url).granted == server.request_count and server.max_in_flight == 1
    yield workspace, result


def test_the_run_answers_from_mem0s_memories(recorded: tuple[Path, RunResult]) -> None:
    workspace, result = recorded
    verdicts = {case.id: case.correct for case in result.cases}
    assert verdicts == {"q1": False, "q2": not CLASSIC, "q3": True}
    assert not result.failures
    with mt.open(workspace) as ws:
        run = ws.run(result.run_id)
        assert run.system == "mem0ai" and run.metadata["mem0ai"]["pipeline"] == (
            "classic" if CLASSIC else "additive"
        )
        graph = ws.view(result.run_id)
        adds = [op for op in graph.ops.values() if op.name == "mem0.add"]
        assert len(adds) == 3
        answer = next(op for op in graph.ops.values() if op.name == "answer")
        read = {v.category for v in graph.inputs(answer.id)}
        assert {"query", "retrieved"} <= read  # the question node and the search's memories
    # mem0's stores are in the workspace
    assert (workspace / "mem0ai" / result.run_id / "history.db").exists()
    assert (workspace / "mem0ai" / result.run_id / "qdrant").is_dir()


def test_flow_names_the_extraction_that_omitted_the_fact(recorded: tuple[Path, RunResult]) -> None:
    workspace, result = recorded
    with mt.open(workspace) as ws:
        graph = ws.view(result.run_id)
        case = next(c for c in ws.cases(result.run_id) if c.id == "q1")
        found = FlowMethod().attribute(graph, case)
        first_add = min((op for op in graph.ops.values() if op.name == "mem0.add"), key=lambda o: o.seq)
        blamed = graph.op(found.op_id)
    assert found.error_type == "ExtractionError", found.explanation
    assert blamed.name == "extract_facts" and blamed.parent_op == first_add.id


@pytest.mark.skipif(not CLASSIC, reason="mem0 2.x is ADD-only: its update step never deletes")
def test_flow_names_the_deletion_the_update_decision_made(recorded: tuple[Path, RunResult]) -> None:
    workspace, result = recorded
    with mt.open(workspace) as ws:
        graph = ws.view(result.run_id)
        case = next(c for c in ws.cases(result.run_id) if c.id == "q2")
        found = FlowMethod().attribute(graph, case)
        blamed = graph.op(found.op_id)
        parent = graph.op(blamed.parent_op)
        last_add = max((op for op in graph.ops.values() if op.name == "mem0.add"), key=lambda o: o.seq)
        deleted = graph.lifecycle(blamed.metadata["memory_id"])
    assert found.error_type == "DeletionError", found.explanation
    assert blamed.name == "delete_memory"
    assert parent.name == "update_memory_decision" and parent.parent_op == last_add.id
    assert deleted[0].value["memory"] == "Melanie adopted a cat named Luna" and deleted[-1].change == "delete"


def test_verification_says_a_mem0ai_run_cannot_be_replayed(recorded: tuple[Path, RunResult]) -> None:
    workspace, result = recorded
    with mt.open(workspace) as ws:
        case = next(c for c in ws.cases(result.run_id) if c.id == "q1")
        outcome = verify(ws, FlowMethod().attribute(ws.view(result.run_id), case))
    assert outcome.verdict == Verdict.NOT_VERIFIABLE
    assert "cannot be replayed" in outcome.reason and "mem0ai" in outcome.reason


def test_cli_runs_mem0ai_inside_the_workspace(tmp_path: Path) -> None:
    """A fresh process: MEM0_DIR and telemetry are set before mem0 is imported, HOME stays untouched."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEM0_", "OPENAI_"))}
    env["HOME"] = str(home)
    with Mem0Server(planted_faults()) as server:
        command = [
            sys.executable,
            "-c",
            "from memtrace.cli.app import main; main()",
            "run",
            str(workspace),
            "--system",
            "mem0ai",
            "--dataset",
            "sample",
            "--conversations",
            "1",
            "--questions",
            "2",
            "--llm",
            "openai",
            "--model",
            "scripted",
            "--base-url",
            server.url,
            "--judge",
            "strict",
            "--set",
            f"embedding_dims={DIMS}",
            "--json",
            str(tmp_path / "out.json"),
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    payload = json.loads((tmp_path / "out.json").read_text())
    assert payload["mem0ai"]["questions"] == 2
    assert (workspace / "mem0ai" / "home" / "config.json").exists()  # mem0's own folder, inside
    assert list(home.iterdir()) == []  # nothing written to ~/.mem0
    with mt.open(workspace) as ws:
        (run,) = ws.runs()
        assert run.system == "mem0ai" and "mem0ai" in run.metadata


def _recorded_rows(workspace: Path, run_id: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The run's operations and cases, mem0's random memory ids named by order of appearance."""
    names: dict[str, str] = {}
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

    def plain(value: Any) -> str:
        return uuid.sub(lambda m: names.setdefault(m.group(0), f"memory-{len(names)}"), json.dumps(value))

    with mt.open(workspace) as ws:
        graph = ws.view(run_id)
        ops = []
        for op in sorted(graph.ops.values(), key=lambda o: o.seq):
            outputs = [graph.value(v.id) for v in graph.outputs(op.id)]
            ops.append((op.seq, op.name, op.category, plain(op.metadata), plain(outputs)))
        cases = [
            (c.id, c.prediction, c.prediction_var, c.verdict, plain(c.metadata)) for c in ws.cases(run_id)
        ]
    return ops, cases


def test_questions_fetched_ahead_on_the_live_memory_record_the_same_run(tmp_path: Path) -> None:
    """mem0's store cannot be copied, so the question stage is fetched ahead on the Memory itself:
    the recorded graph is the one a run without fetching ahead records, and no call is made twice
    (mem0's own embedding call of each question is served too, across its thread pool)."""
    recorded: dict[int, tuple[Any, ...]] = {}
    for ahead in (1, 3):
        workspace = tmp_path / f"ahead-{ahead}"
        with Mem0Server(planted_faults()) as server:
            client = scripted_client(server, workspace, limiters=LocalLimiters(3))
            system = Mem0AISystem(Mem0AIConfig(embedding_dims=DIMS, search_threshold=0.0), llm=client)
            result = run_conversation(
                system, conversation(), workspace, judge=make_judge("llm", client=client), ahead=ahead
            )
            system.close()
            recorded[ahead] = (*_recorded_rows(workspace, result.run_id), server.request_count)
        if ahead > 1:
            assert result.fetched_ahead >= 2 * len(conversation().questions)  # answer and judge, at least
            assert result.unused_ahead == 0
    assert recorded[3] == recorded[1]
