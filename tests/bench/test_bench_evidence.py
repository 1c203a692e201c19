"""`bench evidence`: macro / micro recall@k of gold evidence, on workspaces and MemTraceBench dirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.attribution.evidence.locate import locate_evidence
from memtrace.bench.evidence import evidence_recall
from memtrace.cli.bench_cmd import evidence_command
from memtrace.graph import MemtraceError

MESSAGES = {
    "D1:1": "Alice adopted a beagle named Rex.",
    "D1:2": "Bob bought a red bicycle.",
    "D1:3": "Alice moved to Lisbon in March.",
    "D1:4": "It rained all weekend.",
}


def record(workspace: Path) -> str:
    """Five cases whose BM25 top-1 hits are known (see the expected figures in the tests)."""
    cases = [  # (id, question, gold, evidence, correct)
        ("c1", "What is the name of Alice's dog?", "Rex", ["D1:1"], False),  # top-1 D1:1: 1/1
        ("c2", "Where did Alice move?", "Lisbon", ["D1:3", "D1:2", "D1:4"], False),  # top-1 D1:3: 1/3
        ("c3", "What color is the bicycle?", "red", ["D1:4", "D9:9"], True),  # top-1 D1:2: 0/1
        ("c4", "Is it sunny?", "no", [], False),  # no gold evidence: not counted
        ("c5", "Who is Carol?", "a friend", ["D7:7"], False),  # no gold message: skipped
    ]
    with mt.run(workspace, name="toy", system="toy") as run:
        with mt.op("load_session", category="construction") as op:
            for name, text in MESSAGES.items():
                op.output(name, text, category="message")
        for case_id, question, gold, evidence, correct in cases:
            run.case(question, gold=gold, evidence=evidence, id=case_id).judge(correct)
        return run.id


def row(result: dict, method: str, mode: str = "question+answer") -> dict:
    return next(r for r in result["results"] if r["method"] == method and r["query_mode"] == mode)


def test_recall_at_k_by_hand(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    record(tmp_path / "ws")
    result = evidence_recall(tmp_path / "ws", k=1, methods=["bm25"], query_modes=["question+answer"])
    assert result["runs"] == 1 and result["cases"] == 3
    assert result["unresolved_gold"] == 2  # D9:9 and D7:7
    assert result["cases_without_gold_message"] == 1
    bm25 = row(result, "bm25")
    assert bm25["macro"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert bm25["micro"] == pytest.approx(2 / 5)
    assert (bm25["found"], bm25["gold"], bm25["cases"]) == (2, 5, 3)
    failed = evidence_recall(open_ws(tmp_path / "ws"), k=1, methods=["bm25"], failed_only=True)
    assert row(failed, "bm25")["macro"] == pytest.approx((1 + 1 / 3) / 2)  # c3 was answered right
    assert row(failed, "bm25")["micro"] == pytest.approx(2 / 4)
    everything = evidence_recall(tmp_path / "ws", k=8, methods=["bm25", "dense,hybrid"])
    assert [(r["query_mode"], r["method"]) for r in everything["results"]] == [
        (mode, method) for mode in ("question+answer", "question") for method in ("bm25", "dense", "hybrid")
    ]
    # BM25 returns only messages sharing a word with the query, so k=8 finds no more than k=1 here
    assert row(everything, "bm25")["micro"] == pytest.approx(2 / 5)


def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    record(tmp_path / "ws")
    with pytest.raises(MemtraceError, match="unknown retrieval method 'gold'"):
        evidence_recall(tmp_path / "ws", methods=["gold"])
    with pytest.raises(MemtraceError, match="unknown query mode"):
        evidence_recall(tmp_path / "ws", query_modes=["answer"])
    with pytest.raises(MemtraceError, match="k must be"):
        evidence_recall(tmp_path / "ws", k=0)
    with pytest.raises(MemtraceError, match="no such file"):
        evidence_command(tmp_path / "nowhere", console=Console(file=None, record=True))
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(MemtraceError, match="neither a memtrace workspace"):
        evidence_recall(tmp_path / "file.txt")


def node(name: str, value: str, category: str, class_name: str | None = None, **meta: object) -> dict:
    return {
        "name": name,
        "version": 1,
        "value": value,
        "category": category,
        "class_name": class_name,
        "created_at": "2025-01-01 00:00:00.001",
        "metadata": meta,
    }


def bench_graph(conv: str) -> dict:
    """A MemTraceBench-style graph: repr-quoted values, a `message & query` query node, a class-named
    message, a message buffer, and two annotations whose evidence is given as full node ids."""
    nodes = [node(name, repr(text), "message") for name, text in MESSAGES.items() if name != "D1:4"]
    nodes += [
        node("D1:4", repr(MESSAGES["D1:4"]), "message", "turn"),
        node("buffer", repr("Rex Lisbon bicycle rained"), "message_buffer"),
        node("q1", repr("What is the name of Alice's dog?"), "message & query", "query", evidence=["D1:1"]),
    ]
    annotation = {
        "golden_answers_id": "golden_answers:g@1",
        "prediction_id": "prediction:p@1",
        "final_error_type": "RetrievalError",
        "final_op_id": "op-1",
    }
    return {
        "graph_id": f"graph-{conv}",
        "user_id": "u",
        "project_id": "p",
        "metadata": {
            "memtracebench_graph_filename": f"{conv}.json",
            "memtracebench_dataset_source": "locomo",
        },
        "data": {
            "sessions": [],
            "nodes": nodes,
            "operations": [
                {"op_id": "op-1", "op_name": "memory_system.message_buffer_update", "category": "x"}
            ],
            "edges": [
                {
                    "edge_id": "e1",
                    "op_id": "op-1",
                    "source_full_node_id": "D1:1@1",
                    "target_full_node_id": "buffer@1",
                }
            ],
            "annotations": [
                {
                    **annotation,
                    "query_id": "query:q1@1",
                    "query": repr("What is the name of Alice's dog?"),
                    "golden_answers": ["Rex"],
                    "prediction": "'Max'",
                    "source_evidence_ids": ["D1:1@1"],  # top-1 D1:1: 1/1
                },
                {
                    **annotation,
                    "query_id": "query:q2@1",
                    "query": repr("Where did Alice move?"),
                    "golden_answers": "Lisbon",
                    "prediction": "'Paris'",
                    "source_evidence_ids": ["D1:3@1", "D1:2@1", "turn:D1:4@1", "D5:5@1"],  # 1/3
                },
            ],
        },
    }


@pytest.fixture
def bench_dir(tmp_path: Path) -> Path:
    root = tmp_path / "MemTraceBench"
    for split in ("rag", "mem0"):
        (root / split).mkdir(parents=True)
        (root / split / "conv-1.json").write_text(json.dumps(bench_graph("conv-1")))
    return root


def test_memtracebench_directory_input(bench_dir: Path) -> None:
    result = evidence_recall(
        bench_dir, k=1, methods=["bm25"], query_modes=["question+answer"], splits=["rag"]
    )
    assert (result["runs"], result["cases"], result["unresolved_gold"]) == (1, 2, 1)  # D5:5@1
    assert row(result, "bm25")["macro"] == pytest.approx((1 + 1 / 3) / 2)
    assert row(result, "bm25")["micro"] == pytest.approx(2 / 4)
    both = evidence_recall(bench_dir, k=1, methods=["bm25"])
    assert (both["runs"], both["cases"]) == (2, 4)


def test_imported_messages_resolve_by_full_id_and_bare_name(bench_dir: Path, tmp_path: Path) -> None:
    from memtrace.interop import load_memtracebench

    with mt.Workspace(tmp_path / "ws", create=True) as ws:
        (run,) = load_memtracebench(ws.store, bench_dir, splits="rag")
        graph = ws.view(run.id)
        case = next(c for c in ws.cases(run.id) if c.id == "query:q2@1")
        ev = locate_evidence(graph, case)
        assert ev.ids == ["D1:3@1", "D1:2@1", "turn:D1:4@1"] and ev.unresolved == ["D5:5@1"]
        assert ev.texts[0] == MESSAGES["D1:3"]  # unquoted
        case.evidence = ["D1:4", "turn:D1:4", "q1", "buffer"]
        ev = locate_evidence(graph, case)
        assert ev.ids == ["turn:D1:4@1"] and ev.unresolved == ["q1", "buffer"]
        hits = locate_evidence(graph, case, method="hybrid")
        assert not {"query:q1@1", "buffer@1"} & set(hits.ids)


def test_command_prints_a_table_and_writes_json(tmp_path: Path) -> None:
    record(tmp_path / "ws")
    console = Console(record=True, width=140)
    out = tmp_path / "recall.json"
    result = evidence_command(tmp_path / "ws", 1, ["bm25", "hybrid"], out, console)
    text = console.export_text()
    assert "Evidence recall@1 (3 cases, 1 runs)" in text
    assert "question+answer" in text and "hybrid" in text and "0.444" in text and "2 / 5" in text
    assert "2 gold id(s) name no message" in text
    assert json.loads(out.read_text()) == result


def test_locomo_conversation_recall(tmp_path: Path, locomo_dev: Path) -> None:
    from memtrace.datasets import load_dataset
    from memtrace.systems import run_conversation
    from memtrace.systems.rag import RAGSystem

    (conversation,) = load_dataset(f"locomo:{locomo_dev}", conversations=1)
    run_conversation(RAGSystem(), conversation, tmp_path / "ws")
    result = evidence_recall(tmp_path / "ws")
    assert result["cases"] > 150 and result["unresolved_gold"] <= 3
    qa, question = row(result, "bm25"), row(result, "bm25", "question")
    assert qa["micro"] >= 0.65 and qa["macro"] >= qa["micro"]  # 0.73 / 0.80 on all of locomo-dev
    assert question["micro"] < qa["micro"]  # the gold answer is what the messages share
    assert row(result, "hybrid")["micro"] >= row(result, "dense")["micro"]
