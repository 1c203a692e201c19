"""Checks on the held-out smartcomment set itself (benchmarks/heldout_smartcomment/), not on memtrace.

Reads the committed JSON graphs as plain data: every label points at an operation of its graph, the five
error types are all present in the promised numbers, every judged failure is labelled and only those, and
the labelled operation really is where the evidence was lost (by the type's definition). A last test
regenerates the set with the real smartcomment package and checks it is byte-identical to the committed
files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "benchmarks" / "heldout_smartcomment"
SET = HELDOUT / "set"
SYSTEMS = ("mem0", "rag", "long_context")
TYPES = ("ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError")
APPLICABLE = {
    "mem0": set(TYPES),
    "rag": {"ExtractionError", "RetrievalError", "ResponseError"},
    "long_context": {"ExtractionError", "UpdateError", "RetrievalError", "ResponseError"},
}
ANNOTATION_KEYS = {
    "query_id",
    "query",
    "golden_answers",
    "golden_answers_id",
    "prediction",
    "prediction_id",
    "source_evidence_ids",
    "final_error_type",
    "final_op_id",
}


class Graph:
    def __init__(self, path: Path):
        self.path = path
        self.raw = json.loads(path.read_text())
        data = self.raw["data"]
        self.nodes = {n["full_node_id"]: n for n in data["nodes"]}
        self.ops = {o["op_id"]: o for o in data["operations"]}
        self.edges = data["edges"]
        self.annotations = data.get("annotations", [])
        self.by_op: dict[str, list[dict]] = defaultdict(list)
        for e in self.edges:
            self.by_op[e["op_id"]].append(e)

    def io(self, op_id: str) -> tuple[set[str], set[str]]:
        """Inputs (in-degree 0 inside the op's subgraph) and produced nodes of an operation."""
        edges = self.by_op[op_id]
        targets = {e["target_full_node_id"] for e in edges}
        sources = {e["source_full_node_id"] for e in edges}
        return sources - targets, targets

    def value(self, node_id: str) -> str:
        return self.nodes[node_id]["value"]


def graphs() -> list[Graph]:
    return [Graph(p) for p in sorted(SET.glob("*/*.json"))]


def has_gold(text: str, gold: list[str]) -> bool:
    return any(g.lower() in text.lower() for g in gold)


def message_text(g: Graph, node_id: str) -> str:
    return g.value(node_id).strip("'\"").split(": ", 1)[1]


def test_layout_and_annotation_fields():
    assert {p.name for p in SET.iterdir() if p.is_dir()} == set(SYSTEMS)
    for g in graphs():
        meta = g.raw["metadata"]
        assert meta["memtracebench_graph_filename"] == g.path.name
        assert meta["memtracebench_dataset_source"]
        for key in ("graph_id", "user_id", "project_id", "created_at", "data"):
            assert key in g.raw
        for a in g.annotations:
            assert set(a) == ANNOTATION_KEYS, g.path
            assert a["final_op_id"] in g.ops, (g.path, a)
            for key in ("query_id", "golden_answers_id", "prediction_id"):
                assert a[key] in g.nodes, (g.path, key, a[key])
            assert g.value(a["query_id"]).strip("'\"") == a["query"]
            for ev in a["source_evidence_ids"]:
                assert g.nodes[ev]["category"] == "message"
                assert ev.split("@")[0] in g.nodes[a["query_id"]]["metadata"]["evidence"]


def test_counts_per_system_and_type():
    per_system = Counter()
    per_type = Counter()
    for g in graphs():
        system = g.path.parent.name
        for a in g.annotations:
            per_system[system] += 1
            per_type[a["final_error_type"]] += 1
            assert a["final_error_type"] in APPLICABLE[system]
    assert sum(per_system.values()) >= 40
    assert all(per_system[s] >= 10 for s in SYSTEMS), per_system
    assert all(per_type[t] >= 4 for t in TYPES), per_type
    # every applicable type occurs in every system
    for system in SYSTEMS:
        seen = {
            a["final_error_type"] for g in graphs() if g.path.parent.name == system for a in g.annotations
        }
        assert seen == APPLICABLE[system], (system, seen)


def test_failures_are_exactly_the_labelled_cases_and_correct_answers_remain():
    correct = 0
    for g in graphs():
        judged = {}
        for op_id, op in g.ops.items():
            if op["op_name"] != "llm-judge":
                continue
            assert op["category"] == "evaluation"
            inputs, produced = g.io(op_id)
            query = next(n for n in inputs if g.nodes[n]["class_name"] == "query")
            score = next(n for n in produced if g.nodes[n]["class_name"] == "judge_score")
            judged[query] = g.value(score)
        failed = {q for q, s in judged.items() if s == "0.0"}
        assert failed == {a["query_id"] for a in g.annotations}, g.path
        correct += sum(s == "1.0" for s in judged.values())
    assert correct >= 20


def test_labelled_operation_is_where_the_evidence_was_lost():
    for g in graphs():
        deleted = {
            e["source_full_node_id"] for e in g.edges if g.value(e["target_full_node_id"]) == "'DELETED'"
        }
        for a in g.annotations:
            op = g.ops[a["final_op_id"]]
            gold = a["golden_answers"]
            inputs, produced = g.io(op["op_id"])
            kind = a["final_error_type"]
            where = (g.path.name, a["query"], kind, op["op_name"])
            if kind == "ExtractionError":
                texts = [message_text(g, ev) for ev in a["source_evidence_ids"]]
                assert any(ev in inputs for ev in a["source_evidence_ids"]) or any(
                    t in g.value(n) for n in inputs for t in texts
                ), where
                assert not any(has_gold(g.value(n), gold) for n in produced), where
                assert op["op_name"] in {
                    "memory_system.extract_facts",
                    "memory_system.message_buffer_update",
                    "memory_system.add",
                    "memory_system.memory_update",
                }, where
            elif kind == "UpdateError":
                lost = [
                    (e["source_full_node_id"], e["target_full_node_id"])
                    for e in g.by_op[op["op_id"]]
                    if g.nodes[e["source_full_node_id"]]["category"] == "memory_entry"
                    and g.nodes[e["source_full_node_id"]]["name"] == g.nodes[e["target_full_node_id"]]["name"]
                    and has_gold(g.value(e["source_full_node_id"]), gold)
                    and not has_gold(g.value(e["target_full_node_id"]), gold)
                ]
                assert lost, where
            elif kind == "DeletionError":
                assert any(
                    e["source_full_node_id"] in deleted and has_gold(g.value(e["source_full_node_id"]), gold)
                    for e in g.by_op[op["op_id"]]
                ), where
            elif kind == "RetrievalError":
                assert op["category"] == "retrieval", where
                assert inputs == {a["query_id"]}, where
                assert not any(has_gold(g.value(n), gold) for n in produced), where
                latest: dict[str, dict] = {}
                for n in g.nodes.values():
                    if n["category"] == "memory_entry" and (
                        n["full_name"] not in latest or n["version"] > latest[n["full_name"]]["version"]
                    ):
                        latest[n["full_name"]] = n
                held = [
                    n
                    for n in latest.values()
                    if n["full_node_id"] not in deleted and has_gold(n["value"], gold)
                ]
                assert held, where  # the store held it at question time
            elif kind == "ResponseError":
                assert op["op_name"] == "question-answering", where
                assert a["prediction_id"] in produced, where
                assert any(has_gold(g.value(n), gold) for n in inputs), where
                assert not has_gold(a["prediction"], gold), where


def test_conventions_of_membase_graphs():
    for g in graphs():
        names = Counter(o["op_name"] for o in g.ops.values())
        assert names["llm-judge"] == names["question-answering"] > 0
        assert {s["session_name"] for s in g.raw["data"]["sessions"]} >= {
            "memory_construction",
            "memory_search",
            "memory_evaluation",
        }
        queries = [n for n in g.nodes.values() if n["class_name"] == "query"]
        assert queries and all(
            n["category"] == "message & query" and n["metadata"]["evidence"] for n in queries
        )
        assert all(n["value"][0] in "'\"" for n in queries)  # stored with repr(), quotes included
        # identity by content: a score node is shared by every case with that score
        assert sum(n["class_name"] == "judge_score" for n in g.nodes.values()) <= 2


@pytest.mark.timeout(600)
def test_generation_is_deterministic(tmp_path: Path):
    pytest.importorskip("smartcomment")
    subprocess.run(
        [sys.executable, str(HELDOUT / "generate.py"), "--no-check", "--out", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    for path in sorted(SET.glob("*/*.json")):
        assert (tmp_path / path.parent.name / path.name).read_bytes() == path.read_bytes(), path
