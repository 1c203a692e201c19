"""Reciprocal-rank fusion and the hybrid index that fuses BM25 with dense search."""

from __future__ import annotations

import numpy as np
import pytest

from memtrace.retrieval import BM25Index, DenseIndex, HashingEmbedder, Hit, HybridIndex, Index, rrf_fuse


def test_rrf_matches_a_hand_computed_example() -> None:
    # doc 1: 1/(60+2) + 1/(60+1); doc 3: 1/61; doc 4: 1/62; doc 2: 1/63
    fused = rrf_fuse([[3, 1, 2], [1, 4]])
    assert [doc for doc, _ in fused] == [1, 3, 4, 2]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    assert dict(fused) == pytest.approx({1: 1 / 62 + 1 / 61, 3: 1 / 61, 4: 1 / 62, 2: 1 / 63})


def test_rrf_constant_ties_duplicates_and_empty_input() -> None:
    assert rrf_fuse([[1, 2], [2, 1]], k=0) == [(1, 1.5), (2, 1.5)]  # tie: lower id first
    assert rrf_fuse([[5, 5, 6]], k=0) == [(5, 1.0), (6, 1 / 3)]  # a repeat counts once, ranks stay
    assert rrf_fuse([]) == [] and rrf_fuse([[], []]) == []
    with pytest.raises(ValueError, match="k must be"):
        rrf_fuse([[1]], k=-1)


class LookupEmbedderDouble:
    """Test double standing in for a semantic model: fixed vectors per text (zero when unknown)."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([self.vectors.get(t, [0.0, 0.0, 0.0]) for t in texts], dtype=np.float32)


DOCS = [
    "Caroline researched adoption agencies",  # relevant: lexical match
    "Caroline wants to build a family by fostering children",  # relevant: paraphrase
    "Travel agencies booked the flight",  # lexical distractor
    "Melanie painted a lake at sunrise",  # "semantic" distractor
]
QUERY = "adoption agencies for Caroline"
RELEVANT = {0, 1}


def _recall_at_2(index: Index) -> float:
    return len({h.index for h in index.search(QUERY, k=2)} & RELEVANT) / len(RELEVANT)


def test_hybrid_finds_what_either_retriever_alone_misses() -> None:
    # Dense ranking by construction: paraphrase first, the painting second, the lexical match third.
    embedder = LookupEmbedderDouble(
        {QUERY: [1, 0, 0], DOCS[1]: [0.9, 0.1, 0], DOCS[3]: [0.6, 0.8, 0], DOCS[0]: [0.5, 0, 0.9]}
    )
    bm25, dense = BM25Index(DOCS), DenseIndex(embedder, texts=DOCS)
    assert [h.index for h in bm25.search(QUERY, k=4)] == [0, 2, 1]
    assert [h.index for h in dense.search(QUERY, k=4)] == [1, 3, 0]
    hybrid = HybridIndex(embedder, texts=DOCS)
    recalls = {name: _recall_at_2(ix) for name, ix in (("bm25", bm25), ("dense", dense), ("hybrid", hybrid))}
    assert recalls == {"bm25": 0.5, "dense": 0.5, "hybrid": 1.0}
    top = hybrid.search(QUERY, k=2)
    assert [h.index for h in top] == [0, 1]  # equal RRF score (ranks 1+3 and 3+1): tie by index
    assert top[0].score == pytest.approx(1 / 61 + 1 / 63)


def test_hybrid_keeps_the_dense_order_when_bm25_finds_nothing() -> None:
    docs = ["We camped in Yosemite.", "Melanie loves to hike.", "Caroline adopted a puppy."]
    hybrid = HybridIndex(texts=docs)
    assert hybrid.bm25.search("hikers", k=4) == []
    fused, dense = hybrid.search("hikers", k=2), hybrid.dense.search("hikers", k=2)
    assert [h.index for h in fused] == [h.index for h in dense] and len(fused) == 2


def test_candidates_setting_controls_each_retrievers_depth() -> None:
    docs = [f"note {i} about boston" for i in range(10)]
    hybrid = HybridIndex(texts=docs, candidates=3)
    lexical, dense = hybrid.rankings("boston", k=2)
    assert len(lexical) == 6 and len(dense) == 6
    assert len(hybrid.search("boston", k=2)) == 2
    with pytest.raises(ValueError, match="candidates"):
        HybridIndex(candidates=0)


def test_hybrid_edge_cases_and_incremental_adds() -> None:
    hybrid = HybridIndex(HashingEmbedder(dim=128))
    assert hybrid.search("anything") == [] and len(hybrid) == 0
    hybrid.add(["Caroline moved to Boston"])
    hybrid.add(["Melanie paints sunsets", "Boston marathon training"])
    assert len(hybrid) == 3 and hybrid.documents[2] == "Boston marathon training"
    hits = hybrid.search("Boston", k=10)
    assert {h.index for h in hits} >= {0, 2} and all(isinstance(h, Hit) for h in hits)
    assert hybrid.search("", k=3) == [] and hybrid.search("Boston", k=0) == []
    with pytest.raises(TypeError, match="list of texts"):
        hybrid.add("Boston")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same documents"):
        HybridIndex(bm25=BM25Index(["a"]), dense=DenseIndex())
    assert isinstance(hybrid, Index)


def test_rrf_constant_is_configurable() -> None:
    embedder = LookupEmbedderDouble({QUERY: [1, 0, 0], DOCS[1]: [1, 0, 0]})
    # BM25 ranks [0, 2, 1]; dense finds only doc 1. With k=0: doc 1 = 1/3 + 1/1, doc 0 = 1/1, doc 2 = 1/2.
    hits = HybridIndex(embedder, texts=DOCS, rrf_k=0).search(QUERY, k=3)
    assert [h.index for h in hits] == [1, 0, 2]
    assert [h.score for h in hits] == pytest.approx([4 / 3, 1.0, 0.5])
