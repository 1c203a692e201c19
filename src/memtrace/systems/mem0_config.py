"""Mem0's tunables: its prompts and settings, each with the grid `memtrace optimize` searches.

Apart from the system so that the decision rules (mem0_decisions.py) read the settings without importing it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from .base import TOP_K_GRID, SystemConfig
from .mem0_prompts import FACT_EXTRACTION_PROMPT, UPDATE_PROMPT
from .tunables import Grid


class Mem0Config(SystemConfig):
    fact_extraction_prompt: str = FACT_EXTRACTION_PROMPT
    update_prompt: str = UPDATE_PROMPT
    #: Messages per extraction call: 2 is one exchange (a message and its reply).
    batch_size: Annotated[int, Grid(1, 2, 3, 4, 6)] = 2
    #: Old memories the update step compares each new fact with.
    update_search_k: Annotated[int, Grid(3, 5, 8, 10, 15)] = 5
    #: Construction-time search: token overlap, or `self.embedder` cosine (an LLM client's embeddings).
    update_search: Annotated[Literal["lexical", "dense"], Grid("lexical", "dense")] = "lexical"
    #: Offline: a fact this similar (Dice of key words) to a memory is a duplicate (NONE).
    duplicate_threshold: Annotated[float, Grid(0.6, 0.7, 0.8, 0.85, 0.9, 0.95, reads="offline")] = 0.8
    #: Offline: a fact this similar to a memory of the same speaker sharing 2+ key words UPDATEs it.
    update_threshold: Annotated[float, Grid(0.3, 0.4, 0.5, 0.6, 0.7, 0.8, reads="offline")] = 0.5
    #: Offline: an UPDATE merges the fact into the memory as a new line, keeping the newest lines.
    merge_lines: Annotated[int, Grid(1, 2, 3, 4, 5, 6, reads="offline")] = 3
    #: Memories handed to the answer step. Offline accuracy on LoCoMo dev is flat in k (0.186 at 3,
    #: 0.179 at 10, 0.177 at 30; the sample is unchanged from 3 to 30) while the share of questions
    #: whose evidence reaches the context grows (0.62 at 3, 0.75 at 10, 0.80 at 20): 10 serves an
    #: LLM answerer without flooding it.
    top_k: Annotated[int, TOP_K_GRID] = 10
    #: Question-time retrieval; BM25 is the offline choice (the hashing embedder only adds noise).
    search_method: Annotated[Literal["bm25", "hybrid"], Grid("bm25", "hybrid")] = "bm25"
