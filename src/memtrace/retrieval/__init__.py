"""Retrieval services for memory systems and evidence location: BM25, dense, hybrid (RRF).

Everything runs offline: BM25 uses `bm25s` over Unicode-aware tokens, dense search defaults to a
deterministic lexical hashing embedder, and any `Embedder` (say, an LLM client's embeddings) can be
plugged in. All indexes grow with `add` and keep documents at the position they were added.

    from memtrace.retrieval import HybridIndex
    index = HybridIndex(texts=["Caroline moved to Boston", "Melanie paints"])
    index.search("where does Caroline live", k=1)   # [Hit(index=0, score=...)]
"""

from ..text import ENGLISH_STOPWORDS, porter_stem, split_cjk, tokenize
from .base import Hit, Index, top_hits
from .bm25 import BM25Index
from .dense import DenseIndex, Embedder, HashingEmbedder, stable_hash
from .hybrid import DEFAULT_RRF_K, HybridIndex, rrf_fuse

__all__ = [
    "DEFAULT_RRF_K",
    "ENGLISH_STOPWORDS",
    "BM25Index",
    "DenseIndex",
    "Embedder",
    "HashingEmbedder",
    "Hit",
    "HybridIndex",
    "Index",
    "porter_stem",
    "rrf_fuse",
    "split_cjk",
    "stable_hash",
    "tokenize",
    "top_hits",
]
