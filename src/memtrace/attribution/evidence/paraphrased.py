"""Where a list item no turn states as worded comes from: the annotated turns that name part of it.

"animal shelter" said as "a dog shelter" states no item by the item's words, yet the annotated turn
naming "shelter" is where the dataset says the answer comes from, and a reader counts the item lost
when that turn is gone. Each such turn says the item on its own, so the item is lost only when every
one of them is gone (like an item said again), and the earliest loss of the last decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...graph import VariableVersion
from .words import content_stems, unplanned


def paraphrasing_turns(
    unstated: Sequence[str],
    annotated: Iterable[tuple[VariableVersion, frozenset[str]]],
    used: set[str],
    asked: frozenset[str],
) -> list[tuple[str, tuple[VariableVersion, ...]]]:
    """Per unstated item (in gold order), the annotated turns naming a word of it that the question
    does not ask with, when one of them states no item yet (`used` holds the ids of those that do);
    items no such turn names are left out."""
    annotated = list(annotated)
    taken = set(used)
    found = []
    for text in unstated:
        telling = content_stems(text) - asked
        naming = tuple(v for v, words in annotated if telling & unplanned(words))
        if naming and not {v.id for v in naming} <= taken:
            found.append((text, naming))
            taken |= {v.id for v in naming}
    return found
