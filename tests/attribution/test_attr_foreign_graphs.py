"""Locating a case's steps on graphs memtrace did not make: MemBase-style smartcomment recordings."""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtrace.attribution import FlowMethod
from memtrace.attribution.evidence.anatomy import case_anatomy
from memtrace.attribution.evidence.support import value_words
from memtrace.attribution.methods.baselines import LastOpMethod, RandomMethod
from memtrace.graph import Edge, GraphView, Store
from memtrace.interop import read_smartcomment, write_imported

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "io"))
from membase_graphs import IDK, Recorded, membase_graphs


@functools.cache
def _recorded() -> dict[str, list[Recorded]]:
    return membase_graphs()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(tmp_path / "ws")
    yield s
    s.close()


def _load(store: Store, recorded: Recorded, *, flip_reads: bool = False) -> GraphView:
    """Import a recorded graph; `flip_reads` turns search reads back into writes, as the importer
    used to: what any graph where a search also writes the memories it found looks like."""
    imported = read_smartcomment(json.loads(json.dumps(recorded.graph)))
    if flip_reads:
        imported.edges = [
            Edge(e.run_id, e.op_id, e.var_id, "out", e.source, e.metadata)
            if e.role == "in" and e.source
            else e
            for e in imported.edges
        ]
    write_imported(store, imported)
    return GraphView(store, imported.run)


def _case(store: Store, view: GraphView, recorded: Recorded, question: str):
    return next(c for c in store.cases(view.run.id) if c.metadata["query_var"] == recorded.queries[question])


def test_the_answer_step_is_the_one_that_read_the_case_query_not_the_last_writer_of_a_shared_prediction(
    store,
):
    recorded = _recorded()["mem0"][0]
    view = _load(store, recorded)
    first, later = "What is the name of Caroline's puppy?", "What is Caroline's favourite colour?"
    case = _case(store, view, recorded, first)
    assert case.prediction == IDK
    writers = view.producers(case.prediction_var)
    assert [op.id for op in writers] == [recorded.ops[f"answer {first}"], recorded.ops[f"answer {later}"]]
    anatomy = case_anatomy(view, case)
    assert anatomy.answer_op is not None and anatomy.answer_op.id == recorded.ops[f"answer {first}"]
    assert anatomy.answer_op.category == "evaluation"
    assert anatomy.retrieval_op is not None and anatomy.retrieval_op.id == recorded.ops[f"search {first}"]
    assert [v.id for v in anatomy.context_vars] == ["mem-1@1"]
    # a case that does not know its query node (an annotation naming none) finds it by its question
    unknown = dataclasses.replace(case, metadata={})
    assert case_anatomy(view, unknown).answer_op == anatomy.answer_op


def test_the_retrieval_step_is_the_search_that_read_the_query(store):
    recorded = _recorded()["mem0"][0]
    view = _load(store, recorded)
    for question in ("Where did Caroline move to in March?", "What is the name of Caroline's sister?"):
        anatomy = case_anatomy(view, _case(store, view, recorded, question))
        assert anatomy.retrieval_op is not None
        assert anatomy.retrieval_op.id == recorded.ops[f"search {question}"]
        assert anatomy.question_seq == anatomy.retrieval_op.seq


def test_flow_blames_the_planted_step_where_locating_steps_decides_it(store):
    """Retrieval, response and deletion faults depend on the steps and producers found here; the
    update fault of conversation h01 depends on the support scorer (another part of issue 10)."""
    for recorded in (*_recorded()["mem0"], *_recorded()["rag"]):
        view = _load(store, recorded)
        cases = {c.id: c for c in store.cases(view.run.id)}
        for label in store.annotations(view.run.id):
            if label.error_type not in ("RetrievalError", "ResponseError", "DeletionError"):
                continue
            got = FlowMethod().attribute(view, cases[label.case_id])
            assert (got.op_id, got.error_type) == (label.op_id, label.error_type), got.explanation


def test_a_memory_version_is_produced_by_its_earliest_writer_that_is_not_a_search(store):
    recorded = _recorded()["mem0"][1]
    view = _load(store, recorded, flip_reads=True)
    case = _case(store, view, recorded, "What day is Melanie's pottery class?")
    searches = [op for op in view.producers("mem-1@2") if op.category == "retrieval"]
    assert searches, "the search must look like a writer of mem-1@2 for this test to mean anything"
    got = FlowMethod().attribute(view, case)
    assert (got.op_id, got.error_type) == (recorded.ops["update D2:1"], "UpdateError"), got.explanation


def test_baselines_find_evaluation_category_answer_steps(store):
    recorded = _recorded()["mem0"][0]
    view = _load(store, recorded)
    question = "What is the name of Caroline's sister?"
    case = _case(store, view, recorded, question)
    last = LastOpMethod().attribute(view, case)
    assert (last.op_id, last.error_type) == (recorded.ops[f"answer {question}"], "ResponseError")
    answer_op = view.op(recorded.ops[f"answer {question}"])
    picks = [RandomMethod(seed).attribute(view, case) for seed in range(40)]
    answered = [p for p in picks if p.op_id == answer_op.id]
    assert answered and {p.error_type for p in answered} == {"ResponseError"}
    assert all(view.op(p.op_id).seq <= answer_op.seq for p in picks)
    # an abstention that shares its prediction node with later failures is still its own answer step
    other = _recorded()["mem0"][1]
    abstained = "Why does Melanie carry an epipen?"
    view = _load(store, other)
    case = _case(store, view, other, abstained)
    assert view.producers(case.prediction_var)[-1].id != other.ops[f"answer {abstained}"]
    assert LastOpMethod().attribute(view, case).op_id == other.ops[f"answer {abstained}"]


def test_json_text_values_are_scored_part_by_part(store):
    """A RAG chunk is JSON text with escaped newlines: decoded, each message line is its own part,
    tagged with its message id, so the scorer reads the evidence line and not the whole chunk."""
    recorded = _recorded()["rag"][0]
    view = _load(store, recorded)
    parts = value_words(view.value("doc-2@1"))
    assert len(parts) == 2
    assert [sorted(w for w in p if w.startswith("@")) for p in parts] == [["@D1:3"], ["@D1:4"]]
    window = _load(store, _recorded()["long_context"][0])
    latest = window.versions("memory")[-1]
    assert len(value_words(window.value(latest.id))) == 5  # the list of five kept messages


def test_two_retrieval_rounds_that_both_miss_blame_the_first(store):
    """EverMemOS-style: a sufficiency check asks a follow-up and a second search reads the question
    again. The question stage starts at the first round, and the first round is the earliest fault."""
    recorded = _recorded()["mem0"][0]
    view = _load(store, recorded)
    question = "Which room did Caroline paint?"
    case = _case(store, view, recorded, question)
    anatomy = case_anatomy(view, case)
    first, second = recorded.ops[f"search {question}"], recorded.ops[f"second search {question}"]
    assert anatomy.retrieval_op is not None and anatomy.retrieval_op.id == second
    assert anatomy.question_seq == view.op(first).seq
    got = FlowMethod().attribute(view, case)
    assert (got.op_id, got.error_type) == (first, "RetrievalError"), got.explanation
