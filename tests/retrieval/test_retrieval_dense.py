"""The hashing embedder (deterministic, lexical) and cosine search with any embedder."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from memtrace.retrieval import DenseIndex, Embedder, HashingEmbedder, Hit, Index, stable_hash

TEXTS = ["Caroline moved to Boston", "我喜欢北京", "", "Melanie went hiking with her kids"]


def test_vectors_are_unit_float32_rows_and_empty_text_is_zero() -> None:
    vectors = HashingEmbedder(dim=64).embed(TEXTS)
    assert vectors.shape == (4, 64) and vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    assert np.allclose(norms[[0, 1, 3]], 1.0, atol=1e-6)
    assert norms[2] == 0.0
    assert HashingEmbedder().embed([]).shape == (0, 512)


def test_stable_hash_is_pinned() -> None:
    # Recorded runs must embed the same way forever: a change here changes every stored vector.
    assert stable_hash("w:boston") == 12687533481342075632
    assert stable_hash("") == 13020603013274838756


def test_embeddings_are_identical_in_another_process_with_another_hash_seed() -> None:
    code = (
        "import sys; from memtrace.retrieval import HashingEmbedder; "
        f"sys.stdout.write(HashingEmbedder().embed({TEXTS!r}).tobytes().hex())"
    )
    here = HashingEmbedder().embed(TEXTS).tobytes().hex()
    for seed in ("1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout == here


def test_similarity_is_lexical_with_morphology_but_not_semantic() -> None:
    embed = HashingEmbedder().embed
    hike, hiking, banker, car, automobile = embed(["hike", "hiking trip", "banker", "car", "automobile"])
    assert float(hike @ hiking) > 0.05  # shared character n-grams only
    assert float(hike @ hiking) > 2 * abs(float(hike @ banker))
    assert abs(float(car @ automobile)) < 0.1  # same meaning, no shared letters: not similar


def test_stopwords_are_dropped_unless_nothing_else_is_left() -> None:
    embedder = HashingEmbedder()
    a, b = embedder.embed(["the trip to Boston", "trip Boston"])
    assert np.array_equal(a, b)
    assert np.linalg.norm(embedder.embed(["to be or not"])[0]) == pytest.approx(1.0)


def test_invalid_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="dim"):
        HashingEmbedder(dim=0)
    with pytest.raises(ValueError, match="char_ngrams"):
        HashingEmbedder(char_ngrams=(4, 3))


def test_dense_index_ranks_by_cosine_and_grows_incrementally() -> None:
    index = DenseIndex(texts=["Caroline moved to Boston", "Melanie paints sunsets"])
    assert index.search("Boston move", k=1)[0].index == 0
    for i in range(40):  # past the initial buffer capacity
        index.add([f"filler document number {i}"])
    index.add(["Melanie hiked with her kids"])
    assert len(index) == 43
    assert index.search("hiking kids", k=1)[0].index == 42
    assert index.documents[0] == "Caroline moved to Boston"


def test_dense_edge_cases() -> None:
    assert DenseIndex().search("anything", k=3) == []
    index = DenseIndex(texts=["alpha beta", "gamma delta"])
    assert index.search("", k=3) == []
    assert index.search("alpha", k=0) == []
    assert len(index.search("alpha beta gamma", k=100)) <= 2
    with pytest.raises(TypeError, match="list of texts"):
        index.add("alpha")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Embedder"):
        DenseIndex(["not", "an", "embedder"])  # type: ignore[arg-type]


class FixedEmbedderDouble:
    """Test double: raw (unnormalised) vectors looked up by text, to check cosine ranking exactly."""

    def __init__(self, vectors: dict[str, list[float]], dim: int = 3) -> None:
        self.vectors = vectors
        self.dim = dim

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([self.vectors.get(t, [0.0] * self.dim) for t in texts], dtype=np.float64)


def test_a_plugged_in_embedder_is_ranked_by_cosine_not_dot_product() -> None:
    embedder = FixedEmbedderDouble(
        {"q": [1, 0, 0], "long": [10, 10, 0], "aligned": [0.5, 0.01, 0], "off": [0, 0, 1]}
    )
    assert isinstance(embedder, Embedder)
    index = DenseIndex(embedder, texts=["long", "aligned", "off"])
    hits = index.search("q", k=3)
    assert [h.index for h in hits] == [1, 0]  # "off" is orthogonal: score 0, not a hit
    assert hits[0].score == pytest.approx(0.5 / np.hypot(0.5, 0.01), abs=1e-6)


def test_embedders_that_change_size_or_count_are_rejected() -> None:
    index = DenseIndex(FixedEmbedderDouble({"a": [1, 0, 0]}), texts=["a"])
    index.embedder = FixedEmbedderDouble({}, dim=4)
    with pytest.raises(ValueError, match="embedding size changed from 3 to 4"):
        index.add(["b"])
    assert len(index) == 1

    class CountingWrong:
        def embed(self, texts: list[str]) -> np.ndarray:
            return np.zeros((len(texts) + 1, 3))

    with pytest.raises(ValueError, match="returned 2 vectors for 1 texts"):
        DenseIndex(CountingWrong(), texts=["a"])


def test_min_score_drops_weak_matches() -> None:
    embedder = FixedEmbedderDouble({"q": [1, 0, 0], "strong": [1, 0.1, 0], "weak": [0.1, 1, 0]})
    assert [h.index for h in DenseIndex(embedder, texts=["strong", "weak"]).search("q")] == [0, 1]
    strict = DenseIndex(embedder, texts=["strong", "weak"], min_score=0.5)
    assert [h.index for h in strict.search("q")] == [0]
    with pytest.raises(ValueError, match="min_score"):
        DenseIndex(min_score=-1)


def test_dense_index_satisfies_the_index_protocol_and_returns_hits() -> None:
    index = DenseIndex(texts=["Boston"])
    assert isinstance(index, Index)
    assert isinstance(index.search("Boston")[0], Hit)
