"""The flow method on hand-built pipelines, one per error type, plus the engine's store reuse."""

from __future__ import annotations

from pathlib import Path

import pytest

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.attribution import FlowMethod
from memtrace.attribution.engine import attribute, make_method
from memtrace.attribution.model import load_attributions

FACT = {"memory": "Clara adopted a dog named Pepper"}


def build(workspace: Path, fault: str) -> str:
    """A tiny Mem0-like run whose one question fails because of `fault`."""
    with mt.run(workspace, name=fault, system="toy") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output(
                "D1:1", "Clara: I adopted a dog named Pepper last month!", category="message"
            )
            op.output("D1:2", "Diego: Cool, I love dogs.", category="message")
        with mt.op("extract_facts", category="extraction") as op:
            op.use(evidence)
            facts = ["Clara likes parks"] if fault == "extraction" else ["Clara adopted a dog named Pepper"]
            op.output("extracted_facts", facts)
        with mt.op("update_memory_decision", category="update") as op:
            run.memory("mem-1").create({"memory": facts[0]}, by=op)
            run.memory("mem-2").create({"memory": "Diego loves dogs"}, by=op)
        if fault == "update":
            with mt.op("update_memory_decision", category="update") as op:
                run.memory("mem-1").update({"memory": "Clara walks her dog in the park"}, by=op)
        if fault == "deletion":
            with mt.op("delete_memory", category="deletion") as op:
                run.memory("mem-1").delete(by=op)
        case = run.case("What is the name of Clara's dog?", gold="Pepper", evidence=["D1:1"])
        with mt.op("question", category="query"):
            with mt.op("search", category="retrieval") as op:
                query = op.input("query", "What is the name of Clara's dog?", category="query")
                hit = run.memory("mem-2" if fault in ("retrieval", "deletion", "update") else "mem-1")
                if hit.exists:
                    op.use(hit.latest_id)
                memory = "Diego loves dogs" if hit.unit_id == "mem-2" else facts[0]
                context = op.output("retrieved", [memory], category="retrieved")
            with mt.op("answer", category="response") as op:
                op.use(query)
                op.use(context)
                prediction = op.output("prediction", "Rex", category="prediction")
        case.predict("Rex", var=prediction)
        case.judge(False, score=0.0)
        return run.id


@pytest.mark.parametrize(
    ("fault", "error_type", "op_name"),
    [
        ("extraction", "ExtractionError", "extract_facts"),
        ("update", "UpdateError", "update_memory_decision"),
        ("deletion", "DeletionError", "delete_memory"),
        ("retrieval", "RetrievalError", "search"),
        ("response", "ResponseError", "answer"),
    ],
)
def test_each_fault_is_attributed_to_its_operation(
    tmp_path: Path, fault: str, error_type: str, op_name: str, open_ws: OpenWorkspace
) -> None:
    run_id = build(tmp_path, fault)
    ws = open_ws(tmp_path)
    (case,) = ws.cases(run_id)
    for graph in (ws.graph(run_id), ws.view(run_id)):
        result = FlowMethod().attribute(graph, case)
        assert result.error_type == error_type, result.explanation
        assert graph.op(result.op_id).name == op_name
        assert 0 < result.confidence <= 1
        assert result.path[0].id == "D1:1@1" and result.path[-1].id == result.op_id
    if fault == "update":
        assert "Clara walks her dog in the park" in result.explanation
    if fault == "extraction":
        assert "extract_facts" in result.explanation


