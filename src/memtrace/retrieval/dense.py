"""Dense retrieval by cosine similarity, with an offline hashing embedder as the default.

`HashingEmbedder` needs no model and no network, so dense and hybrid retrieval work on any machine
and give the same vectors in every process. It is **lexical, not semantic**: texts are similar when
they share words, word pairs or pieces of words (which catches "hiking"/"hike" or a typo), never
when they merely mean the same thing ("car" and "automobile" share nothing). Plug in a real model
through the `Embedder` protocol (an LLM client's embeddings) for semantic matching.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import threading
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..text import tokenize
from .base import GrowingIndex, Hit, top_hits


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into one vector per text: shape (len(texts), dim)."""

    def embed(self, texts: list[str]) -> np.ndarray: ...


def stable_hash(feature: str) -> int:
    """A 64-bit hash that is the same in every process and on every platform.

    Python's `hash()` of a string is salted per process (PYTHONHASHSEED), which would make the
    vectors of a recorded run impossible to reproduce.
    """
    return int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")


class HashingEmbedder:
    """Deterministic lexical embeddings: hashed word unigrams, word bigrams and character 3-5-grams.

    Each feature is hashed to one of `dim` buckets with a hash-derived sign (so collisions cancel
    out on average instead of adding false similarity); the vector is then L2-normalised. The
    character n-grams of a word are scaled so that together they weigh as much as the word itself.
    A text without any token embeds to the zero vector, similar to nothing.
    """

    def __init__(
        self,
        dim: int = 512,
        *,
        stopwords: bool = True,
        word_weight: float = 1.0,
        bigram_weight: float = 0.5,
        char_weight: float = 1.0,
        char_ngrams: tuple[int, int] = (3, 5),
    ) -> None:
        if dim < 1:
            raise ValueError(f"dim must be positive, got {dim}")
        low, high = char_ngrams
        if not 1 <= low <= high:
            raise ValueError(f"char_ngrams must be (low, high) with 1 <= low <= high, got {char_ngrams}")
        self.dim = dim
        self.stopwords = stopwords
        self.word_weight = word_weight
        self.bigram_weight = bigram_weight
        self.char_weight = char_weight
        self.char_ngrams = char_ngrams
        # Per-instance caches: a conversation reuses a few thousand words, each hashed once.
        self._word = functools.lru_cache(maxsize=1 << 16)(self._word_features)
        self._bigram = functools.lru_cache(maxsize=1 << 16)(self._bigram_feature)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (replay snapshots a system with its indexes): the per-instance caches stay behind."""
        state = dict(self.__dict__)
        state.pop("_word", None)
        state.pop("_bigram", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._word = functools.lru_cache(maxsize=1 << 16)(self._word_features)
        self._bigram = functools.lru_cache(maxsize=1 << 16)(self._bigram_feature)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dim})"

    def _bucket(self, feature: str) -> tuple[int, float]:
        h = stable_hash(feature)
        return h % self.dim, (1.0 if (h >> 63) == 0 else -1.0)

    def _word_features(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        """Buckets and signed weights of a word's own feature and of its character n-grams."""
        buckets = [self._bucket("w:" + word)]
        weights = [self.word_weight]
        padded = f"<{word}>"
        low, high = self.char_ngrams
        grams = [padded[i : i + n] for n in range(low, high + 1) for i in range(len(padded) - n + 1)]
        if grams:
            each = self.char_weight / math.sqrt(len(grams))
            for gram in grams:
                buckets.append(self._bucket("c:" + gram))
                weights.append(each)
        index = np.fromiter((b for b, _ in buckets), dtype=np.int64, count=len(buckets))
        value = np.fromiter((s * w for (_, s), w in zip(buckets, weights, strict=True)), dtype=np.float32)
        return index, value

    def _bigram_feature(self, pair: str) -> tuple[int, float]:
        bucket, sign = self._bucket("b:" + pair)
        return bucket, sign * self.bigram_weight

    def _tokens(self, text: str) -> list[str]:
        tokens = tokenize(text, stopwords=self.stopwords)
        return tokens if tokens or not self.stopwords else tokenize(text)

    def embed_one(self, text: str) -> np.ndarray:
        """The L2-normalised float32 vector of one text."""
        vector = np.zeros(self.dim, dtype=np.float32)
        tokens = self._tokens(text)
        for token in tokens:
            index, value = self._word(token)
            np.add.at(vector, index, value)
        for first, second in itertools.pairwise(tokens):
            bucket, value = self._bigram(f"{first} {second}")
            vector[bucket] += value
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            vector /= norm
        return vector

    def embed(self, texts: list[str]) -> np.ndarray:
        """One row per text, shape (len(texts), dim), float32, unit length (zero for empty texts)."""
        matrix = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            matrix[row] = self.embed_one(text)
        return matrix


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32, so a dot product is the cosine."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"an embedder must return a 2-D array, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class DenseIndex(GrowingIndex):
    """Cosine-similarity search over embedded texts; `add` embeds at once and grows a buffer in place.

    Vectors are normalised here too, so embedders that return raw vectors still rank by cosine.
    Search is an exact matrix-vector product: fine up to ~10^5 documents. Hits scoring at or below
    `min_score` are dropped; with the 512-bucket hashing embedder, scores below ~0.05 are mostly
    hash-collision noise, so raise it when precision matters more than recall.
    """

    def __init__(
        self, embedder: Embedder | None = None, *, texts: Sequence[str] = (), min_score: float = 0.0
    ) -> None:
        if embedder is not None and not callable(getattr(embedder, "embed", None)):
            raise TypeError(f"DenseIndex needs an Embedder (.embed(texts)), got {type(embedder).__name__}")
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self._documents: list[str] = []
        self._vectors: np.ndarray | None = None  # capacity grows by doubling; rows [:len] are used
        if min_score < 0:
            raise ValueError(f"min_score must be >= 0 (non-positive scores are never hits), got {min_score}")
        self.min_score = min_score
        self._lock = threading.Lock()
        self.add(texts)

    def add(self, texts: Sequence[str]) -> None:
        """Embed and append texts; they get the next positions."""
        if isinstance(texts, str):
            raise TypeError("DenseIndex.add takes a list of texts, not a single string")
        if not texts:
            return
        rows = _unit_rows(self.embedder.embed(list(texts)))
        if rows.shape[0] != len(texts):
            raise ValueError(f"the embedder returned {rows.shape[0]} vectors for {len(texts)} texts")
        with self._lock:
            n = len(self._documents)
            if self._vectors is None:
                self._vectors = np.zeros((max(16, len(texts)), rows.shape[1]), dtype=np.float32)
            elif rows.shape[1] != self._vectors.shape[1]:
                raise ValueError(f"embedding size changed from {self._vectors.shape[1]} to {rows.shape[1]}")
            if n + len(texts) > self._vectors.shape[0]:
                grown = np.zeros((max(2 * self._vectors.shape[0], n + len(texts)), rows.shape[1]), np.float32)
                grown[:n] = self._vectors[:n]
                self._vectors = grown
            self._vectors[n : n + len(texts)] = rows
            self._documents.extend(texts)

    def scores(self, query: str) -> np.ndarray:
        """The cosine similarity of every document to the query."""
        with self._lock:
            n = len(self._documents)
            vectors = self._vectors
        if n == 0 or vectors is None:
            return np.zeros(0, dtype=np.float32)
        q = _unit_rows(self.embedder.embed([query]))[0]
        return vectors[:n] @ q

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Up to `k` documents scoring above `min_score`, best first, ties by position."""
        scores = self.scores(query)
        if self.min_score > 0:
            scores = np.where(scores > self.min_score, scores, 0.0)
        return top_hits(scores, k)
