"""Values of the decisive operation cut down for reading, keeping the part that matters in view.

A retrieved context or a prompt runs to thousands of characters; cutting it at the start would often
hide exactly the line the example is about. So a cut keeps the first mention of the gold answer or of
an evidence message id in view (with "…" where text was left out), and a long list keeps the items that
mention them besides its first ones, in their original order.
"""

from __future__ import annotations

from typing import Any

from ..attribution.model import Attribution
from ..eval import says_unanswerable
from ..graph import Case, VariableVersion
from ..graph.values import value_text
from .model import ValueSnippet

SNIPPET_CHARS = 280
LIST_ITEMS = 6


def focus_terms(case: Case, attribution: Attribution) -> list[str]:
    """What a reader looks for in the values: the gold answers, then the evidence message ids."""
    gold = [g for g in case.gold if g.strip() and not says_unanswerable(g)]
    evidence = [s.id.rsplit("@", 1)[0] for s in attribution.path if s.note.startswith("evidence")]
    return list(dict.fromkeys([*gold, *evidence, *case.evidence]))


def snippet(
    version: VariableVersion, value: Any, focus: list[str] | None = None, width: int = SNIPPET_CHARS
) -> ValueSnippet:
    """A version's value for reading: a list as items, one per line; else one line; deletions say so."""
    focus = focus or []
    if version.deleted:
        return ValueSnippet(id=version.id, category=version.category, text="(deleted)")
    if isinstance(value, list) and len(value) > 1:
        text, cut = _items(value, width // 2, focus)
    elif value is None:
        text, cut = "(no value)", False
    else:
        text, cut = line(value, width, focus)
    return ValueSnippet(id=version.id, category=version.category, text=text, truncated=cut)


def line(value: Any, width: int, focus: list[str] | None = None) -> tuple[str, bool]:
    """One line of a value; when too long, a window that keeps the first focus term in view."""
    text = " ".join(value_text(value).split())
    if len(text) <= width:
        return text, False
    size = f" ({len(text)} chars)"
    hit = _first_hit(text, focus or [])
    if hit is None or hit[0] + hit[1] <= width - 1:
        return text[: width - 1] + "…" + size, True
    start = max(0, min(hit[0] - width // 3, len(text) - (width - 2)))
    end = start + width - 2
    return "…" + text[start:end] + ("…" if end < len(text) else "") + size, True


def _items(items: list[Any], width: int, focus: list[str]) -> tuple[str, bool]:
    texts = [" ".join(value_text(item).split()) for item in items]
    hits = [i for i, t in enumerate(texts) if _first_hit(t, focus) is not None]
    keep = sorted(set(hits[:LIST_ITEMS]) | set(range(max(0, LIST_ITEMS - len(hits[:LIST_ITEMS])))))
    keep = [i for i in keep if i < len(items)]
    lines, cut, previous = [], len(keep) < len(items), -1
    for i in keep:
        if i > previous + 1:
            lines.append(f"… {i - previous - 1} item(s)")
        text, shortened = line(items[i], width, focus)
        lines.append(f"- {text}")
        cut = cut or shortened
        previous = i
    if previous < len(items) - 1:
        lines.append(f"… {len(items) - previous - 1} more item(s)")
    return "\n".join(lines), cut


def _first_hit(text: str, focus: list[str]) -> tuple[int, int] | None:
    """(position, length) of the earliest focus term in the text, case-insensitive."""
    lowered = text.lower()
    found = [(lowered.find(term.lower()), len(term)) for term in focus if term]
    found = [pair for pair in found if pair[0] >= 0]
    return min(found) if found else None
