"""Evidence location: gold resolution, BM25 / dense / hybrid pseudo evidence, query modes, caching."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import memtrace as mt
from conftest import OpenWorkspace
from memtrace.attribution.evidence.locate import (
    EvidenceLocator,
    build_query,
    is_message_category,
    locate_evidence,
    locator_for,
    message_text,
    message_versions,
)
from memtrace.datasets import sample_conversation
from memtrace.graph import Case
from memtrace.retrieval import HashingEmbedder
from memtrace.systems import run_conversation
from memtrace.systems.rag import RAGSystem

MESSAGES = {
    "D1:1": "Alice: I adopted a beagle puppy and named him Rex.",
    "D1:2": "Bob: I bought a shiny red bicycle for commuting.",
    "D1:3": "Alice: We moved to Lisbon in March, the flat is lovely.",
    "D1:4": "Bob: It rained all weekend so we stayed inside.",
    "D2:1": "Alice: Talking about trip plans with my sister, Alice stuff as usual.",
    "D2:2": "Bob: Osaka has the best street food I have ever eaten.",
    "D2:3": "Bob: Finally we went to Kyoto and saw the temples.",
}


def record(workspace: Path, cases: list[dict], *, extra: bool = True) -> str:
    """A run whose messages are MESSAGES (D1:3 rewritten once), plus look-alike non-message variables."""
    with mt.run(workspace, name="toy", system="toy") as run:
        with mt.op("load_session", category="construction") as op:
            for name, text in MESSAGES.items():
                op.output(
                    name, text.replace("Lisbon", "Porto") if name == "D1:3" else text, category="message"
                )
        with mt.op("fix_typo", category="construction") as op:
            op.output("D1:3", MESSAGES["D1:3"], category="message")  # D1:3@2, the latest version
        if extra:
            with mt.op("buffer", category="construction") as op:
                op.output("message_buffer", ["Kyoto Lisbon Rex"], category="message_buffer")
                op.output("question", "Where is Kyoto?", category="message & query")
                op.output("q2", "Where is Kyoto?", category="query")
        for spec in cases:
            case = run.case(
                spec["question"], gold=spec.get("gold"), evidence=spec.get("evidence"), id=spec["id"]
            )
            if "prediction" in spec:
                case.predict(spec["prediction"])
        return run.id


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[tuple[mt.Workspace, str]]:
    cases = [
        {"id": "dog", "question": "What is the name of Alice's dog?", "gold": ["Rex"], "evidence": ["D1:1"]},
        {"id": "none", "question": "Where did Alice move?", "gold": ["Lisbon"]},
    ]
    run_id = record(tmp_path / "ws", cases)
    with mt.open(tmp_path / "ws") as ws:
        yield ws, run_id


def case_of(ws: mt.Workspace, run_id: str, case_id: str) -> Case:
    return next(c for c in ws.cases(run_id) if c.id == case_id)


def test_message_categories() -> None:
    assert is_message_category("message")
    assert is_message_category("Message")
    assert not is_message_category("message & query")  # MemTraceBench queries
    assert not is_message_category("message_buffer")
    assert not is_message_category("query") and not is_message_category(None)


def test_message_versions_latest_per_message_in_seq_order(toy) -> None:
    ws, run_id = toy
    for graph in (ws.graph(run_id), ws.view(run_id)):
        versions = message_versions(graph)
        assert [v.name for v in versions] == [n for n in MESSAGES if n != "D1:3"] + ["D1:3"]
        assert [v.seq for v in versions] == sorted(v.seq for v in versions)
        assert next(v for v in versions if v.name == "D1:3").id == "D1:3@2"
        assert all(v.category == "message" for v in versions)


def test_message_text_unquotes_imported_values() -> None:
    assert message_text("'Alice: hi'") == "Alice: hi"
    assert message_text('"it\'s"') == "it's"
    assert message_text("'unbalanced") == "'unbalanced"
    # a dict is read by its fields, never as its JSON (tests/attribution/test_attr_messages.py); one
    # with no text field reads as its values, not its keys
    assert message_text({"a": 1}) == "1"
    assert message_text(None) == ""


def test_gold_resolution_by_name_and_full_id_reports_unresolved(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    evidence = ["D1:3", "D1:3@1", "D1:1@1", "D9:9", "D1:3", "question", "D1:2@7"]
    run_id = record(tmp_path, [{"id": "c", "question": "q?", "gold": ["x"], "evidence": evidence}])
    ws = open_ws(tmp_path)
    ev = locate_evidence(ws.view(run_id), case_of(ws, run_id, "c"))
    assert ev.source == "gold"
    assert ev.ids == ["D1:3@2", "D1:3@1", "D1:1@1"]  # a bare name is its latest version; full ids stay
    assert ev.names == ["D1:3", "D1:3", "D1:1"]
    assert ev.texts[0] == MESSAGES["D1:3"] and "Porto" in ev.texts[1]
    assert ev.scores == [1.0, 1.0, 1.0]
    assert ev.unresolved == ["D9:9", "question", "D1:2@7"]  # a query is not a message
    assert [v.id for v in ev.versions] == ev.ids
    assert ev.problem is None
    assert "versions" not in ev.to_dict() and ev.to_dict()["unresolved"] == ev.unresolved


def test_auto_falls_back_to_retrieval_and_still_reports_unresolved(
    tmp_path: Path, open_ws: OpenWorkspace
) -> None:
    spec = {"id": "c", "question": "What is Alice's dog called?", "gold": ["Rex"], "evidence": ["D7:7"]}
    run_id = record(tmp_path, [spec])
    ws = open_ws(tmp_path)
    graph = ws.view(run_id)
    case = case_of(ws, run_id, "c")
    ev = locate_evidence(graph, case)
    assert ev.source == "bm25" and ev.ids[0] == "D1:1@1"
    assert ev.unresolved == ["D7:7"]
    gold = locate_evidence(graph, case, method="gold")
    assert gold.ids == [] and gold.unresolved == ["D7:7"] and "D7:7" in (gold.problem or "")


def test_gold_method_without_evidence_is_empty_with_a_reason(toy) -> None:
    ws, run_id = toy
    ev = locate_evidence(ws.view(run_id), case_of(ws, run_id, "none"), method="gold")
    assert ev.ids == [] and ev.unresolved == [] and ev.problem == "the case has no gold evidence ids"


@pytest.mark.parametrize("method", ["bm25", "dense", "hybrid"])
def test_each_retriever_finds_the_obvious_evidence(toy, method: str) -> None:
    ws, run_id = toy
    graph = ws.graph(run_id)
    ev = locate_evidence(graph, case_of(ws, run_id, "none"), method=method, k=3)
    assert ev.source == method
    assert ev.ids[0] == "D1:3@2" and "Lisbon" in ev.texts[0]  # the latest version is what is searched
    assert len(ev) <= 3 and ev.scores == sorted(ev.scores, reverse=True)
    assert ev.query == "Where did Alice move?\nLisbon" and ev.query_mode == "question+answer"
    dog = locate_evidence(graph, case_of(ws, run_id, "dog"), method=method, k=1)
    assert dog.ids == ["D1:1@1"]  # gold exists but retrieval was asked for
    assert all(not i.startswith(("question", "q2", "message_buffer")) for i in ev.ids)


def test_hybrid_fuses_by_rrf_with_double_candidates(toy) -> None:
    ws, run_id = toy
    locator = EvidenceLocator(ws.view(run_id))
    hybrid = locator.index("hybrid")
    assert hybrid.bm25 is locator.index("bm25") and hybrid.dense is locator.index("dense")
    assert hybrid.candidates == 2 and hybrid.rrf_k == 60
    hits = locator.retrieve("Alice Lisbon", "hybrid", 2)
    assert hits[0][0].name == "D1:3" and hits[0][1] == pytest.approx(2 / 61)  # rank 1 in both


def test_query_modes_change_what_is_found(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    spec = {
        "id": "trip",
        "question": "Where did Alice travel on her trip?",
        "gold": ["Kyoto"],
        "prediction": "Osaka",
        "evidence": [],
    }
    run_id = record(tmp_path, [spec])
    ws = open_ws(tmp_path)
    case = case_of(ws, run_id, "trip")
    graph = ws.view(run_id)
    found = {
        mode: locate_evidence(graph, case, method="bm25", query_mode=mode, k=8).names
        for mode in ("question", "question+answer", "question+prediction")
    }
    assert found["question"][0] == "D2:1" and "D2:3" not in found["question"]  # shares no word
    assert "D2:3" in found["question+answer"] and "D2:2" not in found["question+answer"]
    assert "D2:2" in found["question+prediction"] and "D2:3" not in found["question+prediction"]
    assert build_query(case, "question+prediction") == f"{spec['question']}\nOsaka"
    assert build_query(case, "question") == spec["question"]
    with pytest.raises(ValueError, match="query mode"):
        build_query(case, "answer")


class CountingEmbedder:
    """A hashing embedder that counts the texts it embedded."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(dim=256)
        self.texts = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.embed(texts)


