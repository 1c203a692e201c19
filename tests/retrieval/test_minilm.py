"""The local sentence-embedding model: all-MiniLM-L6-v2 in numpy reproduces the published similarities."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memtrace.errors import MemtraceError
from memtrace.retrieval import Embedder
from memtrace.retrieval.minilm import LocalModelError, LocalSentenceEmbedder, packaged_model_dir

pytest.importorskip("tokenizers", reason="memtrace[local] is not installed (tokenizers)")
pytest.importorskip("safetensors", reason="memtrace[local] is not installed (safetensors)")


@pytest.fixture(scope="module")
def embedder() -> LocalSentenceEmbedder:
    try:
        packaged_model_dir()
    except LocalModelError as exc:
        pytest.skip(f"the model package is absent: {exc}")
    return LocalSentenceEmbedder()


def test_reproduces_the_similarities_sentence_transformers_publishes(embedder: LocalSentenceEmbedder) -> None:
    # sentence-transformers' README, all-MiniLM-L6-v2: 0.6660, 0.1046, 0.1411.
    texts = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    vectors = embedder.embed(texts)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] == pytest.approx(0.6660, abs=0.002)
    assert similarity[0, 2] == pytest.approx(0.1046, abs=0.002)
    assert similarity[1, 2] == pytest.approx(0.1411, abs=0.002)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert isinstance(embedder, Embedder)


def test_batching_by_length_keeps_the_order_and_the_vectors(embedder: LocalSentenceEmbedder) -> None:
    texts = [
        "Gina opened an online clothing store after losing her job.",
        "Dance.",
        "Jon says dancing helps him de-stress after a long week at the studio with his students.",
        "",
    ]
    together = LocalSentenceEmbedder(batch_size=3).embed(texts)
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    assert together.shape == (4, 384) and together.dtype == np.float32
    assert np.allclose(together, alone, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_a_folder_without_the_model_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(MemtraceError, match=r"missing tokenizer\.json") as caught:
        LocalSentenceEmbedder(tmp_path)
    assert str(tmp_path) in str(caught.value) and "\n" not in str(caught.value)


def test_flow_can_use_it_as_its_support_scorer(embedder: LocalSentenceEmbedder) -> None:
    from memtrace.attribution.evidence.model_scorers import EmbeddingScorer, make_scorer

    scorer = make_scorer("minilm")
    assert isinstance(scorer, EmbeddingScorer) and isinstance(scorer.embedder, LocalSentenceEmbedder)
    target = scorer.prepare(
        "How does Jon like to destress?", ["by dancing"], [("D1:6", "Jon: Dancing helps me de-stress.")]
    )
    paraphrase = scorer.score(target, "Jon unwinds after work by going dancing at the studio.")
    unrelated = scorer.score(target, "Gina bought a new sewing machine for her clothing store.")
    assert paraphrase > unrelated + 0.2


def test_a_damaged_optional_model_file_is_an_error_not_a_silent_default(
    embedder: LocalSentenceEmbedder, tmp_path: Path
) -> None:
    """A modules.json that cannot be read would silently drop the model's normalisation step."""
    model = packaged_model_dir()
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        (tmp_path / name).symlink_to(model / name)
    (tmp_path / "modules.json").write_text("[{not json")
    with pytest.raises(MemtraceError, match=r"modules\.json: not readable JSON") as caught:
        LocalSentenceEmbedder(tmp_path)
    assert "\n" not in str(caught.value)


def test_damaged_weights_are_a_one_line_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"num_attention_heads": 12, "num_hidden_layers": 6}')
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"\x00\x01")
    with pytest.raises(MemtraceError, match=r"model\.safetensors: unreadable weights") as caught:
        LocalSentenceEmbedder(tmp_path)
    assert "\n" not in str(caught.value)