def test_the_second_update_is_blamed_when_the_first_kept_the_answer(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    with mt.run(tmp_path, name="two-updates") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output("D1:1", "Clara: I adopted a dog named Pepper!", category="message")
        with mt.op("extract", category="extraction") as op:
            op.use(evidence)
            run.memory("m").create(FACT, by=op)
        with mt.op("first_update", category="update") as op:
            run.memory("m").update({"memory": "Clara's dog Pepper likes walks"}, by=op)
        with mt.op("second_update", category="update") as op:
            run.memory("m").update({"memory": "Clara likes walks"}, by=op)
        case = run.case("What is the name of Clara's dog?", gold="Pepper", evidence=["D1:1"])
        with mt.op("answer", category="response") as op:
            prediction = op.output("prediction", "Rex", category="prediction")
        case.predict("Rex", var=prediction)
        case.judge(False)
    ws = open_ws(tmp_path)
    result = FlowMethod().attribute(ws.view(run.id), ws.cases(run.id)[0])
    assert (result.error_type, ws.graph(run.id).op(result.op_id).name) == ("UpdateError", "second_update")


def test_missing_evidence_is_undetermined_with_a_reason(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    run_id = build(tmp_path, "response")
    ws = open_ws(tmp_path)
    (case,) = ws.cases(run_id)
    case.evidence = ["D9:9"]
    result = FlowMethod(evidence="gold").attribute(ws.view(run_id), case)
    assert result.error_type == "Undetermined" and result.op_id is None
    assert "D9:9" in result.explanation


def test_unresolvable_gold_evidence_falls_back_to_retrieved_evidence(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    run_id = build(tmp_path, "response")
    ws = open_ws(tmp_path)
    (case,) = ws.cases(run_id)
    case.evidence = ["D9:9"]
    result = FlowMethod().attribute(ws.view(run_id), case)
    assert result.error_type == "ResponseError"
    assert result.path[0].id == "D1:1@1" and "bm25" in result.path[0].note


def test_engine_stores_attributions_and_reuses_them(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    build(tmp_path / "ws", "update")
    ws = open_ws(tmp_path / "ws")
    first = attribute(ws, "flow")
    assert [a.error_type for a in first] == ["UpdateError"]
    ws.store.conn.execute("UPDATE attributions SET explanation='from the store'")
    again = attribute(ws, "flow")
    assert again[0].explanation == "from the store"
    fresh = attribute(ws, "flow", refresh=True)
    assert fresh[0].explanation != "from the store"
    other = attribute(ws, make_method("flow", k=3))  # other settings: computed, not reused
    assert other[0].explanation != "from the store"


def test_baselines(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    build(tmp_path, "update")
    ws = open_ws(tmp_path)
    (last,) = attribute(ws, "last-op")
    assert last.error_type == "ResponseError" and last.op_id.startswith("answer#")
    (first,) = attribute(ws, "random")
    (second,) = attribute(ws, make_method("random"), refresh=True)
    assert (first.op_id, first.error_type) == (second.op_id, second.error_type)


def test_llm_methods_without_a_client_say_what_they_need() -> None:
    with pytest.raises(mt.MemtraceError, match="needs an LLM"):
        make_method("agent")


class YesNoClientDouble:
    """A test double of the LLM client: says a text carries the information when it names Pepper."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def chat(self, messages: list[dict[str, str]], **options: object) -> object:
        prompt = messages[-1]["content"]
        self.prompts.append(prompt)
        text = prompt.split("---\n")[1]
        return type("Reply", (), {"data": {"carries": "Pepper" in text}, "text": ""})()


@pytest.mark.parametrize("kind", ["embedding", "llm"])
def test_other_support_scorers_reach_the_same_verdicts(
    tmp_path: Path, kind: str, open_ws: OpenWorkspace
) -> None:
    from memtrace.attribution.engine import make_scorer

    double = YesNoClientDouble() if kind == "llm" else None
    for fault, expected in [("update", "UpdateError"), ("retrieval", "RetrievalError")]:
        run_id = build(tmp_path / fault, fault)
        ws = open_ws(tmp_path / fault)
        (case,) = ws.cases(run_id)
        result = FlowMethod(make_scorer(kind, double)).attribute(ws.view(run_id), case)
        assert result.error_type == expected, result.explanation
    if double is not None:
        assert double.prompts and "What is the name of Clara's dog?" in double.prompts[0]


def test_a_deletion_by_shared_marker_node_is_a_deletion_error(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    """MemBase's Mem0 graphs delete an entry by linking it to a shared node whose value is DELETED; the
    importer writes the entry's tombstone for that link, and the tombstone is what deletes it (a
    DELETED node alone names no unit: tests/attribution/test_attr_tombstones.py)."""
    with mt.run(tmp_path, name="marker") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output("D1:1", "Clara: I adopted a dog named Pepper!", category="message")
        with mt.op("memory_system.extract_facts", category="extraction") as op:
            op.use(evidence)
            entry = op.output(
                "mem-1", {"memory": "Clara adopted a dog named Pepper"}, category="memory_entry"
            )
        with mt.op("memory_system.update_memory_decision", category="update") as op:
            op.use(entry)
            op.output("deleted", "DELETED")
            run.memory("mem-1").delete(by=op)
        case = run.case("What is the name of Clara's dog?", gold="Pepper", evidence=["D1:1"])
        with mt.op("question-answering", category="response") as op:
            prediction = op.output("prediction", "Rex", category="prediction")
        case.predict("Rex", var=prediction)
        case.judge(False)
    ws = open_ws(tmp_path)
    result = FlowMethod().attribute(ws.view(run.id), ws.cases(run.id)[0])
    assert result.error_type == "DeletionError"
    assert ws.graph(run.id).op(result.op_id).name == "memory_system.update_memory_decision"


@pytest.mark.parametrize(
    ("first_round_finds_it", "blamed"), [(False, "retrieve_round1"), (True, "retrieve_round2")]
)
def test_of_two_retrieval_rounds_the_one_after_which_every_round_missed_is_blamed(
    tmp_path: Path, first_round_finds_it: bool, blamed: str, open_ws: OpenWorkspace
) -> None:
    """A second round runs because the first looked insufficient: when both miss, repairing the first
    alone ends retrieval with the evidence, so the first is the earliest decisive one."""
    with mt.run(tmp_path, name="rounds", system="toy") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output(
                "D1:1", "Clara: I adopted a dog named Pepper last month!", category="message"
            )
        with mt.op("update_memory_decision", category="update") as op:
            op.use(evidence)
            run.memory("mem-1").create(FACT, by=op)
            run.memory("mem-2").create({"memory": "Diego loves dogs"}, by=op)
        case = run.case("What is the name of Clara's dog?", gold="Pepper", evidence=["D1:1"])
        with mt.op("question", category="query"):
            with mt.op("retrieve_round1", category="retrieval") as op:
                query = op.input("query", "What is the name of Clara's dog?", category="query")
                first = [FACT["memory"]] if first_round_finds_it else ["Diego loves dogs"]
                found = op.output("retrieved", first, category="retrieved")
            with mt.op("check_sufficiency", category="retrieval") as op:
                op.use(found)
                check = op.output("sufficiency", {"sufficient": False}, category="decision")
            with mt.op("retrieve_round2", category="retrieval") as op:
                op.use(check)
                context = op.output("retrieved", ["Diego loves dogs"], category="retrieved")
            with mt.op("answer", category="response") as op:
                op.use(query)
                op.use(context)
                prediction = op.output("prediction", "Rex", category="prediction")
        case.predict("Rex", var=prediction)
        case.judge(False, score=0.0)
    ws = open_ws(tmp_path)
    (result,) = attribute(ws, "flow", run=run.id)
    assert result.error_type == "RetrievalError"
    assert ws.graph(run.id).op(result.op_id).name == blamed


def test_an_earlier_harmless_deletion_is_not_blamed(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    """Deleting one of two memories holding the answer loses nothing: the later update that overwrote
    the other one left memory without it, so restoring that update alone reaches the answer."""
    with mt.run(tmp_path, name="siblings") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output("D1:1", "Clara: I adopted a dog named Pepper!", category="message")
        with mt.op("extract", category="extraction") as op:
            op.use(evidence)
            run.memory("m1").create(FACT, by=op)
            run.memory("m2").create({"memory": "Clara's dog is named Pepper"}, by=op)
        with mt.op("dedupe", category="deletion") as op:
            run.memory("m1").delete(by=op)
        with mt.op("rewrite", category="update") as op:
            run.memory("m2").update({"memory": "Clara likes long walks"}, by=op)
        case = run.case("What is the name of Clara's dog?", gold="Pepper", evidence=["D1:1"])
        with mt.op("answer", category="response") as op:
            prediction = op.output("prediction", "Rex", category="prediction")
        case.predict("Rex", var=prediction)
        case.judge(False)
    ws = open_ws(tmp_path)
    result = FlowMethod().attribute(ws.view(run.id), ws.cases(run.id)[0])
    assert (result.error_type, ws.graph(run.id).op(result.op_id).name) == ("UpdateError", "rewrite")
    assert "dedupe" in result.explanation  # the harmless change is named, and why it is not blamed


def test_a_response_error_shows_the_context_part_carrying_it_and_stores_it(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    build(tmp_path, "response")
    ws = open_ws(tmp_path)
    (result,) = attribute(ws, "flow")
    parts = [step.part for step in result.path if step.part is not None]
    assert result.error_type == "ResponseError" and parts == ["Clara adopted a dog named Pepper"]
    assert "Clara adopted a dog named Pepper" in result.explanation
    (stored,) = load_attributions(open_ws(tmp_path).store, method="flow")
    assert stored.path == result.path


def test_a_context_without_the_information_is_no_response_error(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    """Memory held it, the answer read a context with no part carrying it, and no retrieval fed it."""
    with mt.run(tmp_path, name="no-retrieval") as run:
        with mt.op("load_session", category="construction") as op:
            evidence = op.output("D1:1", "Clara: I adopted a dog named Pepper!", category="message")
        with mt.op("extract", category="extraction") as op:
            op.use(evidence)
            run.memory("m").create(FACT, by=op)
        case = run.case("What is the name of Clara's dog?", gold="Pepper", evidence=["D1:1"])
        with mt.op("answer", category="response") as op:
            op.input("context", ["Diego loves dogs", "Clara: Pepper"], category="context")
            prediction = op.output("prediction", "Rex", category="prediction")
        case.predict("Rex", var=prediction)
        case.judge(False)
    ws = open_ws(tmp_path)
    result = FlowMethod().attribute(ws.view(run.id), ws.cases(run.id)[0])
    assert result.error_type == "Undetermined" and "no part of its context carries it" in result.explanation


def test_the_random_baseline_picks_the_same_under_a_seed_across_recordings(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    """Run ids (a replay's too) are fresh each recording; a seeded pick must not depend on them."""
    from memtrace.datasets import sample_conversation
    from memtrace.systems import run_conversation
    from memtrace.systems.long_context import LongContext, LongContextConfig
    from memtrace.systems.replay import replay

    picks = []
    for name in ("first", "second"):
        run = run_conversation(
            LongContext(LongContextConfig(max_tokens=600)), sample_conversation(0), tmp_path / name
        )
        ws = open_ws(tmp_path / name)
        case = next(c for c in ws.cases(run.run_id) if c.verdict == "correct")
        answer = ws.graph(run.run_id).producers(case.prediction_var)[-1]
        replayed = replay(
            tmp_path / name, run.run_id, {answer.id: {"outputs": {"prediction": "yes"}}}, cases=[case.id]
        )
        ws = open_ws(tmp_path / name)
        method = make_method("random", seed=3)
        found = [*attribute(ws, method), *attribute(ws, method, run=replayed.run_id)]
        assert found[-1].run_id == replayed.run_id
        picks.append([(a.case_id, a.op_id, a.error_type) for a in found])
    assert len(picks[0]) > 5 and len({op for _, op, _ in picks[0]}) > 1
    assert picks[0] == picks[1]