def test_indexes_are_built_once_per_run_and_embedder(toy) -> None:
    ws, run_id = toy
    graph = ws.view(run_id)
    embedder = CountingEmbedder()
    case = case_of(ws, run_id, "none")
    for _ in range(3):
        ev = locate_evidence(graph, case, method="dense", embedder=embedder)
    assert ev.ids[0] == "D1:3@2"
    assert embedder.texts == len(MESSAGES) + 3  # the messages once, then one query per call
    assert locator_for(graph, embedder) is locator_for(graph, embedder)
    assert locator_for(graph) is not locator_for(graph, embedder)
    auto = locate_evidence(graph, case, embedder=embedder)
    assert auto.source == "hybrid"  # with a chosen embedder, auto retrieval fuses both
    assert locate_evidence(graph, case).source == "bm25"  # offline default
    locator = locator_for(graph)
    assert locator.index("bm25") is locator.index("bm25")


def test_bad_arguments_are_refused(toy) -> None:
    ws, run_id = toy
    graph = ws.view(run_id)
    case = case_of(ws, run_id, "dog")
    with pytest.raises(ValueError, match="method"):
        locate_evidence(graph, case, method="grep")
    with pytest.raises(ValueError, match="k must be"):
        locate_evidence(graph, case, method="bm25", k=0)
    other = Case(run_id="another-run", id="x", question="?")
    with pytest.raises(ValueError, match="belongs to run"):
        locate_evidence(graph, other)


