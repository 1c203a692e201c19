"""Replay of every system: unpatched it reproduces the run, patched it changes exactly what the patch says.

Each system records the sample conversation once (module fixtures); the tests replay those runs with no
patch, with an empty patch on a construction operation (which resumes from a session snapshot), and with
real patches: an extraction output without the evidence fact, a cancelled deletion, a retrieved context
with the evidence-bearing memory first, a cancelled trim. Systems driven directly under a patching
recorder show that their in-process store stays equal to the recorded memory whatever a patch writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import memtrace as mt
from memtrace.datasets import NOT_MENTIONED, Conversation, sample_conversation
from memtrace.eval import make_judge
from memtrace.graph import Case, GraphView
from memtrace.systems import RunResult, run_conversation
from memtrace.systems.answering import answer_question
from memtrace.systems.base import MemorySystem
from memtrace.systems.evermemos import EverMemOSConfig, EverMemOSSystem
from memtrace.systems.long_context import UNIT, LongContext, LongContextConfig
from memtrace.systems.mem0 import Mem0System, memory_text
from memtrace.systems.rag import RAGConfig, RAGSystem
from memtrace.systems.replay import CANCEL, DELETE, ReplayResult, replay
from memtrace.systems.runner import answer_questions, construct
from memtrace.systems.snapshots import SnapshotWriter
from memtrace.trace import Patch, PatchPolicy, Recorder

SYSTEMS: dict[str, type[MemorySystem]] = {
    "long_context": LongContext,
    "rag": RAGSystem,
    "mem0": Mem0System,
    "evermemos": EverMemOSSystem,
}
#: The construction operation each system is patched at mid-run (an empty patch: nothing changes).
CONSTRUCTION_OP = {
    "long_context": "memory_update",
    "rag": "add_document",
    "mem0": "extract_facts",
    "evermemos": "extract_memcell",
}

Recorded = tuple[Path, RunResult]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Recorded]:
    """Each system's run over sample 0, in a workspace of its own."""
    runs = {}
    for name, cls in SYSTEMS.items():
        workspace = tmp_path_factory.mktemp(f"replay-{name}")
        runs[name] = workspace, run_conversation(cls(), sample_conversation(0), workspace)
    return runs


@pytest.fixture
def graph_of() -> Iterator[Any]:
    """Open graphs of runs (closed after the test)."""
    opened: list[Any] = []

    def open_graph(workspace: Path, run_id: str) -> GraphView:
        ws = mt.open(workspace)
        opened.append(ws)
        return ws.view(run_id)

    yield open_graph
    for ws in opened:
        ws.close()


def final_state(workspace: Path, run_id: str) -> dict[str, Any]:
    with mt.open(workspace) as ws:
        return ws.graph(run_id).memory_values_at()


def predictions(cases: list[Any]) -> dict[str, str]:
    return {c.id: c.prediction for c in cases}


def cases_of(workspace: Path, run_id: str) -> dict[str, Case]:
    with mt.open(workspace) as ws:
        return {c.id: c for c in ws.cases(run_id)}


def check_lineage(workspace: Path, result: ReplayResult, original: str, patches: dict[str, Any]) -> None:
    """The replay is a child of the original run and says which patches made it."""
    assert result.parent_run == original
    assert result.patched == list(patches)
    with mt.open(workspace) as ws:
        run = ws.run(result.run_id)
    assert run.parent_run == original
    assert PatchPolicy.patches_of(run.metadata) == {op: Patch.from_json(p) for op, p in patches.items()}


def retrieval_of(graph: GraphView, case: Case) -> tuple[str, str]:
    """(the operation that produced the context the case's answer read, that context's variable)."""
    answer = graph.producers(case.prediction_var)[-1]
    [context] = [v for v in graph.inputs(answer.id) if v.category == "retrieved"]
    return graph.producers(context.id)[-1].id, context.id


