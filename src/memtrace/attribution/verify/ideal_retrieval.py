"""What an ideal retrieval returns: the memories the answer needs first, and as many items as the
real one returned, keeping the items of the answer it did find.

A repair that ranks the evidence first must make room. Dropping the last items would drop an item of
the answer the real retrieval found (a partial carrier's held item), and the repair would then fail
for a reason of its own; so copies of the added memories go first, then items holding nothing of the
answer, last first, and only then the others.
"""

from __future__ import annotations

from typing import Any

from ...graph.values import value_text
from .items import ItemCheck


def ideal_context(items: list[Any], memories: list[Any], check: ItemCheck) -> list[Any]:
    """The `memories` (context items already) first, then the `items` kept beside them, in order."""
    room = max(0, len(items) - len(memories))
    shown = {value_text(memory) for memory in memories}

    def worth(index: int) -> tuple[int, int]:
        item = items[index]
        if value_text(item) in shown:
            return (0, -index)
        holds = check.has_items and set(check.status([item]).values()) != {"missing"}
        return (2 if holds else 1, -index)

    kept = sorted(sorted(range(len(items)), key=worth, reverse=True)[:room])
    return [*memories, *(items[i] for i in kept)]