def test_rag_run_on_the_sample_resolves_every_gold_id(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    result = run_conversation(RAGSystem(), sample_conversation(0), tmp_path)
    ws = open_ws(tmp_path)
    graph = ws.view(result.run_id)
    cases = [c for c in ws.cases(result.run_id) if c.evidence]
    assert cases
    found = total = 0
    for case in cases:
        gold = locate_evidence(graph, case)
        assert gold.source == "gold" and gold.unresolved == []
        assert len(gold.ids) == len(set(case.evidence))
        hits = locate_evidence(graph, case, method="bm25")
        found += len(set(gold.names) & set(hits.names))
        total += len(gold.names)
    assert found / total >= 0.5


def test_a_graph_is_freed_with_its_cached_locator(tmp_path: Path, open_ws: OpenWorkspace) -> None:
    """Locators live on their graph: attributing thousands of runs must not keep every view alive."""
    import gc
    import weakref

    from memtrace.attribution.evidence.locate import locate_evidence, locator_for

    run = run_conversation(RAGSystem(), sample_conversation(0), tmp_path)
    ws = open_ws(tmp_path)
    view = ws.view(run.run_id)
    case = next(c for c in ws.cases(run.run_id) if c.evidence)
    assert locate_evidence(view, case, method="bm25").versions
    assert locator_for(view) is locator_for(view)  # reused while the graph lives
    alive = weakref.ref(view)
    del view
    gc.collect()
    assert alive() is None