# -- unpatched replay reproduces the run --------------------------------------------------------------


@pytest.mark.parametrize("name", SYSTEMS)
def test_unpatched_replay_reproduces_the_run(recorded: dict[str, Recorded], name: str) -> None:
    workspace, run = recorded[name]
    result = replay(workspace, run.run_id)
    assert predictions(result.cases) == predictions(run.cases)
    assert final_state(workspace, result.run_id) == final_state(workspace, run.run_id)
    assert result.patched == [] and result.parent_run == run.run_id


@pytest.mark.parametrize("name", SYSTEMS)
def test_empty_construction_patch_resumes_from_a_session_snapshot(
    recorded: dict[str, Recorded], name: str, graph_of: Any
) -> None:
    workspace, run = recorded[name]
    graph = graph_of(workspace, run.run_id)
    ops = [op for op in graph.ops_in_order() if op.name == CONSTRUCTION_OP[name]]
    op = ops[len(ops) // 2]
    patches: dict[str, Any] = {op.id: {}}
    result = replay(workspace, run.run_id, patches)
    assert 0 < result.resumed_after_seq < op.seq
    assert predictions(result.cases) == predictions(run.cases)
    assert final_state(workspace, result.run_id) == final_state(workspace, run.run_id)
    check_lineage(workspace, result, run.run_id, patches)


# -- real patches change the outcome ------------------------------------------------------------------


@pytest.mark.parametrize("name", SYSTEMS)
def test_an_emptied_context_is_what_the_answer_reads(
    recorded: dict[str, Recorded], name: str, graph_of: Any
) -> None:
    """The question-time `retrieved` is produced: patched empty, the answer finds nothing to say."""
    workspace, run = recorded[name]
    graph = graph_of(workspace, run.run_id)
    case = next(
        c
        for c in cases_of(workspace, run.run_id).values()
        if c.verdict == "correct" and NOT_MENTIONED not in c.gold
    )
    op_id, _ = retrieval_of(graph, case)
    patches = {op_id: {"outputs": {"retrieved": []}}}
    result = replay(workspace, run.run_id, patches, cases=[case.id])
    assert result.case(case.id).prediction == NOT_MENTIONED and not result.case(case.id).correct
    check_lineage(workspace, result, run.run_id, patches)


def test_mem0_extraction_without_the_evidence_fact(recorded: dict[str, Recorded], graph_of: Any) -> None:
    """Drop the evidence fact from `extracted_facts`: it never becomes memory and the answer changes."""
    workspace, run = recorded["mem0"]
    graph = graph_of(workspace, run.run_id)
    before = final_state(workspace, run.run_id)
    held = [memory_text(value) for value in before.values()]
    tried = 0
    for case in cases_of(workspace, run.run_id).values():
        if case.verdict != "correct":
            continue
        readers = {op.id: op for d in case.evidence for op in graph.consumers(f"{d}@1")}
        for op in sorted(readers.values(), key=lambda o: o.seq):
            if op.name != "extract_facts":
                continue
            [facts_var] = [v for v in graph.outputs(op.id) if v.name == "extracted_facts"]
            facts = graph.value(facts_var.id)
            for fact in facts:
                if not any(fact in text for text in held):
                    continue
                patches = {op.id: {"outputs": {"extracted_facts": [f for f in facts if f != fact]}}}
                result = replay(workspace, run.run_id, patches, cases=[case.id])
                tried += 1
                after = [memory_text(value) for value in final_state(workspace, result.run_id).values()]
                if result.case(case.id).prediction != case.prediction and not any(fact in t for t in after):
                    assert result.resumed_after_seq < op.seq
                    check_lineage(workspace, result, run.run_id, patches)
                    replayed = graph_of(workspace, result.run_id)
                    [out] = [v for v in replayed.outputs(op.id) if v.name == "extracted_facts"]
                    assert fact not in replayed.value(out.id)
                    return
    pytest.fail(f"no correct case loses its answer with its evidence fact dropped ({tried} replays)")


def test_mem0_cancelled_deletion_keeps_the_unit(recorded: dict[str, Recorded], graph_of: Any) -> None:
    workspace, run = recorded["mem0"]
    graph = graph_of(workspace, run.run_id)
    deletions = [op for op in graph.ops_in_order() if op.name == "delete_memory"]
    assert deletions
    op = deletions[0]
    unit = op.metadata["unit"]
    assert unit not in final_state(workspace, run.run_id)
    patches = {op.id: Patch().cancel(unit)}
    result = replay(workspace, run.run_id, patches)
    state = final_state(workspace, result.run_id)
    assert unit in state and "memory" in state[unit]
    check_lineage(workspace, result, run.run_id, patches)
    replayed = graph_of(workspace, result.run_id)
    assert not replayed.outputs(op.id)  # the deletion wrote nothing


@pytest.mark.parametrize(
    "make",
    [
        lambda: EverMemOSSystem(EverMemOSConfig(top_k=2)),
        lambda: RAGSystem(RAGConfig(top_k=2, chunk_tokens=128)),
    ],
    ids=["evermemos", "rag"],
)
def test_evidence_first_in_the_retrieved_context_fixes_a_retrieval_failure(
    tmp_path: Path, make: Callable[[], MemorySystem], graph_of: Any
) -> None:
    """Find a case that failed by retrieval: its evidence is in memory but not in the context. Putting
    the evidence-bearing memory first in the question-time `retrieved` makes the answer the gold.

    With their default top-k both systems hand the sample's evidence to the answer step whenever it is
    in memory (the offline answerer ignores order), so a narrower retrieval makes retrieval failures.
    Judged by F1 (the replay judges like its run): under the strict verdict the sample gives RAG no
    retrieval failure that the evidence alone fixes.
    """
    system = make()
    workspace, name = tmp_path, system.name
    judge = make_judge("f1")
    run = run_conversation(system, sample_conversation(0), workspace, judge=judge)
    graph = graph_of(workspace, run.run_id)
    state = graph.memory_values_at()
    questions = {q.id: q for q in sample_conversation(0).questions}
    for case in cases_of(workspace, run.run_id).values():
        if case.verdict != "wrong":
            continue
        op_id, context_var = retrieval_of(graph, case)
        context = list(graph.value(context_var))
        units = {
            v.name
            for d in case.evidence
            for reader in graph.consumers(f"{d}@1")
            for v in graph.outputs(reader.id)
            if v.is_memory
        }
        for unit in sorted(units & set(state)):
            text = state[unit]["memory"] if isinstance(state[unit], dict) else state[unit]
            if text in context:
                continue  # in the context already: not a retrieval failure
            patched = [text, *context[:-1]]
            question = questions[case.id]
            offline = answer_question(question, patched, config=system.config, llm=None, context_var=None)
            if not judge.judge(question.question, question.answers, offline.text).correct:
                continue
            patches = {op_id: {"outputs": {"retrieved": patched}}}
            result = replay(workspace, run.run_id, patches, cases=[case.id])
            if not result.case(case.id).correct:
                continue
            assert result.case(case.id).prediction != case.prediction
            check_lineage(workspace, result, run.run_id, patches)
            replayed = graph_of(workspace, result.run_id)
            [out] = [v for v in replayed.outputs(op_id) if v.name == "retrieved"]
            assert replayed.value(out.id) == patched
            answer = replayed.producers(cases_of(workspace, result.run_id)[case.id].prediction_var)[-1]
            assert out.id in {v.id for v in replayed.inputs(answer.id)}
            return
    pytest.fail(f"{name}: no failed case is fixed by the evidence-bearing memory first")


def test_long_context_cancelled_trim_keeps_the_message(tmp_path: Path, graph_of: Any) -> None:
    run = run_conversation(LongContext(LongContextConfig(max_tokens=600)), sample_conversation(0), tmp_path)
    graph = graph_of(tmp_path, run.run_id)
    trim = next(op for op in graph.ops_in_order() if op.name == "trim_memory")
    [trimmed_version] = graph.outputs(trim.id)
    before = graph.memory_values_at(trim.seq)[UNIT]
    trimmed = before[0]
    assert trimmed not in graph.memory_values_at(trimmed_version.seq)[UNIT]
    patches = {trim.id: Patch().cancel(UNIT)}
    result = replay(tmp_path, run.run_id, patches, cases=[run.cases[0].id])
    check_lineage(tmp_path, result, run.run_id, patches)
    replayed = graph_of(tmp_path, result.run_id)
    assert replayed.memory_values_at(trimmed_version.seq)[UNIT] == before
    # The system kept its untrimmed memory: the next message is appended to it.
    following = next(op for op in replayed.ops_in_order() if op.seq > trim.seq and op.name == "memory_update")
    [version] = [v for v in replayed.outputs(following.id) if v.is_memory]
    assert replayed.value(version.id)[: len(before)] == before


# -- the in-process store follows whatever a patch writes ---------------------------------------------


def drive(workspace: Path, system: MemorySystem, conversation: Conversation, patches: dict) -> Recorder:
    """Run construction and the questions directly under a recorder holding `patches`, so the system
    can be inspected afterwards (snapshots are written as the runner does: they take seqs)."""
    policy = PatchPolicy(patches)
    with Recorder(workspace, name=f"{system.name}-patched", system=system.name, patch_policy=policy) as run:
        system.start(run, conversation)
        construct(system, conversation, run, writer=SnapshotWriter(workspace, run, conversation))
        answer_questions(system, conversation.questions, run, make_judge())
    return run


def memory_ops(graph: GraphView, name: str) -> list[tuple[str, str, str]]:
    """(op id, unit, change) of every memory change the operations called `name` made."""
    found = []
    for op in graph.ops_in_order():
        if op.name == name:
            for v in graph.outputs(op.id):
                if v.is_memory:
                    found.append(
                        (op.id, v.name, "delete" if v.deleted else "create" if v.version == 1 else "update")
                    )
    return found


@pytest.mark.parametrize(
    "override",
    [
        CANCEL,
        DELETE,
        {"id": "?", "memory": "(details forgotten)", "timestamp": None},
        "a bare string memory",
        42,
        ["not", "a", "memory"],
        {"no memory key": True},
    ],
    ids=["cancel", "delete", "degraded", "string", "number", "list", "no-memory-key"],
)
@pytest.mark.parametrize("change", ["create", "update"])
def test_mem0_store_follows_what_a_memory_patch_records(
    recorded: dict[str, Recorded], tmp_path: Path, graph_of: Any, change: str, override: Any
) -> None:
    """Whatever a patch makes of a creation or an update, the store, its indexes and the next id agree
    with the recorded memory, and the run goes on to answer every question."""
    workspace, run = recorded["mem0"]
    graph = graph_of(workspace, run.run_id)
    changes = [c for c in memory_ops(graph, "update_memory_decision") if c[2] == change]
    op_id, unit, _ = changes[len(changes) // 2]
    system = Mem0System()
    patched = drive(tmp_path, system, sample_conversation(0), {op_id: {"memory": {unit: override}}})
    assert patched.patched == [op_id]
    with mt.open(tmp_path) as ws:
        replayed = ws.view(patched.id)
        state = replayed.memory_values_at()
        written = [v for v in replayed.outputs(op_id) if v.name == unit]
        assert len(ws.cases(patched.id)) == len(run.cases)
        if override == CANCEL or (override == DELETE and change == "create"):
            assert not written
        elif override == DELETE:
            assert [v.deleted for v in written] == [True]
        else:
            assert [replayed.value(v.id) for v in written] == [override]
    assert system.memories == state
    assert set(system.stems) == set(system.owners) == set(state)
    assert {u for units in system.postings.values() for u in units} <= set(state)
    assert system.created >= max(int(u.rpartition("-")[2]) for u in replayed.memory_units())


def test_mem0_patched_candidates_and_events_are_what_gets_applied(
    recorded: dict[str, Recorded], tmp_path: Path, graph_of: Any
) -> None:
    """A fake candidate the fact duplicates stops its ADD; a patched event list is applied as given."""
    workspace, run = recorded["mem0"]
    graph = graph_of(workspace, run.run_id)
    decision, unit, _ = next(c for c in memory_ops(graph, "update_memory_decision") if c[2] == "create")
    search = max(
        (
            op
            for op in graph.ops_in_order()
            if op.name == "search_memories" and op.seq < graph.op(decision).seq
        ),
        key=lambda op: op.seq,
    )
    [added] = [v for v in graph.outputs(decision) if v.is_memory]
    text = graph.value(added.id)["memory"]
    system = Mem0System()
    patched = drive(
        tmp_path, system, sample_conversation(0), {search.id: {"outputs": {"candidates": [text]}}}
    )
    state = final_state(tmp_path, patched.id)
    assert all(memory_text(v) != text for v in state.values())
    assert system.memories == state

    events = [{"event": "ADD", "text": "Clara owns a red kayak"}, {"event": "BOGUS"}, "junk"]
    system = Mem0System()
    patched = drive(
        tmp_path, system, sample_conversation(0), {decision: {"outputs": {"update_events": events}}}
    )
    state = final_state(tmp_path, patched.id)
    assert state[unit]["memory"] == "Clara owns a red kayak"
    assert system.memories == state


def test_evermemos_index_follows_patched_memories(
    recorded: dict[str, Recorded], tmp_path: Path, graph_of: Any
) -> None:
    """Patched facts keep the numbers of the facts they keep, so memory overrides in the same patch
    still name the same facts; cancelled units stay out of the index, rewritten ones are indexed as
    rewritten."""
    workspace, run = recorded["evermemos"]
    graph = graph_of(workspace, run.run_id)
    first = next(op for op in graph.ops_in_order() if op.name == "extract_memcell")
    cell = first.metadata["memcell"].rpartition("-")[2]
    facts = graph.value(next(v for v in graph.outputs(first.id) if v.name == "facts").id)
    assert len(facts) >= 2
    patches = {
        first.id: {
            "outputs": {"facts": [facts[0], "Clara owns a red kayak"]},  # the other facts dropped
            "memory": {
                f"fact-{cell}.1": "rewritten first fact",
                f"episode-{cell}": CANCEL,
                f"fact-{cell}.{len(facts) + 1}": {"memory": {"nested": 1}},
            },
        }
    }
    system = EverMemOSSystem()
    patched = drive(tmp_path, system, sample_conversation(0), patches)
    state = final_state(tmp_path, patched.id)
    assert f"episode-{cell}" not in state and f"fact-{cell}.2" not in state
    assert state[f"fact-{cell}.1"] == "rewritten first fact"
    assert state[f"fact-{cell}.{len(facts) + 1}"]["memory"] == {"nested": 1}
    assert sorted(system.units) == sorted(state)
    for unit, text in zip(system.units, system.texts, strict=True):
        value = state[unit]
        value = value if isinstance(value, str) else value["memory"]
        assert text == (value if isinstance(value, str) else '{"nested": 1}')
    assert len(system.index.bm25) == len(system.texts)


def test_evermemos_patched_boundary_closes_what_it_says(
    recorded: dict[str, Recorded], tmp_path: Path, graph_of: Any
) -> None:
    workspace, run = recorded["evermemos"]
    graph = graph_of(workspace, run.run_id)
    boundary = next(
        op
        for op in graph.ops_in_order()
        if op.name == "detect_boundary"
        and op.seq > 20
        and not graph.value(graph.outputs(op.id)[0].id)["boundary"]
    )
    patches = {boundary.id: {"outputs": {"boundary": {"boundary": True, "reason": "patched", "messages": 1}}}}
    system = EverMemOSSystem()
    patched = drive(tmp_path, system, sample_conversation(0), patches)
    replayed = graph_of(tmp_path, patched.id)
    closed = next(
        op
        for op in replayed.ops_in_order()
        if op.name == "extract_memcell" and op.metadata["reason"] == "patched"
    )
    [memcell] = [v for v in replayed.outputs(closed.id) if v.category == "memcell"]
    assert len(replayed.value(memcell.id)["messages"]) == 1
    assert sorted(system.units) == sorted(replayed.memory_values_at())


def test_evermemos_patched_sufficiency_forces_a_second_round(
    recorded: dict[str, Recorded], graph_of: Any
) -> None:
    workspace, run = recorded["evermemos"]
    graph = graph_of(workspace, run.run_id)
    check = next(
        op
        for op in graph.ops_in_order()
        if op.name == "check_sufficiency" and graph.value(graph.outputs(op.id)[0].id)["sufficient"]
    )
    patches = {check.id: {"outputs": {"sufficiency": {"sufficient": False}}}}
    result = replay(workspace, run.run_id, patches)
    check_lineage(workspace, result, run.run_id, patches)
    replayed = graph_of(workspace, result.run_id)
    assert [op.name for op in replayed.children(check.parent_op)][:4] == [
        "retrieve_round1",
        "check_sufficiency",
        "retrieve_round2",
        "answer",
    ]


def copy_of(recorded: Recorded, tmp_path: Path) -> Recorded:
    """A private copy of a module-scoped recording, for tests that change its workspace."""
    import shutil

    source, run = recorded
    shutil.copytree(source, tmp_path / "ws")
    return tmp_path / "ws", run


def test_a_replayed_prefix_is_copied_only_when_the_replay_is_read(
    recorded: dict[str, Recorded], tmp_path: Path
) -> None:
    """Replay defers copying the reused prefix; the first read copies it and the run is complete."""
    workspace, run = copy_of(recorded["mem0"], tmp_path)
    middle = run.cases[len(run.cases) // 2].id
    result = replay(workspace, run.run_id, cases=[middle])
    with mt.open(workspace) as ws:
        pending = ws.store.conn.execute(
            "SELECT source FROM pending_prefixes WHERE run=?", (result.run_id,)
        ).fetchall()
        assert pending == [(run.run_id,)]
        assert (
            ws.store.conn.execute("SELECT COUNT(*) FROM ops WHERE run=?", (result.run_id,)).fetchone()[0] < 20
        )
        replayed, original = ws.graph(result.run_id), ws.graph(run.run_id)  # the first read copies
        resumed = result.resumed_after_seq
        assert replayed.memory_values_at(resumed) == original.memory_values_at(resumed)
        assert ws.store.count("ops", result.run_id) > ws.store.count("ops", run.run_id) // 2
        assert not ws.store.conn.execute(
            "SELECT 1 FROM pending_prefixes WHERE run=?", (result.run_id,)
        ).fetchall()
    assert final_state(workspace, result.run_id) == final_state(workspace, run.run_id)


def test_deleting_the_original_first_copies_the_prefix_its_replays_wait_for(
    recorded: dict[str, Recorded], tmp_path: Path
) -> None:
    workspace, run = copy_of(recorded["rag"], tmp_path)
    result = replay(workspace, run.run_id)
    with mt.open(workspace) as ws:
        before = ws.store.conn.execute("SELECT COUNT(*) FROM ops WHERE run=?", (run.run_id,)).fetchone()[0]
        ws.store.delete_run(run.run_id)
        assert ws.store.count("ops", result.run_id) >= before // 2
    assert predictions(cases_of(workspace, result.run_id).values()) == predictions(run.cases)
