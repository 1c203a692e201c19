"""The MemTraceBench directory loader on a small benchmark written by the test."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from iohelpers import fresh_graph

from memtrace.graph import FormatError, Store
from memtrace.interop import load_memtracebench

#: split -> the system that recorded it, in load order (the system registry supplies this in memtrace).
SPLITS = {"rag": "rag", "mem0": "mem0"}


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    s = Store(tmp_path / "ws")
    yield s
    s.close()


@pytest.fixture
def sc_graph() -> dict:
    """A fresh copy of a graph recorded with the real smartcomment package."""
    return fresh_graph()


def _bench_graph(graph: dict, split: str, conv: str, error_type: str) -> dict:
    graph = json.loads(json.dumps(graph))
    graph["graph_id"] = f"graph-{conv}"  # the same graph id in both splits: split keeps runs apart
    graph["metadata"] = {
        "memtracebench_graph_filename": f"{conv}.json",
        "memtracebench_dataset_source": "locomo",
    }
    query = next(n for n in graph["data"]["nodes"] if n["class_name"] == "query")
    graph["data"]["annotations"] = [
        {
            "query_id": f"{query['class_name']}:{query['name']}@1",
            "query": query["value"],
            "golden_answers": "Boston",
            "golden_answers_id": "golden_answers:g@1",
            "prediction": "'NYC'",
            "prediction_id": "prediction:p@1",
            "source_evidence_ids": ["D1:1@1"],
            "final_error_type": error_type,
            "final_op_id": graph["data"]["operations"][0]["op_id"],
        }
    ]
    return graph


@pytest.fixture
def bench_dir(tmp_path, sc_graph):
    root = tmp_path / "MemTraceBench"
    for split, convs in {"rag": ["conv-1", "conv-2"], "mem0": ["conv-1"]}.items():
        (root / split).mkdir(parents=True)
        for conv in convs:
            graph = _bench_graph(sc_graph, split, conv, "RetrievalError" if split == "rag" else "UpdateError")
            (root / split / f"{split}_{conv}.json").write_text(json.dumps(graph))
    (root / "notes").mkdir()  # a folder without graphs is not a split
    return root


def test_loads_every_split_with_cases_and_annotations(store, bench_dir):
    seen = []
    runs = load_memtracebench(
        store, bench_dir, progress=lambda done, total, path: seen.append((done, total)), systems=SPLITS
    )
    assert [(r.system, r.name, r.dataset) for r in runs] == [
        ("rag", "rag/conv-1", "locomo"),
        ("rag", "rag/conv-2", "locomo"),
        ("mem0", "mem0/conv-1", "locomo"),
    ]
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert len({r.id for r in runs}) == 3
    for run in runs:
        # the annotated failure, then the question the judge found right (accuracy is not 0%)
        case, right = store.cases(run.id)
        assert case.verdict == "wrong" and case.gold == ["Boston"] and case.prediction == "NYC"
        assert case.score == 0.0 and case.metadata["query_var"] == case.id
        assert right.verdict == "correct" and right.question == "What does she like?"
        (label,) = store.annotations(run.id)
        assert label.error_type == ("RetrievalError" if run.system == "rag" else "UpdateError")
        assert label.author == "memtracebench"
    # loading again replaces the same runs instead of adding copies
    again = load_memtracebench(store, bench_dir, splits=["mem0"])
    assert [r.id for r in again] == [runs[2].id]
    assert len(store.runs()) == 3 and len(store.annotations()) == 3


def test_splits_load_in_the_callers_order_under_the_callers_system_names(store, bench_dir):
    """graph/ knows no system: unknown splits load by name, under their split name as the system."""
    assert next(r.name for r in load_memtracebench(store, bench_dir)) == "mem0/conv-1"
    runs = load_memtracebench(store, bench_dir, systems={"rag": "my_rag"})
    assert [(r.system, r.name) for r in runs] == [
        ("my_rag", "rag/conv-1"),
        ("my_rag", "rag/conv-2"),
        ("mem0", "mem0/conv-1"),
    ]


def test_missing_or_empty_directories_are_named(store, tmp_path, bench_dir):
    with pytest.raises(FormatError, match="no such directory") as err:
        load_memtracebench(store, tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in str(err.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FormatError, match="no MemTraceBench graphs"):
        load_memtracebench(store, tmp_path / "empty")
    with pytest.raises(FormatError, match="no such split") as err:
        load_memtracebench(store, bench_dir, splits="evermemos")
    assert "evermemos" in str(err.value)
    assert store.runs() == []


def test_a_corrupt_file_stops_the_load_and_names_the_file(store, bench_dir):
    bad = bench_dir / "rag" / "rag_conv-2.json"
    bad.write_text(bad.read_text()[:500])
    with pytest.raises(FormatError) as err:
        load_memtracebench(store, bench_dir)
    assert str(bad) in str(err.value) and "not valid JSON" in str(err.value)
    assert store.runs() == []  # all or nothing: the good file before it is not written either
