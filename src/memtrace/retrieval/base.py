"""What every index returns and promises, so memory systems can swap BM25, dense and hybrid freely."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the position of the document in its index and its score (higher is better)."""

    index: int
    score: float


@runtime_checkable
class Index(Protocol):
    """A growing collection of texts searchable by a query; documents keep the position they were added at."""

    def add(self, texts: Sequence[str]) -> None: ...

    def search(self, query: str, k: int = 10) -> list[Hit]: ...

    def __len__(self) -> int: ...


def top_hits(scores: np.ndarray, k: int) -> list[Hit]:
    """The best `k` positive scores as hits, by score descending and then by index ascending.

    Documents scoring zero or less share nothing with the query, so they are never returned:
    a caller asking for 10 hits from a corpus with 3 matching documents gets 3.
    """
    if k <= 0 or scores.size == 0:
        return []
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0:
        return []
    if positive.size > k:
        # Keep every document tied with the k-th score so the index tie-break below stays exact.
        kth = np.partition(scores[positive], positive.size - k)[positive.size - k]
        positive = positive[scores[positive] >= kth]
    order = np.lexsort((positive, -scores[positive].astype(np.float64)))
    return [Hit(int(positive[i]), float(scores[positive[i]])) for i in order[:k]]


class GrowingIndex:
    """What BM25 and dense indexes share: documents kept in order, a lock, and pickling for replay.

    Subclasses set `self._documents` and `self._lock` in `__init__`.
    """

    _documents: list[str]
    _lock: threading.Lock

    def __getstate__(self) -> dict[str, Any]:
        """Picklable for replay snapshots; the lock is per process and made anew."""
        state = dict(self.__dict__)
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def documents(self) -> list[str]:
        """The indexed texts in the order they were added (a copy)."""
        return list(self._documents)

    def __len__(self) -> int:
        return len(self._documents)
