"""Hybrid retrieval: BM25 and dense rankings fused by reciprocal rank (RRF).

RRF needs no score calibration between retrievers, which is why the paper's code (and EverMemOS)
use it: each retriever returns `limit * 2` candidates, every candidate scores
`sum(1 / (k + rank))` over the rankings it appears in (rank counted from 1, k = 60), and the best
`limit` are kept. Both the candidate multiplier and k are settings here.

Fusion pays off with a semantic embedder. With the default lexical hashing embedder it adds little
to BM25: on LoCoMo evidence location (question + answer, recall@8) BM25 alone scores 0.71, the
hashing embedder 0.54 and their fusion 0.65, which is why the offline default is BM25.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .base import Hit
from .bm25 import BM25Index
from .dense import DenseIndex, Embedder

DEFAULT_RRF_K = 60


def rrf_fuse(rankings: Iterable[Sequence[int]], k: int = DEFAULT_RRF_K) -> list[tuple[int, float]]:
    """Fuse rankings (lists of document ids, best first) into (id, score), best first, ties by id.

    An id repeated inside one ranking counts at its best rank only.

    >>> rrf_fuse([[1, 2], [2]], k=1)
    [(2, 0.8333333333333333), (1, 0.5)]
    """
    if k < 0:
        raise ValueError(f"the RRF constant k must be >= 0, got {k}")
    fused: dict[int, float] = {}
    for ranking in rankings:
        seen: set[int] = set()
        for rank, doc in enumerate(ranking, start=1):
            if doc in seen:
                continue
            seen.add(doc)
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


class HybridIndex:
    """BM25 and dense search over the same documents, fused by RRF.

    `candidates` is how many results each retriever contributes per requested hit (2 in the paper's
    code). Hit scores are RRF scores, comparable only within one result list.
    """

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        texts: Sequence[str] = (),
        candidates: int = 2,
        rrf_k: int = DEFAULT_RRF_K,
        bm25: BM25Index | None = None,
        dense: DenseIndex | None = None,
    ) -> None:
        if candidates < 1:
            raise ValueError(f"candidates must be >= 1, got {candidates}")
        self.bm25 = bm25 if bm25 is not None else BM25Index()
        self.dense = dense if dense is not None else DenseIndex(embedder)
        if len(self.bm25) != len(self.dense):
            raise ValueError("the BM25 and dense indexes must hold the same documents")
        self.candidates = candidates
        self.rrf_k = rrf_k
        self.add(texts)

    @property
    def documents(self) -> list[str]:
        return self.bm25.documents

    def __len__(self) -> int:
        return len(self.bm25)

    def add(self, texts: Sequence[str]) -> None:
        """Append documents to both indexes (BM25 rebuilds on the next search, dense embeds now)."""
        if isinstance(texts, str):
            raise TypeError("HybridIndex.add takes a list of texts, not a single string")
        self.bm25.add(texts)
        self.dense.add(texts)

    def fit(self) -> None:
        """Build the lexical model now (the dense side needs no fitting)."""
        self.bm25.fit()

    def rankings(self, query: str, k: int) -> tuple[list[Hit], list[Hit]]:
        """The BM25 and dense candidate lists that `search` fuses (useful to explain a result)."""
        depth = k * self.candidates
        return self.bm25.search(query, depth), self.dense.search(query, depth)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Up to `k` documents found by either retriever, best fused rank first."""
        if k <= 0:
            return []
        lexical, dense = self.rankings(query, k)
        fused = rrf_fuse([[h.index for h in lexical], [h.index for h in dense]], k=self.rrf_k)
        return [Hit(index, score) for index, score in fused[:k]]
