"""The evidence locator's settings, apart from the locator: the command line builds its options from
them without loading the retrievers (numpy, bm25s)."""

from __future__ import annotations

from typing import Literal

QueryMode = Literal["question+answer", "question", "question+prediction"]

#: Retrieval methods for pseudo evidence (what `method` may be besides "auto" and "gold").
RETRIEVERS = ("bm25", "dense", "hybrid")
METHODS = ("auto", "gold", *RETRIEVERS)
QUERY_MODES = ("question+answer", "question", "question+prediction")
#: The query modes `bench evidence` compares by default.
DEFAULT_QUERY_MODES = ("question+answer", "question")
#: How many pseudo-evidence messages a retriever returns by default.
DEFAULT_K = 8
